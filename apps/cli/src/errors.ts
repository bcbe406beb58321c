/** Exit codes of the `lash` process. */
export const ExitCode = {
  ok: 0,
  /** The turn stopped (max turns, provider error, tool error …) or the command failed. */
  failed: 1,
  /** Bad arguments, bad config, no provider. */
  usage: 2,
  /** SIGINT / SIGTERM / SIGHUP: the turn was cancelled and what finished was committed. */
  interrupted: 130,
} as const;

/** An error the CLI reports as one message and an exit code (no stack trace). */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = ExitCode.failed) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string): CliError => new CliError(message, ExitCode.usage);

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === "object" && e !== null && "message" in e)
    return String((e as { message: unknown }).message);
  return String(e);
}

const STORE_ERRORS: ReadonlySet<string> = new Set(["StoreError", "StoreCorrupt"]);

/** A typed failure (a `Data.TaggedError`), also when it arrives wrapped in an Effect FiberFailure. */
export function taggedFailure(e: unknown): { readonly _tag: string; readonly message: string } | undefined {
  let v: unknown = e;
  const cause = (e as Record<symbol, unknown> | null)?.[Symbol.for("effect/Runtime/FiberFailure/Cause")];
  if (cause !== undefined) {
    const c = cause as { _tag?: string; error?: unknown; defect?: unknown };
    // a store error thrown where a node's payload is first read (decoded lazily, inside code that
    // did not expect it to fail) is still the store's message, not an internal error
    const storeDefect =
      c._tag === "Die" && STORE_ERRORS.has((c.defect as { _tag?: unknown } | null)?._tag as string);
    v = c._tag === "Fail" ? c.error : storeDefect ? c.defect : undefined;
  }
  const tag = (v as { _tag?: unknown } | null | undefined)?._tag;
  return typeof tag === "string" ? { _tag: tag, message: errorMessage(v) } : undefined;
}

/** What to do about a damaged database, for messages that report one. */
export function damageHint(failure: { readonly _tag: string; readonly message: string }): string {
  // nothing to recover from, or the message says it already
  if (/not an SQLite database|did not create|doctor --repair/.test(failure.message)) return "";
  return failure._tag === "StoreCorrupt" || /is damaged|malformed/.test(failure.message)
    ? "\nRun `lash doctor` to check the file and `lash doctor --repair` to recover its sessions into a new one (the damaged file is kept)."
    : "";
}
