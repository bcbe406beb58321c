// `lash serve --engine restate --store postgres://…` (issue 23, acceptance 4): two daemons on one
// Restate cluster; an SSE client of daemon B follows a turn that A's worker runs, through A's
// death and B's worker taking the turn over; a client cut off with A reconnects to B with
// `Last-Event-ID` and loses nothing. Everything runs inside a private network namespace
// (serve-restate-scenario.ts); the assertions are here. Also the flags' errors.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { restateServerBinary } from "@lash/restate";
import { PG_BIN } from "@lash/store-postgres/testing";
import { describe, expect, it } from "vitest";
import { lash, sandbox } from "./cli-support.ts";

const scenario = join(import.meta.dirname, "serve-restate-scenario.ts");

function why(): string | undefined {
  if (process.platform !== "linux") return "not Linux";
  if (!restateServerBinary()) return "the restate-server binary is not installed";
  if (!existsSync(join(PG_BIN, "pg_ctl"))) return `no Postgres binaries at ${PG_BIN} (LASH_PG_BIN)`;
  const probe = spawnSync("unshare", ["-n", "sh", "-c", "ip link set lo up"], { encoding: "utf8" });
  if (probe.status !== 0)
    return `no private network namespace (unshare -n: ${probe.stderr.trim() || probe.error})`;
  return undefined;
}
const skip = why();
if (skip) console.log(`lash serve --engine restate cluster test skipped: ${skip}`);

interface Ev {
  readonly id: number;
  readonly type: string;
  readonly runId: string;
  readonly data: Record<string, unknown>;
}

interface Report {
  readonly runId: string;
  readonly runState: string;
  readonly requestsAtKill: number;
  readonly requests: number;
  readonly followed: { readonly ended: boolean; readonly events: Ev[] };
  readonly cut: { readonly ended: boolean; readonly events: Ev[] };
  readonly resumed: { readonly lastId: number; readonly events: Ev[] };
  readonly full: Ev[];
  readonly requestsAfterSecond: number;
  readonly restarted: {
    readonly firstRun: {
      readonly state: string;
      readonly text?: string;
      readonly resumes: number;
      readonly lastSeq: number;
    };
    readonly third: { readonly id: string; readonly state: string; readonly text?: string };
    readonly requests: number;
  };
  readonly second: {
    readonly posted: {
      readonly id: string;
      readonly state: string;
      readonly text?: string;
      readonly lastSeq: number;
    };
    readonly run: { readonly state: string; readonly text?: string; readonly lastSeq: number };
    readonly stream: { readonly ended: boolean; readonly events: Ev[] };
  };
  readonly session: { readonly turnCount?: number };
  readonly logged: string[];
}

async function runScenario(): Promise<Report> {
  const dir = mkdtempSync(join(tmpdir(), "lash-serve-restate-"));
  const child = spawn(
    "unshare",
    ["-n", "sh", "-c", `ip link set lo up && exec "${process.execPath}" "${scenario}" "${dir}"`],
    { env: process.env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-8000);
  });
  // (the scenario bounds itself and stops what it started; a test timeout still ends it)
  const kill = () => child.exitCode === null && child.kill("SIGKILL");
  process.once("exit", kill);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  process.off("exit", kill);
  rmSync(dir, { recursive: true, force: true });
  const line = out.split("\n").find((l) => l.startsWith("REPORT "));
  if (code !== 0 || !line) throw new Error(`the scenario failed (${code}): ${err}`);
  return JSON.parse(line.slice(7)) as Report;
}

const ids = (events: readonly Ev[]) => events.map((e) => e.id);

describe.skipIf(skip !== undefined)("lash serve --engine restate: the daemon on a cluster", () => {
  it("a client of daemon B follows a turn through the death of A's worker; a client cut off with A reconnects to B with Last-Event-ID and loses nothing; A restarted attaches to its run and runs nothing again", async () => {
    const r = await runScenario();
    const full = r.full;
    const types = full.map((e) => e.type);
    // the whole stream: ids increase, each step once, the run from queued to finished
    expect(ids(full)).toEqual([...ids(full)].sort((x, y) => x - y));
    expect(new Set(ids(full)).size).toBe(full.length);
    expect(full.every((e) => e.runId === r.runId)).toBe(true);
    for (const once of [
      "runQueued",
      "runStarted",
      "turnStarted",
      "toolStarted",
      "toolCompleted",
      "turnFinished",
      "runFinished",
    ])
      expect(
        types.filter((t) => t === once),
        once,
      ).toHaveLength(1);
    expect(types[0]).toBe("runQueued");
    expect(types.at(-1)).toBe("runFinished");
    expect(full.filter((e) => e.type === "llmRequest").map((e) => e.data.iteration)).toEqual([0, 1]);
    expect(full.filter((e) => e.type === "llmResponse").map((e) => e.data.iteration)).toEqual([0, 1]);
    expect(
      full
        .filter((e) => e.type === "messages")
        .flatMap((e) => e.data.messages as { role: string }[])
        .map((m) => m.role),
    ).toEqual(["user", "assistant", "tool", "assistant"]);
    // the tool was cut off with A: B's worker reports it interrupted and asks the model again
    const tool = full.find((e) => e.type === "toolCompleted")!;
    expect(JSON.stringify(tool.data)).toContain("interrupted");
    expect(r.requestsAtKill).toBe(1);
    expect(r.requests).toBe(2);
    expect(full.at(-1)!.data).toMatchObject({ state: "completed", text: "taken over" });

    // client 1 (daemon B all along) received every event, in order, and stayed connected to the end
    expect(ids(r.followed.events)).toEqual(ids(full));
    // client 2 (daemon A) was cut off by the kill mid-turn, after the tool started
    expect(r.cut.ended).toBe(false);
    expect(r.cut.events.map((e) => e.type)).toContain("toolStarted");
    expect(r.cut.events.map((e) => e.type)).not.toContain("turnFinished");
    // its reconnect to B with Last-Event-ID: exactly the rest, none lost, none twice
    expect(r.resumed.lastId).toBe(r.cut.events.at(-1)!.id);
    expect([...ids(r.cut.events), ...ids(r.resumed.events)]).toEqual(ids(full));
    expect(r.resumed.events.map((e) => e.type)).toContain("turnFinished");

    // the next turn, posted to B with ?wait=true: the same API (the run's record, its own stream)
    expect(r.second.posted).toMatchObject({ state: "completed", text: "second turn" });
    expect(r.second.run).toMatchObject({ state: "completed", text: "second turn" });
    expect(r.requestsAfterSecond).toBe(3);
    const own = r.second.stream.events;
    expect(r.second.stream.ended).toBe(true); // a run's stream ends after its runFinished
    expect(own.every((e) => e.runId === r.second.posted.id)).toBe(true);
    expect(own[0]!.type).toBe("runQueued");
    expect(own.at(-1)!.type).toBe("runFinished");
    expect(own[0]!.id).toBeGreaterThan(full.at(-1)!.id);
    // a run's lastSeq is its last event's id in the shared log (what a client compares its cursor with)
    expect(r.second.run.lastSeq).toBe(own.at(-1)!.id);
    expect(r.second.posted.lastSeq).toBe(own.at(-1)!.id);
    expect(ids(own)).toEqual([...ids(own)].sort((x, y) => x - y));
    // daemon A restarted: it attached to its cut-off run again and recorded how B finished it,
    // without running anything again (one more model call: the third turn's)
    expect(r.restarted.firstRun).toMatchObject({ state: "completed", text: "taken over", resumes: 1 });
    expect(r.restarted.firstRun.lastSeq).toBe(full.at(-1)!.id);
    expect(r.restarted.third).toMatchObject({ state: "completed", text: "third turn" });
    expect(r.restarted.requests).toBe(4);
    expect(r.session.turnCount).toBe(3);
    // the shared log holds exactly the events the streams delivered: nothing twice past their ends
    const third = r.logged.slice(full.length + own.length);
    expect(r.logged.slice(0, full.length + own.length)).toEqual([...types, ...own.map((e) => e.type)]);
    expect(third[0]).toBe("runQueued");
    expect(third.at(-1)).toBe("runFinished");
    expect(third.filter((t) => t === "runFinished")).toHaveLength(1);
  }, 180_000);
});

describe("lash serve --engine: bad combinations are refused with the fix", () => {
  it("an unknown engine, --engine restate without a shared store or an ingress, restate flags without the engine", async () => {
    const sb = await sandbox();
    try {
      const run = (args: string[]) =>
        lash(["serve", "--port", "0", "--no-auth", ...args], { env: sb.env, cwd: sb.cwd });
      const unknown = await run(["--engine", "temporal"]);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('unknown engine "temporal"; --engine takes local or restate');
      const noStore = await run(["--engine", "restate", "--restate-ingress", "http://127.0.0.1:8080"]);
      expect(noStore.code).toBe(2);
      expect(noStore.stderr).toContain("--store postgres://");
      const noIngress = await run(["--engine", "restate", "--store", "postgres://u@127.0.0.1:1/db"]);
      expect(noIngress.code).toBe(2);
      expect(noIngress.stderr).toContain("--restate-ingress http://");
      const stray = await run(["--restate-ingress", "http://127.0.0.1:8080"]);
      expect(stray.code).toBe(2);
      expect(stray.stderr).toContain("--restate-ingress only apply with --engine restate");
      // config serve.engine: the same check (a flag wins)
      mkdirSync(sb.home, { recursive: true });
      writeFileSync(join(sb.home, "config.json"), JSON.stringify({ serve: { engine: "restate" } }));
      const fromConfig = await run([]);
      expect(fromConfig.code).toBe(2);
      expect(fromConfig.stderr).toContain("--store postgres://");
      writeFileSync(join(sb.home, "config.json"), JSON.stringify({ serve: { engine: "nomad" } }));
      const badConfig = await run([]);
      expect(badConfig.code).toBe(2);
      expect(badConfig.stderr).toContain('"local" or "restate"');
      const help = await lash(["serve", "--help"], { env: sb.env, cwd: sb.cwd });
      for (const flag of [
        "--engine local|restate",
        "--restate-ingress",
        "--restate-admin",
        "--restate-worker-port",
        "--restate-deployment",
      ])
        expect(help.stdout).toContain(flag);
    } finally {
      await sb.cleanup();
    }
  }, 60_000);
});
