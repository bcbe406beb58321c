// The shared set-up of the RLM process crash tests: the RLM crash test's worker (its counter lines
// stamped with the time) started in child processes, the mock servers and children closed after
// each test, and the store's own SQLite driver to read the journal a killed process left behind.
import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MockLlmServer } from "@lash/providers/testing";
import { afterEach } from "vitest";
import { startWorker, type WorkerRun } from "../../packages/core/test/crash/process.ts";

const worker = join(import.meta.dirname, "rlm-crash-worker.ts");

/**
 * The journal entries of the turns in flight in database `db`, as a crash left them: the lines of
 * its turn files (`<db>.turns/<session>.<turn>.jsonl`, store/journal-file.ts), read without opening
 * the store; a line cut off by the kill is skipped, as the store skips it. A later entry of a key
 * replaces the earlier one.
 */
export function journalRows(db: string): { key: string; outcome_json: string }[] {
  const dir = `${db}.turns`;
  const byKey = new Map<string, { key: string; outcome_json: string }>();
  for (const f of existsSync(dir) ? readdirSync(dir) : [])
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      let batch: { key: string; outcome?: unknown }[];
      try {
        batch = JSON.parse(line);
      } catch {
        continue;
      }
      for (const e of batch)
        byKey.set(e.key, { key: e.key, outcome_json: JSON.stringify(e.outcome ?? null) });
    }
  return [...byKey.values()];
}

/** Registers the clean-up; `start` runs the worker with `turnText` as the turn's input. */
export function processCrashRig(turnText: string): {
  readonly servers: MockLlmServer[];
  readonly start: (args: string[], env?: Record<string, string>) => WorkerRun;
} {
  const servers: MockLlmServer[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
    for (const s of servers.splice(0)) await s.close();
  });
  return {
    servers,
    start: (args, env = {}) =>
      startWorker(worker, args, { env: { STAMP: "1", TURN_TEXT: turnText, ...env }, track: children }),
  };
}
