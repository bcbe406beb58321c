import {
  type ToolContext,
  type ToolDefinition,
  ToolFailure,
  type ToolOutput,
  type ToolPreview,
  type ToolPreviewContext,
} from "@lash/core";
import { Effect } from "effect";

/** A failure the model reads: what was wrong and how to fix it. */
export function invalid(message: string): ToolFailure {
  return new ToolFailure({ class: "invalidRequest", message, retry: "never" });
}

export function denied(message: string): ToolFailure {
  return new ToolFailure({ class: "permissionDenied", message, retry: "never" });
}

export function failure(message: string): ToolFailure {
  return new ToolFailure({ class: "execution", message, retry: "never" });
}

export function cancelled(message: string): ToolFailure {
  return new ToolFailure({ class: "cancelled", message, retry: "never" });
}

type Args = Record<string, unknown>;

export function asArgs(tool: string, args: unknown): Args {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw invalid(`${tool}: arguments must be a JSON object.`);
  }
  return args as Args;
}

export function requireString(tool: string, args: Args, key: string, opts?: { nonEmpty?: boolean }): string {
  const value = args[key];
  if (typeof value !== "string") {
    throw invalid(`${tool}: \`${key}\` is required and must be a string.`);
  }
  if ((opts?.nonEmpty ?? false) && value.length === 0) {
    throw invalid(`${tool}: \`${key}\` must not be empty.`);
  }
  return value;
}

export function optionalString(tool: string, args: Args, key: string): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalid(`${tool}: \`${key}\` must be a string when given.`);
  return value;
}

export function optionalInt(
  tool: string,
  args: Args,
  key: string,
  bounds: { min: number; max?: number },
): number | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw invalid(`${tool}: \`${key}\` must be an integer when given.`);
  }
  if (value < bounds.min || (bounds.max !== undefined && value > bounds.max)) {
    const range = bounds.max === undefined ? `>= ${bounds.min}` : `between ${bounds.min} and ${bounds.max}`;
    throw invalid(`${tool}: \`${key}\` must be ${range} (got ${value}).`);
  }
  return value;
}

export function optionalBoolean(tool: string, args: Args, key: string): boolean | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw invalid(`${tool}: \`${key}\` must be a boolean when given.`);
  return value;
}

/** Throws a `cancelled` failure when the signal is aborted. */
export function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) throw cancelled("The tool call was cancelled.");
}

/**
 * Like `defineTool` from `@lash/core`, but interrupting the Effect aborts the
 * signal the body sees (combined with `ctx.signal`), so long walks stop early.
 */
export function hostTool<A>(
  definition: Omit<ToolDefinition<A>, "execute"> & {
    readonly run: (args: A, context: ToolContext) => Promise<ToolOutput>;
  },
): ToolDefinition<A> {
  const { run, ...rest } = definition;
  return {
    ...rest,
    execute: (args, context) =>
      Effect.tryPromise({
        try: (interrupt) => run(args, { ...context, signal: AbortSignal.any([context.signal, interrupt]) }),
        catch: (error) => toFailure(error),
      }),
  };
}

export function toFailure(error: unknown): ToolFailure {
  if (error instanceof ToolFailure) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "EACCES" || code === "EPERM")
    return denied(`Permission denied by the operating system: ${message}`);
  if (code === "EISDIR") return invalid(`Expected a file but found a directory: ${message}`);
  if (code === "ENOTDIR") return invalid(`A parent of the path is not a directory: ${message}`);
  if (code === "ENAMETOOLONG")
    return invalid(
      `The path is too long for the file system (names up to 255 bytes, paths up to 4096): ${message}`,
    );
  return failure(message);
}

export function plural(n: number, word: string, pluralWord = `${word}s`): string {
  return `${n} ${n === 1 ? word : pluralWord}`;
}

/**
 * A tool's `preview` from a promise-returning function: thrown ToolFailures (the same
 * errors the tool would give) stay typed, other errors become one as in `hostTool`.
 */
export function previewOf<A>(
  fn: (args: A, context: ToolPreviewContext) => Promise<ToolPreview>,
): (args: A, context: ToolPreviewContext) => Effect.Effect<ToolPreview, ToolFailure> {
  return (args, context) =>
    Effect.tryPromise({ try: () => fn(args, context), catch: (error) => toFailure(error) });
}
