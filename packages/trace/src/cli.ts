import { readFile, writeFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { parseTrace } from "./schema.ts";
import { renderTraceViewer } from "./viewer.ts";

/** Where a CLI function writes (the CLI passes process streams; tests capture). */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Base for relative paths (default `process.cwd()`). */
  readonly cwd?: string;
}

export const TRACE_USAGE = `Usage: lash trace view <trace.jsonl> [-o out.html|-] [--title text]

Renders a JSONL trace as one self-contained HTML page (no network access):
a timeline of turns, model calls and tool calls, filters by kind, totals, and
the raw records behind each row. Without -o the page is written next to the
trace (<name>.html); -o - prints it.
`;

/**
 * `lash trace …` (argv after `trace`). Resolves to the exit code:
 * 0 ok, 1 the trace could not be read or written, 2 usage error.
 */
export async function runTraceCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    io.stdout(TRACE_USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== "view") {
    io.stderr(`lash trace: unknown command "${command}"\n\n${TRACE_USAGE}`);
    return 2;
  }
  let file: string | undefined;
  let out: string | undefined;
  let title: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === "-o" || a === "--out" || a === "--output") out = rest[++i];
    else if (a === "--title") title = rest[++i];
    else if (a === "-h" || a === "--help") {
      io.stdout(TRACE_USAGE);
      return 0;
    } else if (a.startsWith("-") && a !== "-") {
      io.stderr(`lash trace view: unknown option ${a}\n\n${TRACE_USAGE}`);
      return 2;
    } else if (file === undefined) file = a;
    else {
      io.stderr(`lash trace view: unexpected argument ${a}\n\n${TRACE_USAGE}`);
      return 2;
    }
  }
  if (file === undefined || (rest.includes("-o") && out === undefined)) {
    io.stderr(
      `lash trace view: ${file === undefined ? "missing the trace file" : "-o needs a path"}\n\n${TRACE_USAGE}`,
    );
    return 2;
  }
  const cwd = io.cwd ?? process.cwd();
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    io.stderr(`lash trace view: cannot read ${path}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  const lines = parseTrace(text);
  const html = renderTraceViewer(lines, { title: title ?? `lash trace — ${basename(path)}` });
  if (out === "-") {
    io.stdout(html);
    return 0;
  }
  const target = resolve(cwd, out ?? `${path.replace(/\.jsonl?$/i, "")}.html`);
  try {
    await writeFile(target, html, "utf8");
  } catch (e) {
    io.stderr(`lash trace view: cannot write ${target}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  const unknown = lines.filter((l) => l.type !== "record").length;
  io.stdout(
    `${target}\n${lines.length} records${unknown ? ` (${unknown} of kinds this version does not know, shown raw)` : ""}\n`,
  );
  return 0;
}
