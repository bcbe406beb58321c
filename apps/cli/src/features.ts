// Features other packages are still building: export, trace, the RLM mode. Each is looked up
// at run time so this CLI works (with a clear message) before they land.
import type { CliContext } from "./context.ts";
import { CliError, ExitCode } from "./errors.ts";

type AnyFn = (...args: never[]) => unknown;

async function exported(pkg: string, name: string): Promise<AnyFn | undefined> {
  try {
    const mod = (await import(pkg)) as Record<string, unknown>;
    const f = mod[name];
    return typeof f === "function" ? (f as AnyFn) : undefined;
  } catch {
    return undefined;
  }
}

export const notAvailable = (what: string, pkg: string): CliError =>
  new CliError(
    `lash: ${what} is not available yet in this build (${pkg} does not export it yet).`,
    ExitCode.usage,
  );

/** `lash export` / `/export`: delegates to `@lash/export` once it exists. */
export async function exportSession(
  _ctx: CliContext,
  _sessionId: string,
  _format: "html" | "json" | "md",
  _outPath?: string,
): Promise<string> {
  const f = await exported("@lash/export", "exportSession");
  if (!f) throw notAvailable("session export", "@lash/export");
  throw notAvailable("session export", "@lash/export");
}

export async function exportAvailable(): Promise<boolean> {
  return (await exported("@lash/export", "exportSession")) !== undefined;
}

export async function traceAvailable(): Promise<boolean> {
  return (await exported("@lash/trace", "traceSink")) !== undefined;
}

/** The RLM mode: needs a protocol driver and code executor from core / lashlang. */
export async function rlmAvailable(): Promise<boolean> {
  return (await exported("@lash/core", "rlmDriver")) !== undefined;
}
