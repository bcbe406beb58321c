// `lash -p --mode rlm --rlm-var NAME=JSON|@FILE --rlm-vars-file PATH` (issue 21): a real `lash`
// child process against the mock wire server.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, jsonLines, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const systemOf = (body: unknown): string =>
  textOf(chatMessages(body).find((m) => m.role === "system")?.content);

describe("--rlm-var / --rlm-vars-file", () => {
  it("binds JSON values, a file's text and a vars file as read-only names the cell reads", async () => {
    box = await sandbox([
      {
        text: '<lashlang>\nfinish format("{} {} {} {}", cfg.n, len(notes), limit, cfg.path)\n</lashlang>\n',
      },
    ]);
    writeFileSync(join(box.cwd, "notes.txt"), "four");
    writeFileSync(join(box.cwd, "vars.json"), JSON.stringify({ limit: 9, cfg: { n: 0, path: "x" } }));
    const r = await lash(
      [
        "-p",
        "go",
        "--mode",
        "rlm",
        "--rlm-vars-file",
        "vars.json",
        "--rlm-var",
        'cfg={"n": 2, "path": "src"}',
        "--rlm-var",
        "notes=@notes.txt",
        "--output-format",
        "json",
      ],
      { env: box.env, cwd: box.cwd },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout)[0]).toMatchObject({ outcome: "finished", finalValue: "2 4 9 src" });
    const system = systemOf(box.server.requests[0]!.body);
    expect(system).toContain('- `cfg`: read-only record from the host: {"n":2,"path":"src"}');
    expect(system).toContain('- `notes`: read-only string from the host: "four"');
    expect(system).toContain("- `limit`: read-only number from the host: 9");
  });

  it("bad input is a usage error naming the problem and the fix; no model is called", async () => {
    box = await sandbox([]);
    const opts = { env: box.env, cwd: box.cwd };
    const bad = await lash(["-p", "go", "--mode", "rlm", "--rlm-var", "cfg={oops"], opts);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("invalid JSON for --rlm-var cfg=...");
    expect(bad.stderr).toContain(`--rlm-var cfg='"text"'`);
    const noEq = await lash(["-p", "go", "--mode", "rlm", "--rlm-var", "cfg"], opts);
    expect(noEq.stderr).toContain("expected NAME=JSON or NAME=@FILE");
    const reserved = await lash(["-p", "go", "--mode", "rlm", "--rlm-var", "history=1"], opts);
    expect(reserved.stderr).toContain("`history` is reserved");
    const standard = await lash(["-p", "go", "--rlm-var", "a=1"], opts);
    expect(standard.code).toBe(2);
    expect(standard.stderr).toContain("add --mode rlm");
    const missing = await lash(["-p", "go", "--mode", "rlm", "--rlm-var", "a=@nope.txt"], opts);
    expect(missing.stderr).toContain("cannot read nope.txt");
    expect(box.server.requests).toHaveLength(0);
  });
});

describe("the stream mask through lash -p (retry layer on, as the CLI runs it)", () => {
  it("stream-json shows only the prose; the connection is closed at the close tag", async () => {
    box = await sandbox([
      {
        textPieces: [
          "Checking.\n",
          "<lashlang>\n",
          "finish limit * 2\n",
          "</lashlang>\n",
          "NOT SENT",
          "tail",
        ],
        stallAfter: "</lashlang>",
      },
    ]);
    const r = await lash(
      ["-p", "go", "--mode", "rlm", "--rlm-var", "limit=21", "--output-format", "stream-json"],
      { env: box.env, cwd: box.cwd },
    );
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    const deltas = lines.filter((l) => l.type === "textDelta").map((l) => l.text);
    expect(deltas.join("")).toBe("Checking.\n");
    expect(lines.at(-1)).toMatchObject({ type: "result", finalValue: 42 });
    const closed = await box.server.waitForStreamClosed(0);
    expect(closed.closedByClient).toBe(true);
    expect(closed.eventsWritten).toBeLessThan(closed.eventsTotal);
  });
});
