// The shared set-up of the RLM process crash tests: the RLM crash test's worker (its counter lines
// stamped with the time) started in child processes, the mock servers and children closed after
// each test, and the store's own SQLite driver to read the journal a killed process left behind.
import type { ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { MockLlmServer } from "@lash/providers/testing";
import { afterEach } from "vitest";
import { startWorker, type WorkerRun } from "../../packages/core/test/crash/process.ts";

const worker = join(import.meta.dirname, "rlm-crash-worker.ts");

export const JournalDb = createRequire(join(import.meta.dirname, "../../packages/core/package.json"))(
  "better-sqlite3",
) as new (
  file: string,
  o: { readonly: boolean },
) => { prepare(sql: string): { all(): { key: string; outcome_json: string }[] }; close(): void };

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
