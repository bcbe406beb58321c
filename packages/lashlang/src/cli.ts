/**
 * `lash lashlang run <file|-> [--json]` and `lash lashlang repl`, mountable by the CLI in one line:
 * `runLashlangCli(argv, { stdin, stdout, stderr })` resolves to the exit code.
 * The REPL reads lines; a cell ends at a blank line, or as soon as the text so far parses.
 */
import { readFile } from "node:fs/promises";
import { LashlangSession, LashlangState, parseCell, renderPrint, runCell } from "./runner.ts";
import { fromJson } from "./values.ts";

export interface CliIO {
  stdin: NodeJS.ReadableStream;
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

const USAGE = "usage: lash lashlang run <file|-> [--json] [--step-budget N]\n       lash lashlang repl\n";

async function readAll(s: NodeJS.ReadableStream): Promise<string> {
  let out = "";
  for await (const chunk of s)
    out += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
  return out;
}

export async function runLashlangCli(argv: string[], io: CliIO): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === "run") {
    const json = rest.includes("--json");
    const bi = rest.indexOf("--step-budget");
    const inline = rest.find((a) => a.startsWith("--step-budget="));
    const rawBudget =
      inline !== undefined ? inline.slice("--step-budget=".length) : bi >= 0 ? rest[bi + 1] : undefined;
    const stepBudget = rawBudget !== undefined ? Number(rawBudget) : undefined;
    if ((bi >= 0 || inline !== undefined) && !(Number.isSafeInteger(stepBudget) && stepBudget! > 0)) {
      io.stderr.write(
        `error: --step-budget expects a positive integer (steps per cell), got ${rawBudget === undefined ? "nothing" : `"${rawBudget}"`}\n${USAGE}`,
      );
      return 2;
    }
    const file = rest.filter((a, i) => !a.startsWith("--") && (bi < 0 || i !== bi + 1))[0];
    if (file === undefined) {
      io.stderr.write(USAGE);
      return 2;
    }
    let source: string;
    try {
      source = file === "-" ? await readAll(io.stdin) : await readFile(file, "utf8");
    } catch (e) {
      io.stderr.write(`error: cannot read ${file}: ${(e as Error).message}\n`);
      return 2;
    }
    const r = await runCell(new LashlangState(), source, undefined, stepBudget ? { stepBudget } : {});
    if (json) {
      const out: Record<string, unknown> = { outcome: r.outcome, value: r.value ?? null, prints: r.prints };
      if (r.error)
        out.error = {
          message: r.error.message,
          line: r.error.line,
          column: r.error.column,
          rendered: r.error.rendered,
        };
      io.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      for (const p of r.printed) io.stdout.write(`${p}\n`);
      if (r.outcome === "finished") io.stdout.write(`${renderPrint(fromJson(r.value ?? null))}\n`);
      if (r.error) io.stderr.write(`${r.error.rendered}\n`);
    }
    return r.outcome === "error" ? 1 : 0;
  }
  if (cmd === "repl") {
    const session = new LashlangSession({
      host: { call: async (c) => ({ ok: false, error: `unknown tool: ${c.module}.${c.operation}` }) },
    });
    let buffer = "";
    let failed = false;
    const flush = async (): Promise<void> => {
      if (buffer.trim() === "") {
        buffer = "";
        return;
      }
      const r = await session.run(buffer);
      buffer = "";
      for (const p of r.printed) io.stdout.write(`${p}\n`);
      if (r.outcome === "finished") io.stdout.write(`=> ${renderPrint(fromJson(r.value ?? null))}\n`);
      if (r.error) {
        failed = true;
        io.stderr.write(`${r.error.rendered}\n`);
      }
    };
    const text = io.stdin;
    let pending = "";
    for await (const chunk of text) {
      pending += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
      let nl = pending.indexOf("\n");
      while (nl >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.trim() === "") await flush();
        else {
          buffer += `${line}\n`;
          if (parseCell(buffer).ok) await flush();
        }
        nl = pending.indexOf("\n");
      }
    }
    if (pending.trim() !== "") buffer += pending;
    await flush();
    void failed;
    return 0;
  }
  io.stderr.write(USAGE);
  return cmd === undefined || cmd === "--help" || cmd === "help" ? 0 : 2;
}
