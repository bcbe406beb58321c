// `lash -p --approval-mode approve-all|reject-all|fail` (issue 17, acceptance 3, the -p half):
// a real `lash -p` process against the mock wire server, with a config policy that asks before
// `write_file` runs. approve-all runs it, reject-all denies it (the model's next request reads
// why), fail — the -p default — stops with exit 1 and a message naming the tool and the fix, and
// keeps the request so a later run with an answering mode resolves it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  chatMessages,
  jsonLines,
  lash,
  type Sandbox,
  sandbox,
  textOf,
} from "../../../test/integration/cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const writeCall = {
  toolCalls: [{ name: "write_file", arguments: { path: "note.txt", content: "hello\n" } }],
  usage: { input: 50, output: 10 },
};

async function setup(replies = [writeCall, { text: "done", usage: { input: 60, output: 5 } }]) {
  const b = await sandbox(replies);
  mkdirSync(b.home, { recursive: true });
  writeFileSync(
    join(b.home, "config.json"),
    JSON.stringify({ policy: { tools: { write_file: { approval: "always" } } } }),
  );
  return b;
}

/** The tool results the model was sent in request `i`. */
const toolResults = (b: Sandbox, i: number) =>
  chatMessages(b.server.requests[i]?.body)
    .filter((m) => m.role === "tool")
    .map((m) => textOf(m.content));

describe("lash -p --approval-mode", () => {
  it("approve-all: the call runs; stream-json carries the request and the answer", async () => {
    box = await setup();
    const r = await lash(
      ["-p", "write a note", "--approval-mode", "approve-all", "--output-format", "stream-json"],
      {
        env: box.env,
        cwd: box.cwd,
      },
    );
    expect(r.code).toBe(0);
    expect(readFileSync(join(box.cwd, "note.txt"), "utf8")).toBe("hello\n");
    const lines = jsonLines(r.stdout);
    const requested = lines.find((l) => l.type === "approvalRequested") as
      | { v: number; items: { tool: string; previewHash: string; layer: string }[] }
      | undefined;
    expect(requested?.v).toBe(1);
    expect(requested?.items.map((i) => i.tool)).toEqual(["write_file"]);
    expect(requested?.items[0]?.previewHash).toMatch(/^[0-9a-f]{64}$/);
    expect(lines.find((l) => l.type === "approvalResolved")).toMatchObject({
      by: "approve-all",
      replayed: false,
      decisions: [expect.objectContaining({ decision: "approve", tool: "write_file" })],
    });
    expect(lines.at(-1)).toMatchObject({ type: "result", outcome: "finished", text: "done" });
    // the decision is in the session's graph: `lash sessions show` lists it where it was made
    const show = await lash(["sessions", "show", String(lines.at(-1)?.sessionId)], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(
      /→ write_file .*\n\(approval: write_file approved by approve-all · policy: [^\n]*\)\n← write_file/,
    );
  });

  it("reject-all: nothing is written; the model's next request says denied, by whom and why", async () => {
    box = await setup();
    const r = await lash(["-p", "write a note", "--approval-mode", "reject-all"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("done\n");
    expect(existsSync(join(box.cwd, "note.txt"))).toBe(false);
    expect(r.stderr).toContain("[approval] write_file · denied by reject-all");
    const [result] = toolResults(box, 1);
    expect(result).toContain("Denied: write_file was not run; the approver (reject-all) denied it");
    expect(result).toContain("Do not retry the same call unchanged");
  });

  it("fail (the -p default): exit 1 naming the tool and the fix; a later run with an answering mode resolves the kept request", async () => {
    box = await setup();
    const r = await lash(["-p", "write a note"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(1);
    expect(existsSync(join(box.cwd, "note.txt"))).toBe(false);
    expect(r.stderr).toContain(
      "write_file needs an approval, and none could be had: lash -p does not prompt",
    );
    expect(r.stderr).toContain("--approval-mode approve-all");
    expect(r.stderr).toContain("--resume-pending --approval-mode approve-all");
    expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(box.server.requests).toHaveLength(1);

    // the request was kept: the cut-off turn finishes with an answer, without calling the model again for it
    const again = await lash(["-p", "--continue", "--resume-pending", "--approval-mode", "approve-all"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(again.code).toBe(0);
    expect(readFileSync(join(box.cwd, "note.txt"), "utf8")).toBe("hello\n");
    expect(again.stderr).toContain("[approval] write_file · approved by approve-all");
    expect(box.server.requests).toHaveLength(2);
  });

  it("json output of a failed approval: outcome failed with the message", async () => {
    box = await setup();
    const r = await lash(["-p", "write a note", "--approval-mode", "fail", "--output-format", "json"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.code).toBe(1);
    const [result] = jsonLines(r.stdout);
    expect(result).toMatchObject({ type: "result", outcome: "failed" });
    expect(String(result?.error)).toContain("write_file needs an approval");
  });

  it("bad values are usage errors (exit 2): an unknown mode, interactive without a terminal", async () => {
    box = await setup();
    const bad = await lash(["-p", "hi", "--approval-mode", "sometimes"], { env: box.env, cwd: box.cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '--approval-mode expects approve-all, reject-all, fail or interactive, got "sometimes"',
    );
    const interactive = await lash(["-p", "hi", "--approval-mode", "interactive"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(interactive.code).toBe(2);
    expect(interactive.stderr).toContain("--approval-mode interactive needs the interactive TUI");
    expect(box.server.requests).toHaveLength(0);
  });
});
