import { readFile, stat } from "node:fs/promises";

import type { ToolDefinition, ToolOutput } from "@lash/core";
import { clip, isBinary } from "./text.ts";
import { asArgs, hostTool, invalid, optionalBoolean, optionalString, requireString } from "./util.ts";
import { globMatcher, walkFiles } from "./walk.ts";
import { asWorkspace, type ResolvedPath, type Workspace, type WorkspaceOptions } from "./workspace.ts";

export interface SearchLimits {
  /** Results returned at most (glob: files, grep: matching lines). Default 200 for grep, 500 for glob. */
  readonly maxResults?: number;
  /** Files looked at at most per call. Default 50 000. */
  readonly maxFiles?: number;
  /** grep skips files larger than this. Default 2 MiB. */
  readonly maxFileBytes?: number;
}

export interface GlobArgs {
  readonly pattern: string;
  readonly path?: string;
}

/** The structured value of `glob` (`files.glob`). */
export interface GlobValue {
  /** Root-relative paths, sorted. */
  readonly files: readonly string[];
  /** Number of matching files (may exceed `files.length`). */
  readonly total: number;
  readonly truncated: boolean;
}

export interface GrepArgs {
  readonly pattern: string;
  readonly path?: string;
  readonly glob?: string;
  readonly ignoreCase?: boolean;
}

export interface GrepMatch {
  readonly path: string;
  /** 1-based line number. */
  readonly line: number;
  readonly text: string;
}

/** The structured value of `grep` (`files.grep`). */
export interface GrepValue {
  readonly matches: readonly GrepMatch[];
  /** Number of matching lines found (may exceed `matches.length`). */
  readonly total: number;
  readonly truncated: boolean;
}

async function searchRoot(
  ws: Workspace,
  tool: string,
  input: string | undefined,
): Promise<{ resolved: ResolvedPath; isFile: boolean }> {
  const resolved = await ws.resolve(input ?? ".", "read", { isDirectory: true });
  const info = await stat(resolved.real).catch(() => undefined);
  if (info === undefined) throw invalid(`${tool}: \`${input}\` does not exist.`);
  return { resolved, isFile: info.isFile() };
}

function relativeToSearch(root: ResolvedPath, rel: string): string {
  if (root.relative === ".") return rel;
  return rel.startsWith(`${root.relative}/`) ? rel.slice(root.relative.length + 1) : rel;
}

export function globTool(
  workspace: Workspace | WorkspaceOptions | string,
  limits: SearchLimits = {},
): ToolDefinition<GlobArgs> {
  const ws = asWorkspace(workspace);
  const maxResults = limits.maxResults ?? 500;
  const maxFiles = limits.maxFiles ?? 50_000;
  return hostTool<GlobArgs>({
    name: "glob",
    description: [
      "Find files by name pattern. `*` matches within a path segment, `**` across directories, `{a,b}` alternatives: `**/*.ts`, `src/**/test_*.py`, `*.{json,yaml}`.",
      "A pattern without `/` matches file names at any depth (`*.md` finds every Markdown file). Patterns are relative to `path` (default: the workspace root).",
      "Honours .gitignore files and skips `.git/` and `node_modules/`.",
      `Returns at most ${maxResults} root-relative paths, sorted; when there are more, it says how many were left out — narrow the pattern or path.`,
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Glob pattern, e.g. `**/*.ts` or `*.md`." },
        path: {
          type: "string",
          description: "Directory to search in, relative to the workspace root. Default: the root.",
        },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    readOnly: true,
    effects: ["read"],
    idempotent: true,
    family: "search",
    binding: { module: "files", operation: "glob", returns: "{files: string[], total, truncated}" },
    run: async (rawArgs, ctx): Promise<ToolOutput> => {
      const args = asArgs("glob", rawArgs);
      const pattern = requireString("glob", args, "pattern", { nonEmpty: true });
      if (pattern.startsWith("/") || pattern.split("/").includes("..")) {
        throw invalid(
          "glob: the pattern must be relative (no leading `/`, no `..`); use `path` to choose the directory.",
        );
      }
      const { resolved, isFile } = await searchRoot(ws, "glob", optionalString("glob", args, "path"));
      if (isFile) throw invalid(`glob: \`${resolved.relative}\` is a file, not a directory.`);
      const matches = globMatcher(pattern);
      const files: string[] = [];
      let total = 0;
      let scanned = 0;
      let scanCapHit = false;
      await walkFiles(ws, resolved, ctx.signal, (entry) => {
        scanned++;
        if (scanned > maxFiles) {
          scanCapHit = true;
          return false;
        }
        if (matches(relativeToSearch(resolved, entry.relative))) {
          total++;
          if (files.length < maxResults) files.push(entry.relative);
        }
        return true;
      });
      const truncated = total > files.length || scanCapHit;
      const where = resolved.relative === "." ? "" : ` under ${resolved.relative}`;
      const lines = files.length === 0 ? [`No files match \`${pattern}\`${where}.`] : [...files];
      if (total > files.length) {
        lines.push(`[${total - files.length} more results not shown; narrow the pattern or path.]`);
      }
      if (scanCapHit)
        lines.push(`[Stopped after looking at ${maxFiles} files; results are incomplete. Narrow the path.]`);
      const value: GlobValue = { files, total, truncated };
      return {
        content: [{ type: "text", text: lines.join("\n") }],
        value,
        details: { count: files.length, total },
      };
    },
  });
}

export function grepTool(
  workspace: Workspace | WorkspaceOptions | string,
  limits: SearchLimits = {},
): ToolDefinition<GrepArgs> {
  const ws = asWorkspace(workspace);
  const maxResults = limits.maxResults ?? 200;
  const maxFiles = limits.maxFiles ?? 50_000;
  const maxFileBytes = limits.maxFileBytes ?? 2 * 1024 * 1024;
  return hostTool<GrepArgs>({
    name: "grep",
    description: [
      "Search file contents with a regular expression (JavaScript syntax, e.g. `function\\s+load`, `TODO|FIXME`); matching is per line.",
      "`path` limits the search to a directory or one file; `glob` filters file names (`*.ts`, `src/**/*.py`); `ignoreCase` for case-insensitive search.",
      "Honours .gitignore files, skips `.git/`, `node_modules/`, binary files and files over " +
        `${Math.round(maxFileBytes / 1024)} KiB.`,
      `Returns \`path:line:text\` lines (at most ${maxResults}; long lines clipped); when there are more it says how many were left out — narrow the pattern, path or glob. Use read_file to see the surrounding lines.`,
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Regular expression (JavaScript syntax)." },
        path: {
          type: "string",
          description: "Directory or file to search, relative to the workspace root. Default: the root.",
        },
        glob: { type: "string", description: "Only search files whose path matches this glob, e.g. `*.ts`." },
        ignoreCase: { type: "boolean", description: "Case-insensitive matching. Default false." },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    readOnly: true,
    effects: ["read"],
    idempotent: true,
    family: "search",
    binding: {
      module: "files",
      operation: "grep",
      returns: "{matches: [{path, line, text}], total, truncated}",
    },
    run: async (rawArgs, ctx): Promise<ToolOutput> => {
      const args = asArgs("grep", rawArgs);
      const pattern = requireString("grep", args, "pattern", { nonEmpty: true });
      const globPattern = optionalString("grep", args, "glob");
      const ignoreCase = optionalBoolean("grep", args, "ignoreCase") ?? false;
      let regex: RegExp;
      try {
        regex = new RegExp(pattern, ignoreCase ? "i" : "");
      } catch (error) {
        throw invalid(
          `grep: \`${pattern}\` is not a valid regular expression (${error instanceof Error ? error.message : String(error)}). Escape special characters such as ( ) [ ] { } . * + ? with a backslash.`,
        );
      }
      const { resolved, isFile } = await searchRoot(ws, "grep", optionalString("grep", args, "path"));
      const fileFilter = globPattern === undefined ? undefined : globMatcher(globPattern);
      const matches: GrepMatch[] = [];
      let total = 0;
      let scanned = 0;
      let scanCapHit = false;
      let skippedLarge = 0;
      let skippedLinked = 0;

      const searchFile = async (real: string, rel: string): Promise<void> => {
        const info = await stat(real).catch(() => undefined);
        if (info === undefined || !info.isFile()) return;
        // a hard link's other names may be outside the workspace (see Workspace.allowHardLinks)
        if (info.nlink > 1 && ws.options.allowHardLinks !== true) {
          skippedLinked++;
          return;
        }
        if (info.size > maxFileBytes) {
          skippedLarge++;
          return;
        }
        const bytes = await readFile(real).catch(() => undefined);
        if (bytes === undefined || isBinary(bytes)) return;
        const lines = bytes.toString("utf8").split(/\r?\n/);
        for (let n = 0; n < lines.length; n++) {
          const text = lines[n] ?? "";
          if (regex.test(text)) {
            total++;
            if (matches.length < maxResults) matches.push({ path: rel, line: n + 1, text: clip(text, 500) });
          }
        }
      };

      if (isFile) {
        await searchFile(resolved.real, resolved.relative);
      } else {
        await walkFiles(ws, resolved, ctx.signal, async (entry) => {
          scanned++;
          if (scanned > maxFiles) {
            scanCapHit = true;
            return false;
          }
          if (fileFilter !== undefined && !fileFilter(relativeToSearch(resolved, entry.relative)))
            return true;
          await searchFile(entry.absolute, entry.relative);
          return true;
        });
      }
      const truncated = total > matches.length || scanCapHit;
      const out =
        matches.length === 0
          ? [
              `No matches for \`${pattern}\`${resolved.relative === "." ? "" : ` in ${resolved.relative}`}${globPattern === undefined ? "" : ` (files matching ${globPattern})`}.`,
            ]
          : matches.map((m) => `${m.path}:${m.line}:${m.text}`);
      if (total > matches.length)
        out.push(`[${total - matches.length} more results not shown; narrow the pattern or path.]`);
      if (scanCapHit)
        out.push(
          `[Stopped after looking at ${maxFiles} files; results are incomplete. Narrow the path or glob.]`,
        );
      if (skippedLarge > 0) out.push(`[Skipped ${skippedLarge} file(s) over ${maxFileBytes} bytes.]`);
      if (skippedLinked > 0)
        out.push(
          `[Skipped ${skippedLinked} hard-linked file(s): their other names may be outside the workspace.]`,
        );
      const value: GrepValue = { matches, total, truncated };
      return {
        content: [{ type: "text", text: out.join("\n") }],
        value,
        details: { count: matches.length, total },
      };
    },
  });
}
