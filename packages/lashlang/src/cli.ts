export interface CliIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}
export async function runLashlangCli(_argv: string[], _io: CliIO): Promise<number> {
  return 0;
}
