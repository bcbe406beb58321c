// `lash remote` against a real `lash serve` and the mock wire server: the -p surface on a daemon.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { jsonLines, lash, SANDBOX_POLICY, type Sandbox, type sandbox, start } from "./cli-support.ts";
import { serveTests } from "./serve-support.ts";

const t = serveTests();

interface Daemon {
  readonly url: string;
  readonly token: string;
  readonly box: Sandbox;
  remote(args: readonly string[], extraEnv?: NodeJS.ProcessEnv): ReturnType<typeof lash>;
}

/** `lash serve` with a token for alice, or `--no-auth` (`auth: false`: every caller is the local admin). */
async function daemon(replies: Parameters<typeof sandbox>[0], config?: object, auth = true): Promise<Daemon> {
  const box = await t.sandbox(replies);
  if (config) {
    mkdirSync(box.home, { recursive: true });
    writeFileSync(join(box.home, "config.json"), JSON.stringify(config));
  }
  let token = "";
  if (auth) {
    const created = await lash(["serve", "token", "create", "--principal", "alice"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(created.code, created.stderr).toBe(0);
    token = created.stdout.trim();
  }
  const { url } = await t.daemon(box, [], { auth });
  return {
    url,
    token,
    box,
    remote: (args, extraEnv = {}) =>
      lash(["remote", "--server", url, ...args], {
        env: { ...box.env, ...(token ? { LASH_SERVER_TOKEN: token } : {}), ...extraEnv },
        cwd: box.cwd,
      }),
  };
}

describe("lash remote", { timeout: 90_000 }, () => {
  it("-p prints the model's text and exits 0; --continue runs the next turn in the same session", async () => {
    const d = await daemon(
      [
        { text: "Hello from the daemon", textChunks: 3 },
        { text: "Second answer", textChunks: 2 },
      ],
      undefined,
      false,
    );
    const first = await d.remote(["-p", "say hello"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe("Hello from the daemon\n");

    const json = await d.remote([
      "-p",
      "again",
      "--output-format",
      "stream-json",
      "--continue",
      await sessionOf(d),
    ]);
    expect(json.code, json.stderr).toBe(0);
    const lines = jsonLines(json.stdout);
    expect(lines[0]).toMatchObject({ v: 1, type: "session", how: "continued" });
    const events = lines.slice(1, -1);
    expect(events.length).toBeGreaterThan(2);
    const seqs = events.map((e) => e.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(events.at(-1)).toMatchObject({ type: "runFinished" });
    expect(lines.at(-1)).toMatchObject({
      type: "result",
      outcome: "finished",
      text: "Second answer",
      state: "completed",
    });
    // the second turn saw the first: the model's second request carries both prompts
    const body = JSON.stringify(d.box.server.requests[1]?.body);
    expect(body).toContain("say hello");
    expect(body).toContain("Hello from the daemon");
  });

  it("kill -9 of the daemon mid-run: lash remote follows the restarted daemon and ends with the run", async () => {
    const box = await t.sandbox([
      { text: "one two three four", textChunks: 4, hangAfterChunks: 3 },
      { text: "one two three four", textChunks: 4 },
    ]);
    const state = ["--state", join(box.home, "serve.db")];
    const { url, proc: first } = await t.daemon(box, state);
    const remote = start(["remote", "--server", url, "-p", "count", "--output-format", "stream-json"], {
      env: box.env,
      cwd: box.cwd,
    });
    await remote.waitForLine((l) => l.includes('"type":"textDelta"') || l.startsWith("__exited__"));
    first.child.kill("SIGKILL");
    await first.done;
    await t.daemon(box, state, { port: Number(new URL(url).port) });
    const done = await remote.done;
    expect(done.code, done.stderr).toBe(0);
    const lines = jsonLines(done.stdout);
    expect(lines.at(-1)).toMatchObject({ type: "result", outcome: "finished", text: "one two three four" });
    const seqs = lines.filter((l) => typeof l.seq === "number").map((l) => l.seq as number);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(lines.some((l) => l.type === "runFinished")).toBe(true);
    // none missing: the same seqs as the run's whole stream read afresh from the daemon
    const runId = String(lines.at(-1)?.runId);
    const all = await (await fetch(`${url}/v1/runs/${runId}/events`)).text();
    expect(seqs).toEqual([...all.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])));
  });

  it("a bad token exits 2 with the daemon's message; no server exits 2 naming --server", async () => {
    const d = await daemon([]);
    const bad = await d.remote(["-p", "hi"], { LASH_SERVER_TOKEN: "not-a-token" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/lash remote: .*\[Unauthorized \w+\]/);
    const none = await lash(["remote", "-p", "hi"], { env: d.box.env, cwd: d.box.cwd });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--server");
  });

  it("an approval the run waits on: fail exits 1 naming it; `lash remote approve` decides it and the run goes on", async () => {
    const d = await daemon(
      [
        { toolCalls: [{ name: "write_file", arguments: { path: "out.txt", content: "approved\n" } }] },
        { text: "wrote it" },
      ],
      { policy: { ...SANDBOX_POLICY, tools: { write_file: { approval: "always" } } } },
    );
    const failed = await d.remote(["-p", "write the file", "--output-format", "json"]);
    expect(failed.code).toBe(1);
    const result = JSON.parse(failed.stdout.trim()) as { code: string; approvalId: string; error: string };
    expect(result.code).toBe("approval_pending");
    expect(result.error).toContain(`lash remote approve ${result.approvalId}`);
    expect(existsSync(join(d.box.cwd, "out.txt"))).toBe(false);

    const listed = await d.remote(["approvals"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(result.approvalId);
    expect(listed.stdout).toContain("write_file");

    const approved = await d.remote(["approve", result.approvalId]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(`approval ${result.approvalId}: approved`);
    // the run went on: follow the session's runs to its end through the daemon
    const session = await sessionOf(d);
    const runs = await fetchJson(d, `/v1/sessions/${session}/runs`);
    const runId = (runs as { runs: { id: string }[] }).runs[0]!.id;
    const finished = await followToEnd(d, runId);
    expect(finished).toContain("runFinished");
    expect(readFileSync(join(d.box.cwd, "out.txt"), "utf8")).toBe("approved\n");
  });

  it("--approval-mode reject-all denies through the API and the model reads the denial", async () => {
    const d = await daemon(
      [
        { toolCalls: [{ name: "write_file", arguments: { path: "no.txt", content: "x" } }] },
        { text: "ok, not writing" },
      ],
      { policy: { ...SANDBOX_POLICY, tools: { write_file: { approval: "always" } } } },
    );
    const r = await d.remote(["-p", "write", "--approval-mode", "reject-all"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("ok, not writing\n");
    expect(r.stderr).toContain("[approval] write_file · denied");
    expect(existsSync(join(d.box.cwd, "no.txt"))).toBe(false);
    expect(JSON.stringify(d.box.server.requests[1]?.body)).toContain(
      "denied by lash remote --approval-mode reject-all",
    );
  });
});

async function fetchJson(d: Daemon, path: string): Promise<unknown> {
  const res = await fetch(`${d.url}${path}`, {
    headers: d.token ? { authorization: `Bearer ${d.token}` } : {},
  });
  expect(res.status).toBe(200);
  return res.json();
}

/** The only session of the daemon. */
async function sessionOf(d: Daemon): Promise<string> {
  const { sessions } = (await fetchJson(d, "/v1/sessions")) as { sessions: { id: string }[] };
  expect(sessions).toHaveLength(1);
  return sessions[0]!.id;
}

/** The run's SSE stream read to its end (the daemon closes it after runFinished). */
async function followToEnd(d: Daemon, runId: string): Promise<string> {
  const res = await fetch(`${d.url}/v1/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${d.token}` },
  });
  return res.text();
}
