// A fresh process opening one session: `node open-worker.ts <db> <sessionId> <nodes> [<store module>]`.
// Imports @lash/core (or the given module exporting `openSqliteStore`; timed), opens the database, reads the session and its active path,
// touches every payload, and prints the timings as JSON. Used by run.ts.
import { resolve } from "node:path";

const [filename, sessionId, nodes, module] = process.argv.slice(2);
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const t0 = performance.now();
const c0 = cpu();
const { openSqliteStore } = (await import(module ? resolve(module) : "@lash/core")) as Pick<
  typeof import("@lash/core"),
  "openSqliteStore"
>;
const t1 = performance.now();
const c1 = cpu();
const opened = await openSqliteStore({ filename: filename! });
await opened.store.getSession(sessionId!);
const path = await opened.store.activePath(sessionId!);
const t2 = performance.now();
const c2 = cpu();
let parts = 0;
for (const n of path) parts += (n.payload as { parts: unknown[] }).parts.length;
const t3 = performance.now();
const c3 = cpu();
await opened.close();
if (path.length !== Number(nodes) || parts !== path.length)
  throw new Error(`read ${path.length} nodes (${parts} parts), expected ${nodes}`);
process.stdout.write(
  JSON.stringify({
    importMs: t1 - t0,
    importCpuMs: c1 - c0,
    openReadMs: t2 - t1,
    openReadCpuMs: c2 - c1,
    payloadsMs: t3 - t2,
    payloadsCpuMs: c3 - c2,
  }),
);
