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
