// Turns on Restate, end to end: restate-server (npm binary), lash worker processes, the mock wire
// server and a shared SQLite store, all inside a private network namespace (`unshare -n`: the
// server's start-up version check cannot leave the machine). The scenarios run in
// test/cluster/scenario.ts, which prints one REPORT line; the assertions are here.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { restateServerBinary } from "../src/index.ts";

const scenario = join(import.meta.dirname, "cluster", "scenario.ts");

function why(): string | undefined {
  if (process.platform !== "linux") return "not Linux";
  if (!restateServerBinary()) return "the restate-server binary is not installed";
  const probe = spawnSync("unshare", ["-n", "sh", "-c", "ip link set lo up"], { encoding: "utf8" });
  if (probe.status !== 0)
    return `no private network namespace (unshare -n: ${probe.stderr.trim() || probe.error})`;
  return undefined;
}
const skip = why();
if (skip) console.log(`@lash/restate cluster tests skipped: ${skip}`);

interface View {
  readonly turnCount: number;
  readonly messages: readonly { readonly role: string; readonly text: string }[];
}

/** Runs one scenario in its own namespace and temp dir; resolves with its report. */
async function run(mode: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), "lash-restate-"));
  const child = spawn(
    "unshare",
    ["-n", "sh", "-c", `ip link set lo up && exec "${process.execPath}" "${scenario}" ${mode} "${dir}"`],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-6000);
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  rmSync(dir, { recursive: true, force: true });
  const line = out.split("\n").find((l) => l.startsWith("REPORT "));
  if (code !== 0 || !line) throw new Error(`scenario ${mode} failed (${code}): ${err}`);
  return JSON.parse(line.slice(7));
}

const roles = (v: View) => v.messages.map((m) => m.role);
const interrupted = (text: string) => text.includes("was interrupted");

describe.skipIf(skip !== undefined)("@lash/restate: turns as Restate invocations", () => {
  it("a tool-loop turn submitted through the ingress commits once; the same idempotency key runs nothing again", async () => {
    const r = (await run("basic")) as {
      reply: { outcome: string; text: string; headRevision: number };
      again: { text: string; headRevision: number };
      requestsAfter: number;
      requestsAfterAgain: number;
      counter: string[];
      view: View;
    };
    expect(r.reply).toMatchObject({ outcome: "finished", text: "done b1", headRevision: 1 });
    expect(r.again).toEqual(r.reply);
    expect(r.requestsAfter).toBe(2);
    expect(r.requestsAfterAgain).toBe(2);
    expect(r.counter).toEqual(["b1"]);
    expect(r.view.turnCount).toBe(1);
    expect(roles(r.view)).toEqual(["user", "assistant", "tool", "assistant"]);
  }, 60_000);

  it("SIGKILL while a non-idempotent tool runs: the retried invocation reports it interrupted, runs nothing twice", async () => {
    const r = (await run("interrupt")) as { ok: boolean; requests: number; counter: string[]; view: View };
    expect(r.ok).toBe(true);
    expect(r.counter).toEqual(["m1"]); // the tool ran once, in the killed worker
    expect(r.requests).toBe(2); // the first model call was not re-requested
    expect(r.view.turnCount).toBe(1);
    expect(roles(r.view)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(interrupted(r.view.messages[2]!.text)).toBe(true);
  }, 60_000);

  it("replay with changed code (a step's input differs between attempts) ends the invocation, not an endless retry", async () => {
    const r = (await run("mismatch")) as {
      ok: boolean;
      status: number;
      error: string;
      requests: number;
      counter: string[];
    };
    // the worker detects the envelope hash mismatch, kills the invocation (admin API) and throws a TerminalError
    expect(r.ok).toBe(false);
    expect(r.status).toBe(409);
    expect(r.error).toContain("killed");
    expect(r.requests).toBe(1); // the model was not asked again
    expect(r.counter).toEqual(["x1"]); // and the tool not run again
  }, 60_000);

  it("two workers behind one deployment, sessions × 2 turns, SIGKILL one mid-tool: every turn commits once, in order", async () => {
    const sessions = 4;
    const r = (await run("kill", { SESSIONS: String(sessions) })) as {
      ids: string[];
      replies: Record<string, { turnId: string; outcome: string }[]>;
      views: Record<string, View>;
      counter: string[];
      requestsAtKill: number;
      repeats: { label: string; first: number; again: number }[];
    };
    expect(r.ids).toHaveLength(sessions);
    // no completed tool attempt ran twice
    expect(new Set(r.counter).size).toBe(r.counter.length);
    r.ids.forEach((id, i) => {
      expect(r.replies[id]!.map((x) => [x.turnId, x.outcome])).toEqual([
        [`s${i}t1`, "finished"],
        [`s${i}t2`, "finished"],
      ]);
      const v = r.views[id]!;
      expect(v.turnCount).toBe(2);
      expect(roles(v)).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
      expect(v.messages[0]!.text).toContain(`s${i}t1`);
      expect(v.messages[4]!.text).toContain(`s${i}t2`);
      for (const [k, t] of [
        [2, 1],
        [6, 2],
      ] as const) {
        const result = v.messages[k]!.text;
        // each tool result: it ran (once) or it was cut off by the kill and reported interrupted
        if (!interrupted(result)) expect(r.counter.filter((c) => c === `s${i}t${t}`)).toHaveLength(1);
      }
    });
    // the tool the killed worker was running comes back interrupted
    expect(interrupted(r.views[r.ids[0]!]!.messages[2]!.text)).toBe(true);
    // model calls asked twice: only ones in flight when the worker died
    for (const rep of r.repeats) expect(rep.first).toBeLessThan(r.requestsAtKill);
  }, 120_000);
});
