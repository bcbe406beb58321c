// The process streams and environment a command runs against (tests pass their own).
// Its own module so that command files need not import main.ts, which imports them.
export interface MainIO {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly env: NodeJS.ProcessEnv;
}
