// Commands backed by other packages: `lash export` / `lash import` (@lash/export), `lash trace` (@lash/trace).
import { SessionStore } from "@lash/core";
import type { MainIO } from "./io.ts";

export async function runExportCommand(
  verb: "export" | "import",
  argv: readonly string[],
  io: MainIO,
  cwdFlag?: string,
): Promise<number> {
  const { runExportCli } = await import("@lash/export");
  const { storeContext } = await import("./commands.ts");
  const ctx = await storeContext(io.env, cwdFlag);
  try {
    const store = await ctx.rt.runPromise(SessionStore);
    return await runExportCli([verb, ...argv], ioOf(io, ctx.settings.cwd), { store });
  } finally {
    await ctx.close();
  }
}

export async function runTraceCommand(argv: readonly string[], io: MainIO): Promise<number> {
  const { runTraceCli } = await import("@lash/trace");
  return runTraceCli(argv, ioOf(io, process.cwd()));
}

const ioOf = (io: MainIO, cwd: string) => ({
  stdout: (s: string) => {
    io.stdout.write(s);
  },
  stderr: (s: string) => {
    io.stderr.write(s);
  },
  cwd,
});
