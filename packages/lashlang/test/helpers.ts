import { type CellResult, type LashlangHost, LashlangState, type RunOptions, runCell } from "../src/index.ts";

export async function run(
  src: string,
  opts: RunOptions = {},
  host?: LashlangHost,
  state = new LashlangState(),
): Promise<CellResult> {
  return runCell(state, src, host, opts);
}

/** Finishes and returns the value, or throws with the rendered diagnostic. */
export async function value(src: string, opts: RunOptions = {}, host?: LashlangHost): Promise<unknown> {
  const r = await run(src, opts, host);
  if (r.outcome !== "finished") throw new Error(r.error?.rendered ?? `outcome ${r.outcome}`);
  return r.value;
}

export async function errorOf(src: string, opts: RunOptions = {}, host?: LashlangHost): Promise<string> {
  const r = await run(src, opts, host);
  if (r.outcome !== "error")
    throw new Error(`expected an error, got ${r.outcome} ${JSON.stringify(r.value)}`);
  return r.error!.message;
}
