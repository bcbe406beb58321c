import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { PromiseStore, SessionRecord, SessionStoreShape } from "@lash/core";
import { Effect } from "effect";
import { renderSessionHtml } from "./html.ts";
import { ImportError, importSession } from "./import.ts";
import { loadSession } from "./load.ts";
import { renderSessionMarkdown } from "./md.ts";

export interface ExportIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Base for relative paths (default `process.cwd()`). */
  readonly cwd?: string;
}

export interface ExportCliContext {
  /** The sessions database (the CLI opens it; `openSqliteStore(...).store` or an Effect store shape). */
  readonly store: SessionStoreShape | PromiseStore;
}

export const EXPORT_USAGE = `Usage:
  lash export <session> [--format html|json|md] [-o file]
  lash import <file.json>

export  writes one session — every branch, tool calls with their results,
        subagent sessions, usage and cost — as a self-contained HTML page
        (default), schema-versioned JSON, or a Markdown transcript. <session>
        is an id, a unique id prefix, or "last". Without -o the export goes
        to standard output; the format is inferred from -o's extension when
        --format is not given.
import  recreates a session from a JSON export (new ids when the exported
        ones are taken) and prints its id.
`;

const settle = <A>(value: unknown): Promise<A> =>
  Effect.isEffect(value)
    ? Effect.runPromise(value as Effect.Effect<A, unknown>)
    : Promise.resolve(value as Promise<A>);

function message(e: unknown): string {
  return e instanceof Error
    ? e.message
    : typeof e === "object" && e && "message" in e
      ? String(e.message)
      : String(e);
}

async function resolveSession(
  store: ExportCliContext["store"],
  ref: string,
): Promise<SessionRecord | string> {
  const exact = await settle<SessionRecord>(store.getSession(ref)).catch(() => undefined);
  if (exact) return exact;
  const all = await settle<readonly SessionRecord[]>(store.listSessions({ includeChildren: true }));
  if (ref === "last" || ref === "latest") {
    const top = all.filter((s) => !s.parentLink);
    return top[0] ?? "there are no sessions";
  }
  const matches = all.filter((s) => s.id.startsWith(ref));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1)
    return `"${ref}" matches ${matches.length} sessions: ${matches
      .slice(0, 5)
      .map((s) => s.id)
      .join(", ")}${matches.length > 5 ? ", …" : ""}`;
  return `no session "${ref}"`;
}

/** `lash import <file>` (argv after `import`). Resolves to the exit code. */
export async function runImportCli(
  argv: readonly string[],
  io: ExportIo,
  ctx: ExportCliContext,
): Promise<number> {
  const files = argv.filter((a) => !a.startsWith("-"));
  if (argv.includes("-h") || argv.includes("--help")) {
    io.stdout(EXPORT_USAGE);
    return 0;
  }
  if (files.length !== 1 || files.length !== argv.length) {
    io.stderr(`lash import: expected one file\n\n${EXPORT_USAGE}`);
    return 2;
  }
  const path = resolve(io.cwd ?? process.cwd(), files[0]!);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    io.stderr(`lash import: cannot read ${path}: ${message(e)}\n`);
    return 1;
  }
  try {
    const r = await importSession(ctx.store, text);
    io.stdout(
      `${r.sessionId}\nimported ${r.nodes} nodes in ${r.sessions} session${r.sessions === 1 ? "" : "s"}${r.keptIds ? "" : " (new ids: the exported ones exist in this store)"}\n`,
    );
    return 0;
  } catch (e) {
    io.stderr(`lash import: ${e instanceof ImportError ? e.message : `failed: ${message(e)}`}\n`);
    return 1;
  }
}

/**
 * `lash export …` and `lash import …`: argv starts with the subcommand
 * (`["export", "<session>", "--format", "md"]`, `["import", "file.json"]`).
 * Resolves to the exit code: 0 ok, 1 failure, 2 usage error.
 */
export async function runExportCli(
  argv: readonly string[],
  io: ExportIo,
  ctx: ExportCliContext,
): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === "import") return runImportCli(rest, io, ctx);
  if (verb !== "export") {
    io.stderr(`lash: expected "export" or "import"\n\n${EXPORT_USAGE}`);
    return 2;
  }
  let ref: string | undefined;
  let format: string | undefined;
  let out: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === "-h" || a === "--help") {
      io.stdout(EXPORT_USAGE);
      return 0;
    }
    if (a === "--format" || a === "-f") format = rest[++i];
    else if (a.startsWith("--format=")) format = a.slice("--format=".length);
    else if (a === "-o" || a === "--output" || a === "--out") out = rest[++i];
    else if (a.startsWith("-")) {
      io.stderr(`lash export: unknown option ${a}\n\n${EXPORT_USAGE}`);
      return 2;
    } else if (ref === undefined) ref = a;
    else {
      io.stderr(`lash export: unexpected argument ${a}\n\n${EXPORT_USAGE}`);
      return 2;
    }
  }
  if (ref === undefined) {
    io.stderr(`lash export: missing the session\n\n${EXPORT_USAGE}`);
    return 2;
  }
  if (format === undefined && out !== undefined) {
    const ext = /\.(html?|json|md|markdown)$/i.exec(out)?.[1]?.toLowerCase();
    format = ext === "htm" || ext === "html" ? "html" : ext === "markdown" ? "md" : ext;
  }
  format ??= "html";
  if (format === "markdown") format = "md";
  if (format !== "html" && format !== "json" && format !== "md") {
    io.stderr(`lash export: --format must be html, json or md (got "${format}")\n`);
    return 2;
  }
  const session = await resolveSession(ctx.store, ref).catch(
    (e: unknown) => `cannot list sessions: ${message(e)}`,
  );
  if (typeof session === "string") {
    io.stderr(`lash export: ${session}\n`);
    return 1;
  }
  let text: string;
  try {
    const exported = await loadSession(ctx.store, session.id);
    text =
      format === "html"
        ? renderSessionHtml(exported)
        : format === "md"
          ? renderSessionMarkdown(exported)
          : `${JSON.stringify(exported, null, 2)}\n`;
  } catch (e) {
    io.stderr(`lash export: cannot read session ${session.id}: ${message(e)}\n`);
    return 1;
  }
  if (out === undefined || out === "-") {
    io.stdout(text);
    return 0;
  }
  const target = resolve(io.cwd ?? process.cwd(), out);
  try {
    await writeFile(target, text, "utf8");
  } catch (e) {
    io.stderr(`lash export: cannot write ${target}: ${message(e)}\n`);
    return 1;
  }
  io.stdout(`${target}\n`);
  return 0;
}
