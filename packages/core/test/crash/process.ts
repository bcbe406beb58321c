// A worker process for crash tests: spawn it, wait for the lines it announces
// on stdout, kill it. Shared by the core, RLM and subagent crash tests.
import { type ChildProcess, spawn } from "node:child_process";

export interface WorkerRun {
  readonly child: ChildProcess;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** Resolves with the first stdout line starting with `prefix`; rejects (with stderr) if the worker exits first. */
  waitFor(prefix: string): Promise<string>;
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
}

/** Starts `node <worker> ...args`; the child is pushed to `track` so an afterEach can kill leftovers. */
export function startWorker(
  worker: string,
  args: readonly string[],
  options: { readonly env?: Record<string, string>; readonly track: ChildProcess[] },
): WorkerRun {
  const child = spawn(process.execPath, [worker, ...args], {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  options.track.push(child);
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (line: string) => void }[] = [];
  let buf = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (line.startsWith(w.prefix)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    exited,
    waitFor: (prefix) => {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ prefix, resolve });
        void exited.then(({ code }) =>
          reject(new Error(`worker exited (${code}) before "${prefix}"; stderr: ${stderr}`)),
        );
      });
    },
  };
}

/** SIGKILL and wait until the process is gone. */
export async function killWorker(run: WorkerRun): Promise<void> {
  run.child.kill("SIGKILL");
  await run.exited;
}
