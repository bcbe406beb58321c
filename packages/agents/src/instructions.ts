// Project instruction files: `AGENTS.md` (or, in a directory without one,
// `CLAUDE.md`) from the workspace and each parent up to the git root, outermost
// first, each capped (head and tail kept, with a note to read the file for the
// rest). Subagents get only AGENTS.md (`claude: false`).
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export const INSTRUCTIONS_MAX_CHARS = 20_000;

export interface InstructionFile {
  /** Absolute path. */
  readonly path: string;
  readonly name: "AGENTS.md" | "CLAUDE.md";
  /** The text as added to the prompt (cut when over the cap). */
  readonly text: string;
  /** The file's length in characters. */
  readonly chars: number;
  readonly truncated: boolean;
}

export interface InstructionOptions {
  /** Read CLAUDE.md where a directory has no AGENTS.md (default true; subagents pass false). */
  readonly claude?: boolean;
  /** Characters kept of each file (default 20,000). */
  readonly maxChars?: number;
}

/** The directories searched: the git root (the nearest parent holding `.git`) down to the workspace; only the workspace when it is not in a git repository. */
export function instructionDirs(workspace: string): string[] {
  const start = resolve(workspace);
  const chain: string[] = [];
  for (let dir = start; ; ) {
    chain.push(dir);
    if (existsSync(join(dir, ".git"))) return chain.reverse();
    const parent = dirname(dir);
    if (parent === dir) return [start];
    dir = parent;
  }
}

/** The instruction files that apply to `workspace`, outermost first. Unreadable files are skipped. */
export function findInstructionFiles(workspace: string, options: InstructionOptions = {}): InstructionFile[] {
  const names: InstructionFile["name"][] =
    options.claude === false ? ["AGENTS.md"] : ["AGENTS.md", "CLAUDE.md"];
  const max = options.maxChars ?? INSTRUCTIONS_MAX_CHARS;
  const out: InstructionFile[] = [];
  for (const dir of instructionDirs(workspace)) {
    for (const name of names) {
      const path = join(dir, name);
      let text: string;
      try {
        if (!statSync(path).isFile()) continue;
        text = readFileSync(path, "utf8");
      } catch {
        continue;
      }
      out.push({ path, name, ...capText(text, max, path), chars: text.length });
      break; // CLAUDE.md only where there is no AGENTS.md
    }
  }
  return out;
}

/** Head and tail of `text` within `max` characters, with a note in the middle naming the file. */
export function capText(text: string, max: number, path: string): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  const head = Math.ceil(max * 0.6);
  const tail = max - head;
  const omitted = text.length - head - tail;
  return {
    text: `${text.slice(0, head)}\n\n[… ${omitted} characters of ${path} left out here (the file has ${text.length}); read the file for the rest …]\n\n${text.slice(text.length - tail)}`,
    truncated: true,
  };
}

/** The system-prompt section for the files (undefined when there are none). */
export function renderInstructions(files: readonly InstructionFile[]): string | undefined {
  if (files.length === 0) return undefined;
  return [
    "## Project instructions",
    "Instructions from the project's files, outermost directory first; where they disagree, the later (nearer) file wins.",
    ...files.map((f) => `### ${f.path}\n\n${f.text.trim()}`),
  ].join("\n\n");
}

/** `renderInstructions(findInstructionFiles(workspace, options))`. */
export function projectInstructions(workspace: string, options: InstructionOptions = {}): string | undefined {
  return renderInstructions(findInstructionFiles(workspace, options));
}
