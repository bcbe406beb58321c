import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ToolDefinition, ToolOutput } from "@lash/core";
import { diffStat, isBinary, unifiedDiff } from "./text.ts";
import { asArgs, hostTool, invalid, previewOf, requireString } from "./util.ts";
import { asWorkspace, type Workspace, type WorkspaceOptions } from "./workspace.ts";

export interface WriteFileArgs {
  readonly path: string;
  readonly content: string;
}

/** The structured value of `write_file` (`files.write`). */
export interface WriteFileValue {
  readonly path: string;
  readonly bytes: number;
  /** True when the file did not exist before. */
  readonly created: boolean;
}

const NAME = "write_file";

export function writeFileTool(
  workspace: Workspace | WorkspaceOptions | string,
): ToolDefinition<WriteFileArgs> {
  const ws = asWorkspace(workspace);
  return hostTool<WriteFileArgs>({
    name: NAME,
    description: [
      "Create a file or replace its entire content. Parent directories are created as needed.",
      "Use it for new files or complete rewrites; to change part of an existing file prefer `edit` (exact replacements) or `apply_patch`.",
      "Paths are relative to the workspace root; writes under `.git/` and other protected paths are refused.",
      "Returns the path, the byte count and whether the file was created.",
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File path, relative to the workspace root." },
        content: { type: "string", description: "The complete new content of the file." },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
    readOnly: false,
    effects: ["write"],
    idempotent: true,
    family: "write",
    binding: { module: "files", operation: "write", returns: "{path, bytes, created}" },
    preview: previewOf(async (rawArgs) => {
      const plan = await planWrite(ws, rawArgs);
      const stat2 = plan.diff === undefined ? undefined : diffStat(plan.diff);
      const counts = stat2 === undefined ? "" : ` (+${stat2.added} -${stat2.removed})`;
      return {
        summary: `${plan.created ? "create" : "overwrite"} ${plan.rel}${counts}, ${plan.bytes} bytes`,
        ...(plan.diff === undefined ? {} : { diff: plan.diff }),
        files: [
          {
            path: plan.rel,
            action: plan.created ? "create" : "modify",
            added: stat2?.added ?? 0,
            removed: stat2?.removed ?? 0,
          },
        ],
      };
    }),
    run: async (rawArgs): Promise<ToolOutput> => {
      const { resolved, rel, content, bytes, created, diff } = await planWrite(ws, rawArgs);
      await mkdir(path.dirname(resolved.real), { recursive: true });
      await writeFile(resolved.real, content, "utf8");
      const stat2 = diff === undefined ? undefined : diffStat(diff);
      const summary = created
        ? `Created ${rel} (${bytes} bytes).`
        : `Wrote ${rel} (${bytes} bytes)${stat2 === undefined ? "" : `: +${stat2.added} -${stat2.removed} lines`}.`;
      const value: WriteFileValue = { path: rel, bytes, created };
      return {
        content: [{ type: "text", text: summary }],
        value,
        details: { path: rel, created, ...(diff === undefined ? {} : { diff }) },
      };
    },
  });
}

/** What a write would do — checked, read and diffed, nothing written (the tool and its preview share it). */
async function planWrite(ws: Workspace, rawArgs: unknown) {
  const args = asArgs(NAME, rawArgs);
  const input = requireString(NAME, args, "path", { nonEmpty: true });
  const content = requireString(NAME, args, "content");
  const resolved = await ws.resolve(input, "write");
  const rel = resolved.relative;
  const existing = await stat(resolved.real).catch(() => undefined);
  if (existing?.isDirectory() === true) {
    throw invalid(`write_file: \`${rel}\` is a directory; give a file path.`);
  }
  let before = "";
  let beforeIsText = false;
  if (existing !== undefined) {
    const bytes = await readFile(resolved.real);
    beforeIsText = !isBinary(bytes);
    if (beforeIsText) before = bytes.toString("utf8");
  }
  const created = existing === undefined;
  const diff =
    created || beforeIsText ? unifiedDiff(created ? undefined : rel, rel, before, content) : undefined;
  return { resolved, rel, content, bytes: Buffer.byteLength(content), created, diff };
}
