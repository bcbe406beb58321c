// A fresh process resuming one session through the runtime:
// `node open-worker.ts <db> <sessionId> <nodes> [<@lash/core entry of another build>]`.
// Imports @lash/core (timed), then createLash over the SqliteStore file, session info and
// readView (the settled transcript), and prints the timings as JSON. Used by run.ts.
import { resolve } from "node:path";
import type { LlmProvider } from "@lash/sansio";

const [filename, sessionId, nodes, entry] = process.argv.slice(2);
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const t0 = performance.now();
const c0 = cpu();
const core = (await import(entry ? resolve(entry) : "@lash/core")) as typeof import("@lash/core");
const t1 = performance.now();
const c1 = cpu();
const idle: LlmProvider = {
  name: "idle",
  stream: () => {
    throw new Error("the open benchmark calls no model");
  },
};
const lash = core.createLash({ store: core.SqliteStore.layer({ filename: filename! }), provider: idle });
const session = lash.session(sessionId!);
await session.info();
const view = await session.readView();
const t2 = performance.now();
const c2 = cpu();
await lash.close();
if (view.length < Number(nodes)) throw new Error(`read ${view.length} messages, expected ${nodes}`);
process.stdout.write(
  JSON.stringify({ importMs: t1 - t0, importCpuMs: c1 - c0, openReadMs: t2 - t1, openReadCpuMs: c2 - c1 }),
);
