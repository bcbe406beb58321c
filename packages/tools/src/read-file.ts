import { open, readFile, stat } from "node:fs/promises";
import type { ToolDefinition, ToolOutput } from "@lash/core";
import { imageMediaType, isBinary, numberLine } from "./text.ts";
import { asArgs, checkAborted, hostTool, invalid, optionalInt, plural, requireString } from "./util.ts";
import { asWorkspace, type Workspace, type WorkspaceOptions } from "./workspace.ts";

export interface ReadFileArgs {
  readonly path: string;
  readonly offset?: number;
  readonly limit?: number;
}

/** The structured value of `read_file` (`files.read`) for a text file. */
export interface ReadFileValue {
  readonly path: string;
  /** The returned lines joined with `\n` (no line numbers). */
  readonly content: string;
  readonly totalLines: number;
  /** 1-based number of the first returned line. */
  readonly offset: number;
  /** Number of lines returned. */
  readonly lines: number;
  /** True when lines were left out (more lines after these, or a long line was clipped). */
  readonly truncated: boolean;
  /** Offset to pass to read the next page, when there is one. */
  readonly nextOffset?: number;
}

export interface ReadFileLimits {
  /** Lines returned when `limit` is not given. Default 2000. */
  readonly defaultLimit?: number;
  /** Bytes of text returned at most per call. Default 100 000. */
  readonly maxOutputBytes?: number;
  /** Characters kept of one line. Default 2000. */
  readonly maxLineLength?: number;
  /** Files larger than this are refused (page them with shell tools). Default 20 MiB. */
  readonly maxFileBytes?: number;
  /** Images larger than this are not attached. Default 5 MiB. */
  readonly maxImageBytes?: number;
}

const NAME = "read_file";

export function readFileTool(
  workspace: Workspace | WorkspaceOptions | string,
  limits: ReadFileLimits = {},
): ToolDefinition<ReadFileArgs> {
  const ws = asWorkspace(workspace);
  const defaultLimit = limits.defaultLimit ?? 2000;
  const maxOutputBytes = limits.maxOutputBytes ?? 100_000;
  const maxLineLength = limits.maxLineLength ?? 2000;
  const maxFileBytes = limits.maxFileBytes ?? 20 * 1024 * 1024;
  const maxImageBytes = limits.maxImageBytes ?? 5 * 1024 * 1024;

  return hostTool<ReadFileArgs>({
    name: NAME,
    description: [
      "Read a file from the workspace. Text comes back with line numbers (`     1\\t...`, 1-based) that are NOT part of the file: never copy them into edits.",
      `Reads up to ${defaultLimit} lines from \`offset\` (1-based line number, default 1); use \`offset\`/\`limit\` to page through long files — the result says which offset to read next.`,
      `Lines longer than ${maxLineLength} characters are clipped; at most ${maxOutputBytes} bytes are returned per call.`,
      "PNG, JPEG, GIF and WebP images are returned as image attachments; other binary files are reported, not dumped.",
      "Paths are relative to the workspace root. To find files use `glob`; to search contents use `grep`.",
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File path, relative to the workspace root." },
        offset: { type: "integer", minimum: 1, description: "1-based line number to start at. Default 1." },
        limit: {
          type: "integer",
          minimum: 1,
          description: `Maximum number of lines to return. Default ${defaultLimit}.`,
        },
      },
      required: ["path"],
      additionalProperties: false,
    },
    readOnly: true,
    effects: ["read"],
    idempotent: true,
    family: "read",
    binding: {
      module: "files",
      operation: "read",
      returns:
        "{path, content, totalLines, offset, lines, truncated, nextOffset?} — content is the raw text of the returned lines",
    },
    run: async (rawArgs, ctx): Promise<ToolOutput> => {
      const args = asArgs(NAME, rawArgs);
      const input = requireString(NAME, args, "path", { nonEmpty: true });
      const offset = optionalInt(NAME, args, "offset", { min: 1 }) ?? 1;
      const limit = optionalInt(NAME, args, "limit", { min: 1 }) ?? defaultLimit;
      const resolved = await ws.resolve(input, "read");
      const rel = resolved.relative;
      const info = await stat(resolved.real).catch((error: { code?: string }) => {
        if (error.code === "ENOENT") {
          throw invalid(`read_file: \`${input}\` does not exist. Use \`glob\` to find the right path.`);
        }
        throw error;
      });
      if (info.isDirectory()) {
        throw invalid(
          `read_file: \`${rel}\` is a directory. Use \`glob\` with \`path: "${rel}"\` to list its files.`,
        );
      }
      if (!info.isFile()) throw invalid(`read_file: \`${rel}\` is not a regular file.`);
      checkAborted(ctx.signal);

      const head = await readHead(resolved.real, 8192);
      const mediaType = imageMediaType(head);
      if (mediaType !== undefined) {
        if (info.size > maxImageBytes) {
          return {
            content: [
              {
                type: "text",
                text: `${rel} is a ${mediaType} image of ${info.size} bytes, larger than the ${maxImageBytes}-byte limit for attachments.`,
              },
            ],
            isError: true,
            value: { path: rel, mediaType, size: info.size, binary: true },
          };
        }
        const data = (await readFile(resolved.real)).toString("base64");
        return {
          content: [
            { type: "text", text: `${rel}: ${mediaType} image, ${info.size} bytes.` },
            { type: "attachment", mediaType, data, name: rel },
          ],
          value: { path: rel, mediaType, size: info.size },
        };
      }
      if (isBinary(head)) {
        return {
          content: [
            {
              type: "text",
              text: `${rel} is a binary file (${info.size} bytes); read_file only shows text. Inspect it with the shell (e.g. \`file\`, \`xxd | head\`) if you need to.`,
            },
          ],
          isError: true,
          value: { path: rel, size: info.size, binary: true },
        };
      }
      if (info.size > maxFileBytes) {
        return {
          content: [
            {
              type: "text",
              text: `${rel} is ${info.size} bytes, over the ${maxFileBytes}-byte limit of read_file. Search it with \`grep\` or print a range with the shell (e.g. \`sed -n '1000,1200p' ${rel}\`).`,
            },
          ],
          isError: true,
          value: { path: rel, size: info.size, tooLarge: true },
        };
      }

      let text = await readFile(resolved.real, "utf8");
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      const allLines = text.length === 0 ? [] : text.split(/\r?\n/);
      if (allLines.length > 0 && allLines[allLines.length - 1] === "") allLines.pop();
      const totalLines = allLines.length;

      if (totalLines === 0) {
        const value: ReadFileValue = {
          path: rel,
          content: "",
          totalLines: 0,
          offset: 1,
          lines: 0,
          truncated: false,
        };
        return { content: [{ type: "text", text: `${rel} is empty.` }], value };
      }
      if (offset > totalLines) {
        throw invalid(
          `read_file: offset ${offset} is past the end of ${rel}, which has ${plural(totalLines, "line")}.`,
        );
      }

      const shown: string[] = [];
      const raw: string[] = [];
      let bytes = 0;
      let clipped = false;
      let byteCapHit = false;
      const last = Math.min(totalLines, offset + limit - 1);
      for (let n = offset; n <= last; n++) {
        let line = allLines[n - 1] ?? "";
        if (line.length > maxLineLength) {
          line = `${line.slice(0, maxLineLength)}… [line clipped: ${line.length - maxLineLength} more chars]`;
          clipped = true;
        }
        const numbered = numberLine(n, line);
        const size = Buffer.byteLength(numbered) + 1;
        if (bytes + size > maxOutputBytes && shown.length > 0) {
          byteCapHit = true;
          break;
        }
        bytes += size;
        shown.push(numbered);
        raw.push(allLines[n - 1] ?? "");
      }
      const endLine = offset + shown.length - 1;
      const more = endLine < totalLines;
      const notes: string[] = [];
      if (more) {
        const why = byteCapHit ? `the ${maxOutputBytes}-byte output cap` : `the ${limit}-line limit`;
        notes.push(
          `[Showing lines ${offset}-${endLine} of ${totalLines} (stopped at ${why}). Call read_file with offset=${endLine + 1} to continue.]`,
        );
      } else if (offset > 1) {
        notes.push(`[Showing lines ${offset}-${endLine} of ${totalLines}.]`);
      }
      if (clipped) notes.push("[Some long lines were clipped; use grep or the shell to see them whole.]");
      const value: ReadFileValue = {
        path: rel,
        content: raw.join("\n"),
        totalLines,
        offset,
        lines: shown.length,
        truncated: more || clipped,
        ...(more ? { nextOffset: endLine + 1 } : {}),
      };
      const body = shown.join("\n");
      return {
        content: [{ type: "text", text: notes.length === 0 ? body : `${body}\n\n${notes.join("\n")}` }],
        value,
        details: { path: rel, offset, endLine, totalLines },
      };
    },
  });
}

async function readHead(file: string, size: number): Promise<Uint8Array> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(size);
    const { bytesRead } = await handle.read(buffer, 0, size, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
