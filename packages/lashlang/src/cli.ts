/**
 * `lash lashlang run …` and `lash lashlang repl`, mountable by the CLI in one line:
 * `runLashlangCli(argv, { stdin, stdout, stderr })` resolves to the exit code.
 *
 * `run` takes one or more cells (files, `-` for stdin, `--cell FILE` repeated; a line
 * `// --- cell ---` splits a file into cells), runs them in order against one state, and accepts what
 * the conformance corpus needs: initial globals (`--globals`), a fixture host (`--host`), a check mode
 * and a snapshot round trip between cells. `run --corpus cases.jsonl` runs every case of a corpus and
 * judges it against its expectations.
 * The REPL reads lines; a cell ends at a blank line, or as soon as the text so far parses.
 */
import { readFile } from "node:fs/promises";
import { type CellRun, type CheckMode, judgeCase, parseCorpus, runCase, runCells } from "./corpus.ts";
import type { FixtureHost } from "./fixture-host.ts";
import { LashlangSession, parseCell, renderPrint } from "./runner.ts";
import { fromJson, type Json } from "./values.ts";

export interface CliIO {
  stdin: NodeJS.ReadableStream;
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

const USAGE = `usage: lash lashlang run <file|-> [<file> …] [--cell FILE]… [options]
       lash lashlang run --corpus cases.jsonl [--json]
       lash lashlang repl

run options:
  --cell FILE               one more cell (repeatable); a line "// --- cell ---" also splits a file into cells
  --globals FILE.json       initial globals: {"name": JSON value, …}
  --host FILE.json          a fixture host: {"ops": {"mod.op": OP}, "processes": …, "projected": …}
                            (the conformance corpus's vocabulary; enables processes/sleep/signals in the checker)

Processes: \`process\` declarations run as concurrent background bodies (\`start\`, \`await\`, \`cancel\`,
\`yield\`, \`sleep for|until\`, \`wait_signal\` / \`signal_run\`), unless the --host fixture answers
\`start\` itself ("processes": {"style": "direct"|"handle_record", …}). Timers are wall-clock (not
durable here); a cell ends when the processes it started have ended, so await handles in that cell.
  --check strict|fallback|off|parse-only
                            strict (default): a check error is the result; fallback: run unchecked when the
                            check fails and the cell has no \`start\`; off: never check; parse-only: never run
  --snapshot-between-cells  restore the state from its snapshot JSON before each later cell
  --json                    one JSON object per cell: {outcome, value, prints, error?}
  --step-budget N           steps per cell (default 10,000,000)
  --memory-budget MIB       MiB of values a cell may allocate (default 256)
  --corpus FILE.jsonl       run every case of a conformance corpus; exit 1 if any fails
`;

/** A line that splits one file into cells. */
export const CELL_SEPARATOR = /^[ \t]*\/\/[ \t]*---[ \t]*cell[ \t]*---[ \t]*$/m;

async function readAll(s: NodeJS.ReadableStream): Promise<string> {
  let out = "";
  for await (const chunk of s)
    out += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
  return out;
}

class UsageError extends Error {}

interface RunArgs {
  files: { path: string; split: boolean }[];
  json: boolean;
  globals?: string;
  host?: string;
  corpus?: string;
  mode: CheckMode;
  snapshotBetweenCells: boolean;
  stepBudget?: number;
  memoryBudget?: number;
}

const CHECK_MODES: readonly CheckMode[] = ["strict", "fallback", "off", "parse-only"];

function parseRunArgs(argv: readonly string[]): RunArgs {
  const out: RunArgs = { files: [], json: false, mode: "strict", snapshotBetweenCells: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "-" || !a.startsWith("--")) {
      out.files.push({ path: a, split: true });
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq >= 0 ? a.slice(0, eq) : a;
    const takesValue = [
      "--cell",
      "--globals",
      "--host",
      "--check",
      "--step-budget",
      "--memory-budget",
      "--corpus",
    ];
    let value: string | undefined;
    if (takesValue.includes(name)) {
      if (eq >= 0) value = a.slice(eq + 1);
      else if (i + 1 < argv.length && !(argv[i + 1]!.startsWith("--") && argv[i + 1] !== "-"))
        value = argv[++i];
    } else if (eq >= 0) throw new UsageError(`${name} takes no value`);
    switch (name) {
      case "--json":
        out.json = true;
        break;
      case "--snapshot-between-cells":
        out.snapshotBetweenCells = true;
        break;
      case "--step-budget": {
        const n = value === undefined ? Number.NaN : Number(value);
        if (!(Number.isSafeInteger(n) && n > 0))
          throw new UsageError(
            `--step-budget expects a positive integer (steps per cell), got ${value === undefined ? "nothing" : `"${value}"`}`,
          );
        out.stepBudget = n;
        break;
      }
      case "--memory-budget": {
        const n = value === undefined ? Number.NaN : Number(value);
        if (!(Number.isFinite(n) && n > 0))
          throw new UsageError(
            `--memory-budget expects a positive number of MiB per cell (e.g. 256), got ${value === undefined ? "nothing" : `"${value}"`}`,
          );
        out.memoryBudget = Math.round(n * 1024 * 1024);
        break;
      }
      case "--check":
        if (!CHECK_MODES.includes(value as CheckMode))
          throw new UsageError(
            `--check expects one of ${CHECK_MODES.join(", ")}, got ${value === undefined ? "nothing" : `"${value}"`}`,
          );
        out.mode = value as CheckMode;
        break;
      case "--cell":
      case "--globals":
      case "--host":
      case "--corpus":
        if (value === undefined || value === "") throw new UsageError(`${name} expects a file`);
        if (name === "--cell") out.files.push({ path: value, split: false });
        else if (name === "--globals") out.globals = value;
        else if (name === "--host") out.host = value;
        else out.corpus = value;
        break;
      default:
        throw new UsageError(`unknown option ${name}`);
    }
  }
  if (out.corpus !== undefined) {
    if (out.files.length > 0 || out.globals !== undefined || out.host !== undefined)
      throw new UsageError(
        "--corpus runs the corpus's own cells, globals and hosts: give no files, --globals or --host",
      );
  } else if (out.files.length === 0)
    throw new UsageError("no cell to run: give a file, `-` for stdin, or --cell FILE");
  return out;
}

async function readText(path: string, io: CliIO): Promise<string> {
  try {
    return path === "-" ? await readAll(io.stdin) : await readFile(path, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

async function readJson(path: string, what: string, io: CliIO): Promise<Json> {
  const text = await readText(path, io);
  try {
    return JSON.parse(text.replace(/^\uFEFF/, "")) as Json;
  } catch (e) {
    throw new UsageError(`${what} ${path} is not JSON: ${(e as Error).message}`);
  }
}

function isObject(j: Json): j is { [k: string]: Json } {
  return j !== null && typeof j === "object" && !Array.isArray(j);
}

function cellJson(r: CellRun, withHost: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    outcome: r.outcome,
    value: r.value ?? null,
    prints: r.prints,
  };
  if (r.error) {
    const { kind: _kind, ...error } = r.error;
    out.error = error;
  }
  if (withHost) {
    out.calls = r.calls;
    out.max_concurrent = r.maxConcurrent;
  }
  if (r.yields && r.yields.length > 0) out.yields = r.yields;
  return out;
}

async function runCorpus(path: string, json: boolean, io: CliIO): Promise<number> {
  const text = await readText(path, io);
  let cases: ReturnType<typeof parseCorpus>;
  try {
    cases = parseCorpus(text);
  } catch (e) {
    throw new UsageError(`corpus ${path}: ${(e as Error).message}`);
  }
  let failed = 0;
  for (const c of cases) {
    const runs = await runCase(c);
    const problems = judgeCase(c, runs);
    if (problems.length > 0) failed++;
    if (json)
      io.stdout.write(
        `${JSON.stringify({
          id: c.id,
          pass: problems.length === 0,
          problems,
          cells: runs.map((r) => ({ ...cellJson(r, true), globals: r.globals })),
        })}\n`,
      );
    else if (problems.length === 0) io.stdout.write(`ok   ${c.id}\n`);
    else io.stdout.write(`FAIL ${c.id}\n${problems.map((p) => `       ${p}\n`).join("")}`);
  }
  const summary = `${cases.length - failed} passed, ${failed} failed (${cases.length} cases)`;
  if (json) io.stderr.write(`${summary}\n`);
  else io.stdout.write(`${summary}\n`);
  return failed > 0 ? 1 : 0;
}

async function runCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseRunArgs(argv);
  if (args.corpus !== undefined) return runCorpus(args.corpus, args.json, io);
  const sources: string[] = [];
  for (const f of args.files) {
    const text = await readText(f.path, io);
    if (f.split && CELL_SEPARATOR.test(text)) sources.push(...text.split(CELL_SEPARATOR));
    else sources.push(text);
  }
  let globals: { [k: string]: Json } = {};
  if (args.globals !== undefined) {
    const g = await readJson(args.globals, "--globals", io);
    if (!isObject(g)) throw new UsageError(`--globals ${args.globals} must be a JSON object of name → value`);
    globals = g;
  }
  let host: FixtureHost | null = null;
  if (args.host !== undefined) {
    const h = await readJson(args.host, "--host", io);
    if (!isObject(h) || (h.ops !== undefined && !isObject(h.ops)))
      throw new UsageError(
        `--host ${args.host} must be a JSON object like {"ops": {"files.read": {"kind": "echo", "key": "path"}}}`,
      );
    host = h as unknown as FixtureHost;
  }
  let errors = 0;
  await runCells(
    sources,
    {
      mode: args.mode,
      globals,
      host,
      snapshotBetweenCells: args.snapshotBetweenCells,
      // processes run in the CLI unless the fixture host answers `start` itself
      processes: host?.processes === undefined || host.processes.style === "run",
      ...(args.stepBudget !== undefined ? { stepBudget: args.stepBudget } : {}),
      ...(args.memoryBudget !== undefined ? { memoryBudget: args.memoryBudget } : {}),
    },
    (r) => {
      if (r.outcome === "error") errors++;
      if (args.json) {
        io.stdout.write(`${JSON.stringify(cellJson(r, host !== null))}\n`);
        return;
      }
      for (const p of r.printed) io.stdout.write(`${p}\n`);
      if (r.outcome === "finished") io.stdout.write(`${renderPrint(fromJson(r.value ?? null))}\n`);
      if (r.error) io.stderr.write(`${r.error.rendered}\n`);
    },
  );
  return errors > 0 ? 1 : 0;
}

export async function runLashlangCli(argv: string[], io: CliIO): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === "run") {
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout.write(USAGE);
      return 0;
    }
    try {
      return await runCommand(rest, io);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      io.stderr.write(`error: ${e.message}\n${USAGE}`);
      return 2;
    }
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
  const help = cmd === undefined || cmd === "--help" || cmd === "-h" || cmd === "help";
  (help ? io.stdout : io.stderr).write(USAGE);
  return help ? 0 : 2;
}
