// Turns on Restate, end to end: restate-server (npm binary), lash worker processes, the mock wire
// server and a shared store — one Postgres 15 (started inside the namespace by the scenario) or a
// SQLite file — all inside a private network namespace (`unshare -n`: the server's start-up
// version check cannot leave the machine). The scenarios run in test/cluster/scenario.ts, which
// writes a report file; the assertions are here. The 100-session test takes ~30 s here.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresUnavailable } from "@lash/store-postgres/testing";
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
else if (postgresUnavailable)
  console.log(`@lash/restate cluster tests on Postgres skipped: ${postgresUnavailable}`);
const skipPg = skip ?? postgresUnavailable;
const PG = { STORE: "postgres" };

interface View {
  readonly turnCount: number;
  readonly messages: readonly { readonly role: string; readonly text: string }[];
}

/** Runs one scenario in its own namespace and temp dir; resolves with its report. */
async function run<R = Record<string, unknown>>(mode: string, env: Record<string, string> = {}): Promise<R> {
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
  const done = out.split("\n").some((l) => l.startsWith("REPORT "));
  const report = done && code === 0 ? readFileSync(join(dir, "report.json"), "utf8") : undefined;
  rmSync(dir, { recursive: true, force: true });
  if (!report) throw new Error(`scenario ${mode} failed (${code}): ${err}`);
  return JSON.parse(report) as R;
}

const roles = (v: View) => v.messages.map((m) => m.role);
const interrupted = (text: string) => text.includes("was interrupted");

interface ClusterReport {
  ids: string[];
  replies: Record<string, { turnId: string; outcome: string; text: string; alreadyCommitted: boolean }[]>;
  views: Record<string, View>;
  counter: string[];
  victim: string;
  /** Requests received once the killed worker had exited (every request it made is below this index). */
  requestsAtKill: number;
  requests: number;
  byWorker: { A: number; B: number };
  repeats: {
    label: string;
    copies: number;
    first: number;
    firstWorker: string;
    again: { index: number; worker: string }[];
  }[];
  seconds: number;
  graph?: {
    nodes: { session_id: string; turn_id: string; n: number; first: number; last: number }[];
    usage: { session_id: string; turn_id: string; n: number }[];
    commits: { session_id: string; turn_id: string; revision: number }[];
    sessions: { id: string; revision: number; turns: number }[];
  };
}

/** Every turn committed exactly once and in order per session: the views, and (Postgres) the rows. */
function expectEachTurnOnce(r: ClusterReport, sessions: number) {
  expect(r.ids).toHaveLength(sessions);
  // no completed tool attempt ran twice (the side-effect counter file both workers append to)
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
      // each tool result: it ran (once) or it was cut off by the kill and reported interrupted
      if (!interrupted(v.messages[k]!.text))
        expect(r.counter.filter((c) => c === `s${i}t${t}`)).toHaveLength(1);
    }
  });
  if (!r.graph) return;
  // the graph as Postgres holds it: per session 2 stamps (revisions 1, 2), 4 nodes and 1 usage row per
  // turn, the first turn's nodes all before the second's — nothing written twice, nothing reordered
  const g = r.graph;
  expect(g.sessions.map((x) => [x.revision, x.turns])).toEqual(r.ids.map(() => [2, 2]));
  expect(g.commits).toHaveLength(2 * sessions);
  expect(g.nodes).toHaveLength(2 * sessions);
  expect(g.usage).toHaveLength(2 * sessions);
  r.ids.forEach((id, i) => {
    expect(g.commits.filter((c) => c.session_id === id).map((c) => [c.turn_id, c.revision])).toEqual([
      [`s${i}t1`, 1],
      [`s${i}t2`, 2],
    ]);
    const [t1, t2] = [`s${i}t1`, `s${i}t2`].map(
      (t) => g.nodes.find((n) => n.session_id === id && n.turn_id === t)!,
    );
    expect([t1!.n, t2!.n]).toEqual([4, 4]);
    expect(t1!.last).toBeLessThan(t2!.first);
    expect(g.usage.filter((u) => u.session_id === id).map((u) => u.n)).toEqual([1, 1]);
  });
}

describe.skipIf(skip !== undefined)("@lash/restate: turns as Restate invocations", () => {
  it.skipIf(skipPg !== undefined)(
    "a tool-loop turn submitted through the ingress commits once; the same idempotency key runs nothing again (Postgres)",
    async () => {
      const r = (await run("basic", PG)) as {
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
    },
    60_000,
  );

  it.skipIf(skipPg !== undefined)(
    "SIGKILL while a non-idempotent tool runs: the retried invocation reports it interrupted, runs nothing twice (Postgres)",
    async () => {
      const r = (await run("interrupt", PG)) as {
        ok: boolean;
        requests: number;
        counter: string[];
        view: View;
      };
      expect(r.ok).toBe(true);
      expect(r.counter).toEqual(["m1"]); // the tool ran once, in the killed worker
      expect(r.requests).toBe(2); // the first model call was not re-requested
      expect(r.view.turnCount).toBe(1);
      expect(roles(r.view)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect(interrupted(r.view.messages[2]!.text)).toBe(true);
    },
    60_000,
  );

  for (const store of ["postgres", "sqlite"] as const)
    it.skipIf(store === "postgres" && skipPg !== undefined)(
      `replay with changed code (a step's input differs between attempts) ends the invocation, not an endless retry (${store})`,
      async () => {
        const r = (await run("mismatch", { STORE: store })) as {
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
      },
      60_000,
    );

  it.skipIf(skipPg !== undefined)(
    "an RLM turn: SIGKILL during the cell's second tool call, a process mid-sleep; the survivor finishes, the first call ran once, the sleeper woke once after its deadline (Postgres)",
    async () => {
      const r = (await run("rlm", PG)) as {
        ok: boolean;
        reply?: { outcome: string; text: string; headRevision: number };
        error: string;
        requests: number;
        counterAtKill: string[];
        counter: string[];
        steps: { A: string[]; B: string[] };
        view: View;
      };
      const parse = (l: string) => {
        const [label, at, worker] = l.split("@");
        return { label, at: Number(at), worker };
      };
      expect(r.error).toBe("");
      expect(r.ok).toBe(true);
      expect(r.reply).toMatchObject({ outcome: "finished", headRevision: 1 });
      // killed in the second call (r2), the sleeper still asleep
      expect(r.counterAtKill.map(parse).map((c) => [c.label, c.worker])).toEqual([
        ["r1", "A"],
        ["r2", "A"],
      ]);
      const after = r.counter.map(parse);
      // the first call (not idempotent, completed before the kill) ran once; the cut-off second one
      // (idempotent) ran again on B; the sleeper woke once, on B
      expect(after.map((c) => [c.label, c.worker])).toEqual([
        ["r1", "A"],
        ["r2", "A"],
        ["r2", "B"],
        ["woke", "B"],
      ]);
      // the sleep began after r1 completed: its wake-up time is at least 3 s after r1's stamp
      expect(after[3]!.at).toBeGreaterThanOrEqual(after[0]!.at + 3000);
      // the wake-up time was computed once, on A, before the kill; B read it from Restate's journal
      // (and waited only for what was left of it) instead of starting the 3 s again
      const sleeps = (steps: string[]) => steps.filter((x) => x.includes(":sleep:"));
      expect(sleeps(r.steps.A)).toEqual([expect.stringMatching(/^ran .*process:sleeper.*:sleep:/)]);
      expect(sleeps(r.steps.B)).toEqual([expect.stringMatching(/^replayed .*process:sleeper.*:sleep:/)]);
      // on B, r1 came from the journal; r2 (cut off) ran again under its next name
      expect(
        r.steps.B.filter((x) => x.startsWith("ran ") && x.includes("side.bump") && !x.includes("sleeper")),
      ).toEqual([]);
      expect(
        r.steps.B.some((x) => x.startsWith("ran ") && x.includes("side.hang") && x.includes(":again1")),
      ).toBe(true);
      // the model was asked once: the cell's step came from Restate's journal on B
      expect(r.requests).toBe(1);
      expect(r.view.turnCount).toBe(1);
      const final = r.view.messages.at(-1)!.text;
      expect(final).toContain("bump r1");
      expect(final).toContain("hang r2");
      expect(final).toContain("bump woke");
    },
    90_000,
  );

  it("two workers on one SQLite file, 4 sessions × 2 turns, SIGKILL one mid-tool: every turn commits once, in order", async () => {
    const sessions = 4;
    const r = await run<ClusterReport>("kill", { SESSIONS: String(sessions) });
    expectEachTurnOnce(r, sessions);
    expect(interrupted(r.views[r.ids[0]!]!.messages[2]!.text)).toBe(true);
    for (const rep of r.repeats) expect(rep.first).toBeLessThan(r.requestsAtKill);
  }, 120_000);

  it.skipIf(skipPg !== undefined)(
    "acceptance 2: Postgres, restate-server, two workers behind one deployment; 100 sessions × 2 turns; SIGKILL one worker mid-run",
    async () => {
      const sessions = 100;
      const r = await run<ClusterReport>("kill", { ...PG, SESSIONS: String(sessions), MODEL_CHUNK_MS: "20" });
      console.log(
        `100 sessions × 2 turns on 2 workers: ${r.seconds.toFixed(1)} s; worker ${r.victim} dead by request ${r.requestsAtKill}; ` +
          `model requests ${r.requests} (A ${r.byWorker.A}, B ${r.byWorker.B}), repeated ${r.repeats.length}`,
      );
      // both workers served turns (the proxy spreads the invocations)
      expect(r.byWorker.A).toBeGreaterThan(0);
      expect(r.byWorker.B).toBeGreaterThan(0);
      expectEachTurnOnce(r, sessions);
      // the non-idempotent tool the killed worker was running comes back interrupted
      expect(interrupted(r.views[r.ids[0]!]!.messages[2]!.text)).toBe(true);
      // model calls asked again: only ones the killed worker had asked before the kill, each at most
      // once more, by the surviving worker; every other call was asked exactly once
      for (const rep of r.repeats) {
        expect(rep.copies).toBe(2);
        expect(rep.firstWorker).toBe(r.victim);
        expect(rep.first).toBeLessThan(r.requestsAtKill);
        expect(rep.again[0]!.worker).not.toBe(r.victim);
      }
      expect(r.requests).toBe(4 * sessions + r.repeats.length);
    },
    180_000,
  );

  it.skipIf(skipPg !== undefined)(
    "kill right after a commit (before the invocation answers): the retry answers from the stored commit, nothing is written twice (Postgres)",
    async () => {
      const sessions = 10;
      const r = await run<ClusterReport>("commit", { ...PG, SESSIONS: String(sessions) });
      expectEachTurnOnce(r, sessions);
      // the killed worker had committed s3t1; the retried invocation replayed its steps and found the stamp
      expect(r.replies[r.ids[3]!]![0]).toMatchObject({
        turnId: "s3t1",
        text: "done s3t1",
        alreadyCommitted: true,
      });
      // nothing completed ran again: model calls asked again only ones the killed worker had in flight
      for (const rep of r.repeats) {
        expect(rep.copies).toBe(2);
        expect(rep.firstWorker).toBe(r.victim);
        expect(rep.first).toBeLessThan(r.requestsAtKill);
      }
      expect(r.requests).toBe(4 * sessions + r.repeats.length);
      // the model was never asked about s3t1 again
      expect(r.repeats.filter((x) => x.label === "s3t1")).toEqual([]);
    },
    120_000,
  );
});
