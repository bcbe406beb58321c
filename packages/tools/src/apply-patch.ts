import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ToolDefinition, ToolOutput } from "@lash/core";
import { clip, diffStat, isBinary, unifiedDiff } from "./text.ts";
import { asArgs, checkAborted, hostTool, invalid, plural, previewOf, requireString } from "./util.ts";
import { asWorkspace, type ResolvedPath, type Workspace, type WorkspaceOptions } from "./workspace.ts";

export interface ApplyPatchArgs {
  readonly patch: string;
}

export type PatchAction = "create" | "modify" | "delete" | "rename";

/** One file of the structured value of `apply_patch` (`files.patch`). */
export interface PatchedFile {
  readonly path: string;
  readonly action: PatchAction;
  /** The old path of a renamed file. */
  readonly from?: string;
  readonly added: number;
  readonly removed: number;
}

/** The structured value of `apply_patch` (`files.patch`). */
export interface ApplyPatchValue {
  readonly files: readonly PatchedFile[];
  /** Unified diff of everything that changed, as applied. */
  readonly diff: string;
}

interface HunkLine {
  readonly op: " " | "-" | "+";
  readonly text: string;
}

interface Hunk {
  readonly header: string;
  /** 1-based; undefined when the header carried no numbers. */
  readonly oldStart: number | undefined;
  readonly lines: HunkLine[];
  oldNoEol: boolean;
  newNoEol: boolean;
}

interface FilePatch {
  oldPath: string | null | undefined;
  newPath: string | null | undefined;
  readonly hunks: Hunk[];
  gitOld?: string;
  gitNew?: string;
  deleted?: boolean;
  created?: boolean;
}

const NAME = "apply_patch";
const HUNK_RE = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Parse a (possibly multi-file, possibly git-flavoured) unified diff. */
export function parsePatch(patch: string): FilePatch[] {
  if (/^\*\*\* Begin Patch/m.test(patch)) {
    throw invalid(
      "apply_patch: this tool takes a standard unified diff (`--- a/file`, `+++ b/file`, `@@ -l,n +l,n @@` hunks), not the `*** Begin Patch` format.",
    );
  }
  const lines = patch.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (lines[lines.length - 1] === "") lines.pop();
  const files: FilePatch[] = [];
  let current: FilePatch | undefined;
  let i = 0;
  const isFileHeader = (k: number) =>
    (lines[k] ?? "").startsWith("--- ") && (lines[k + 1] ?? "").startsWith("+++ ");
  while (i < lines.length) {
    const line = lines[i] ?? "";
    if (line.startsWith("diff --git ")) {
      const m = /^diff --git (\S+) (\S+)$/.exec(line);
      current = { oldPath: undefined, newPath: undefined, hunks: [] };
      if (m !== null) {
        current.gitOld = stripPrefix(m[1] ?? "", "a/");
        current.gitNew = stripPrefix(m[2] ?? "", "b/");
      }
      files.push(current);
      i++;
      continue;
    }
    if (isFileHeader(i)) {
      const oldName = headerPath(line.slice(4));
      const newName = headerPath((lines[i + 1] ?? "").slice(4));
      if (current === undefined || current.hunks.length > 0 || current.oldPath !== undefined) {
        current = { oldPath: undefined, newPath: undefined, hunks: [] };
        files.push(current);
      }
      const stripBoth = oldName?.startsWith("a/") !== false && newName?.startsWith("b/") !== false;
      current.oldPath = oldName === null ? null : stripBoth ? stripPrefix(oldName, "a/") : oldName;
      current.newPath = newName === null ? null : stripBoth ? stripPrefix(newName, "b/") : newName;
      i += 2;
      continue;
    }
    if (current !== undefined && current.hunks.length === 0) {
      if (line.startsWith("new file mode")) current.created = true;
      else if (line.startsWith("deleted file mode")) current.deleted = true;
      else if (line.startsWith("rename from ")) current.gitOld = line.slice("rename from ".length);
      else if (line.startsWith("rename to ")) current.gitNew = line.slice("rename to ".length);
      else if (line.startsWith("Binary files ") || line.startsWith("GIT binary patch")) {
        throw invalid("apply_patch: binary patches are not supported.");
      }
    }
    if (line.startsWith("@@")) {
      if (current === undefined) {
        throw invalid(
          `apply_patch: hunk \`${line}\` (patch line ${i + 1}) comes before any \`--- a/file\` / \`+++ b/file\` header.`,
        );
      }
      const m = HUNK_RE.exec(line);
      const oldCount = m === null ? Number.POSITIVE_INFINITY : m[2] === undefined ? 1 : Number(m[2]);
      const newCount = m === null ? Number.POSITIVE_INFINITY : m[4] === undefined ? 1 : Number(m[4]);
      const hunk: Hunk = {
        header: line,
        oldStart: m === null ? undefined : Number(m[1]),
        lines: [],
        oldNoEol: false,
        newNoEol: false,
      };
      i++;
      let oldSeen = 0;
      let newSeen = 0;
      while (i < lines.length) {
        const body = lines[i] ?? "";
        if (oldSeen >= oldCount && newSeen >= newCount) {
          if (body.startsWith("\\")) {
            markNoEol(hunk);
            i++;
          }
          break;
        }
        if (body.startsWith("@@") || body.startsWith("diff --git ") || isFileHeader(i)) break;
        const op = body[0];
        if (op === " " || op === "-" || op === "+") {
          hunk.lines.push({ op, text: body.slice(1) });
          if (op !== "+") oldSeen++;
          if (op !== "-") newSeen++;
        } else if (body === "") {
          hunk.lines.push({ op: " ", text: "" });
          oldSeen++;
          newSeen++;
        } else if (body.startsWith("\\")) {
          markNoEol(hunk);
        } else {
          break;
        }
        i++;
      }
      // Trailing blank "context" lines at the very end of a count-less hunk are artefacts.
      while (
        m === null &&
        hunk.lines.length > 0 &&
        hunk.lines[hunk.lines.length - 1]?.text === "" &&
        hunk.lines[hunk.lines.length - 1]?.op === " "
      ) {
        hunk.lines.pop();
      }
      current.hunks.push(hunk);
      continue;
    }
    i++;
  }
  for (const file of files) {
    if (file.oldPath === undefined) file.oldPath = file.created === true ? null : file.gitOld;
    if (file.newPath === undefined) file.newPath = file.deleted === true ? null : file.gitNew;
    if (file.gitOld !== undefined && file.gitNew !== undefined && file.gitOld !== file.gitNew) {
      // git rename headers are authoritative for the names.
      if (file.oldPath !== null) file.oldPath = file.gitOld;
      if (file.newPath !== null) file.newPath = file.gitNew;
    }
  }
  return files.filter(
    (f) => f.hunks.length > 0 || f.oldPath !== f.newPath || f.deleted === true || f.created === true,
  );
}

function markNoEol(hunk: Hunk): void {
  const last = hunk.lines[hunk.lines.length - 1];
  if (last === undefined) return;
  if (last.op === "-") hunk.oldNoEol = true;
  else if (last.op === "+") hunk.newNoEol = true;
  else {
    hunk.oldNoEol = true;
    hunk.newNoEol = true;
  }
}

function stripPrefix(name: string, prefix: string): string {
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

function headerPath(raw: string): string | null {
  let name = raw.split("\t")[0] ?? "";
  name = name.trim();
  if (name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1);
  if (name === "/dev/null") return null;
  return name;
}

interface FileText {
  lines: string[];
  eol: string;
  eofNewline: boolean;
}

function toFileText(content: string): FileText {
  const eol = content.includes("\r\n") ? "\r\n" : "\n";
  if (content === "") return { lines: [], eol, eofNewline: false };
  const lines = content.split(/\r?\n/);
  const eofNewline = content.endsWith("\n");
  if (eofNewline) lines.pop();
  return { lines, eol, eofNewline };
}

function fromFileText(file: FileText): string {
  if (file.lines.length === 0) return "";
  return file.lines.join(file.eol) + (file.eofNewline ? file.eol : "");
}

function findBlock(
  lines: readonly string[],
  block: readonly string[],
  expected: number,
  min: number,
  eq: (a: string, b: string) => boolean,
): number {
  const max = lines.length - block.length;
  const matchesAt = (pos: number) => block.every((b, k) => eq(lines[pos + k] ?? "", b));
  if (expected >= min && expected <= max && matchesAt(expected)) return expected;
  for (let d = 1; d <= Math.max(max - min, 0) + Math.abs(expected); d++) {
    const down = expected + d;
    const up = expected - d;
    if (down >= min && down <= max && matchesAt(down)) return down;
    if (up >= min && up <= max && matchesAt(up)) return up;
    if (down > max && up < min) break;
  }
  return -1;
}

/** Apply hunks to a file's text; throws an invalidRequest ToolFailure naming the failing hunk. */
function applyHunks(display: string, file: FileText, hunks: readonly Hunk[]): FileText {
  const lines = [...file.lines];
  let eofNewline = file.eofNewline;
  let delta = 0;
  let min = 0;
  hunks.forEach((hunk, index) => {
    const oldBlock = hunk.lines.filter((l) => l.op !== "+").map((l) => l.text);
    const newBlock = hunk.lines.filter((l) => l.op !== "-").map((l) => l.text);
    let pos: number;
    if (oldBlock.length === 0) {
      pos =
        hunk.oldStart === undefined
          ? lines.length
          : Math.min(Math.max(hunk.oldStart + delta, min), lines.length);
    } else {
      const expected = hunk.oldStart === undefined ? min : Math.max(hunk.oldStart - 1 + delta, 0);
      pos = findBlock(lines, oldBlock, expected, min, (a, b) => a === b);
      if (pos < 0) pos = findBlock(lines, oldBlock, expected, min, (a, b) => a.trimEnd() === b.trimEnd());
      if (pos < 0) {
        const at = Math.min(expected, Math.max(lines.length - 1, 0));
        const actual = lines
          .slice(at, at + oldBlock.length)
          .map((l, k) => `${String(at + k + 1).padStart(6)}\t${clip(l, 200)}`)
          .join("\n");
        throw invalid(
          [
            `apply_patch: hunk ${index + 1} of ${plural(hunks.length, "hunk")} for \`${display}\` (${hunk.header}) does not apply: its context and removed lines were not found in the current file${hunks.length > 1 && index > 0 ? " after the previous hunk" : ""}.`,
            `The hunk expects:\n${oldBlock.map((l) => `  ${clip(l, 200)}`).join("\n")}`,
            actual === "" ? "The file has no lines there." : `The file has at line ${at + 1}:\n${actual}`,
            "No file was changed. Read the file again and regenerate the patch (or use `edit`).",
          ].join("\n"),
        );
      }
    }
    const reachesEnd = pos + oldBlock.length === lines.length;
    lines.splice(pos, oldBlock.length, ...newBlock);
    if (hunk.newNoEol) eofNewline = false;
    else if (reachesEnd && (hunk.oldNoEol || !file.eofNewline) && newBlock.length > 0) eofNewline = true;
    delta += newBlock.length - oldBlock.length;
    min = pos + newBlock.length;
  });
  return { lines, eol: file.eol, eofNewline };
}

interface Slot {
  readonly resolved: ResolvedPath;
  readonly original: string | null;
  content: string | null;
}

export function applyPatchTool(
  workspace: Workspace | WorkspaceOptions | string,
): ToolDefinition<ApplyPatchArgs> {
  const ws = asWorkspace(workspace);
  return hostTool<ApplyPatchArgs>({
    name: NAME,
    description: [
      "Apply a unified diff (as produced by `diff -u` or `git diff`) to one or more files: `--- a/path` / `+++ b/path` headers, then `@@ -start,count +start,count @@` hunks with ' ' context, '-' removed and '+' added lines.",
      "Use `--- /dev/null` to create a file and `+++ /dev/null` to delete one; git rename headers are understood.",
      "Atomic: every hunk of every file is checked against the current content before anything is written; if one does not apply, no file is changed and the error names the hunk and shows what the file has there.",
      "Hunks may be found a few lines away from their stated position; context must otherwise match exactly (trailing whitespace aside).",
      "Returns the changed files with their action and line counts.",
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        patch: { type: "string", description: "The unified diff text (one or more files)." },
      },
      required: ["patch"],
      additionalProperties: false,
    },
    readOnly: false,
    effects: ["write"],
    idempotent: false,
    family: "edit",
    binding: {
      module: "files",
      operation: "patch",
      returns: "{files: [{path, action: create|modify|delete|rename, from?, added, removed}], diff}",
    },
    preview: previewOf(async (rawArgs, ctx) => {
      const { files, hunks, diff } = await planPatch(ws, rawArgs, ctx.signal);
      const added = files.reduce((n, f) => n + f.added, 0);
      const removed = files.reduce((n, f) => n + f.removed, 0);
      const names = files.map((f) => (f.from === undefined ? f.path : `${f.from} -> ${f.path}`));
      return {
        summary: `patch ${plural(files.length, "file")} (${names.join(", ")}), ${plural(hunks, "hunk")} (+${added} -${removed})`,
        diff,
        files: files.map((f) => ({
          path: f.path,
          // a rename is a modify of its new path (the preview's actions are create | modify | delete)
          action: f.action === "rename" ? "modify" : f.action,
          added: f.added,
          removed: f.removed,
        })),
      };
    }),
    run: async (rawArgs, ctx): Promise<ToolOutput> => {
      const { touched, files, perFile, diff } = await planPatch(ws, rawArgs, ctx.signal);
      // Phase 2: write, restoring everything already written if a write fails.
      checkAborted(ctx.signal);
      const done: Slot[] = [];
      try {
        for (const slot of touched) {
          if (slot.content === null) {
            await rm(slot.resolved.real, { force: true });
          } else {
            await mkdir(path.dirname(slot.resolved.real), { recursive: true });
            await writeFile(slot.resolved.real, slot.content, "utf8");
          }
          done.push(slot);
        }
      } catch (error) {
        for (const slot of done.reverse()) {
          if (slot.original === null) await rm(slot.resolved.real, { force: true }).catch(() => undefined);
          else await writeFile(slot.resolved.real, slot.original, "utf8").catch(() => undefined);
        }
        throw error;
      }

      const summary = files
        .map(
          (f) =>
            `  ${f.action} ${f.from === undefined ? f.path : `${f.from} -> ${f.path}`} (+${f.added} -${f.removed})`,
        )
        .join("\n");
      const value: ApplyPatchValue = { files, diff };
      return {
        content: [{ type: "text", text: `Applied patch to ${plural(files.length, "file")}:\n${summary}` }],
        value,
        details: { files: perFile },
      };
    },
  });
}

/** What a patch would do — parsed, every hunk applied in memory and diffed, nothing written (the tool and its preview share it). */
async function planPatch(ws: Workspace, rawArgs: unknown, signal: AbortSignal) {
  const args = asArgs(NAME, rawArgs);
  const text = requireString(NAME, args, "patch", { nonEmpty: true });
  const filePatches = parsePatch(text);
  if (filePatches.length === 0) {
    throw invalid(
      "apply_patch: no file changes found. Expected a unified diff with `--- a/file` and `+++ b/file` headers followed by `@@ -l,n +l,n @@` hunks.",
    );
  }

  // Phase 1: resolve, read and apply everything in memory.
  const slots = new Map<string, Slot>();
  const load = async (name: string): Promise<Slot> => {
    const resolved = await ws.resolve(name, "write");
    const existing = slots.get(resolved.real);
    if (existing !== undefined) return existing;
    let original: string | null = null;
    const info = await stat(resolved.real).catch(() => undefined);
    if (info !== undefined) {
      if (!info.isFile()) throw invalid(`apply_patch: \`${resolved.relative}\` is not a regular file.`);
      const bytes = await readFile(resolved.real);
      if (isBinary(bytes))
        throw invalid(
          `apply_patch: \`${resolved.relative}\` is a binary file; only text files can be patched.`,
        );
      original = bytes.toString("utf8");
    }
    const slot: Slot = { resolved, original, content: original };
    slots.set(resolved.real, slot);
    return slot;
  };

  const changes: { action: PatchAction; from?: Slot; to: Slot }[] = [];
  for (const fp of filePatches) {
    checkAborted(signal);
    const { oldPath, newPath } = fp;
    if (oldPath === undefined || newPath === undefined || (oldPath === null && newPath === null)) {
      throw invalid("apply_patch: a file section is missing its `--- a/path` / `+++ b/path` headers.");
    }
    if (oldPath === null) {
      const slot = await load(newPath ?? "");
      if (slot.content !== null) {
        throw invalid(
          `apply_patch: cannot create \`${slot.resolved.relative}\`: it already exists. Patch it as a modification instead. No file was changed.`,
        );
      }
      const result = applyHunks(slot.resolved.relative, { lines: [], eol: "\n", eofNewline: true }, fp.hunks);
      slot.content = fromFileText({
        ...result,
        eofNewline: result.lines.length > 0 && result.eofNewline,
      });
      changes.push({ action: "create", to: slot });
      continue;
    }
    const source = await load(oldPath);
    if (source.content === null) {
      throw invalid(
        `apply_patch: \`${source.resolved.relative}\` does not exist${newPath === null ? "" : " (use `--- /dev/null` to create a file)"}. No file was changed.`,
      );
    }
    const result = fromFileText(applyHunks(source.resolved.relative, toFileText(source.content), fp.hunks));
    if (newPath === null) {
      if (fp.hunks.length > 0 && result.trim() !== "") {
        throw invalid(
          `apply_patch: the deletion of \`${source.resolved.relative}\` does not remove all of its content; the file has lines the patch does not list. No file was changed.`,
        );
      }
      source.content = null;
      changes.push({ action: "delete", to: source });
      continue;
    }
    const target = await load(newPath);
    if (target === source) {
      source.content = result;
      changes.push({ action: "modify", to: source });
    } else {
      if (target.content !== null) {
        throw invalid(
          `apply_patch: cannot rename \`${source.resolved.relative}\` to \`${target.resolved.relative}\`: the target exists. No file was changed.`,
        );
      }
      source.content = null;
      target.content = result;
      changes.push({ action: "rename", from: source, to: target });
    }
  }

  const files: PatchedFile[] = [];
  const perFile: { path: string; action: PatchAction; from?: string; diff: string }[] = [];
  const seen = new Set<string>();
  for (const change of changes) {
    const key = `${change.action}:${change.to.resolved.real}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const to = change.to;
    const rel = to.resolved.relative;
    const from = change.from;
    const before = from !== undefined ? (from.original ?? "") : (to.original ?? "");
    const after = to.content ?? "";
    const diff = unifiedDiff(
      change.action === "create" ? undefined : (from ?? to).resolved.relative,
      change.action === "delete" ? undefined : rel,
      before,
      after,
    );
    const { added, removed } = diffStat(diff);
    files.push({
      path: rel,
      action: change.action,
      ...(from === undefined ? {} : { from: from.resolved.relative }),
      added,
      removed,
    });
    perFile.push({
      path: rel,
      action: change.action,
      ...(from === undefined ? {} : { from: from.resolved.relative }),
      diff,
    });
  }
  const touched = [...slots.values()].filter((s) => s.content !== s.original);
  const hunks = filePatches.reduce((n, f) => n + f.hunks.length, 0);
  return { touched, files, perFile, hunks, diff: perFile.map((f) => f.diff).join("\n") };
}
