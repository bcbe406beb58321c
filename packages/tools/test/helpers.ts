import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ToolContext, ToolOutput } from "@lash/core";
import { ToolFailure } from "@lash/core";
import { Cause, Effect, Exit, Option } from "effect";

export interface TempDirs {
  /** The workspace root. */
  readonly root: string;
  /** A sibling directory outside the root. */
  readonly outside: string;
  cleanup(): void;
}

export function makeDirs(): TempDirs {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), "lash-tools-")));
  const root = path.join(base, "root");
  const outside = path.join(base, "outside");
  return {
    root,
    outside,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

export async function setup(dirs: TempDirs, files: Record<string, string | Uint8Array> = {}): Promise<void> {
  await mkdir(dirs.root, { recursive: true });
  await mkdir(dirs.outside, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dirs.root, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

export function context(overrides: Partial<ToolContext> = {}): ToolContext & { readonly updates: unknown[] } {
  const updates: unknown[] = [];
  return {
    sessionId: "s1",
    callId: "c1",
    attempt: 1,
    signal: new AbortController().signal,
    progress: (u) => updates.push(u),
    updates,
    ...overrides,
  };
}

/** Any tool, called with loosely typed arguments (method parameters are bivariant). */
export interface AnyTool {
  readonly name: string;
  execute(args: unknown, context: ToolContext): Effect.Effect<ToolOutput, ToolFailure>;
}

export function run(tool: AnyTool, args: unknown, ctx: ToolContext = context()): Promise<ToolOutput> {
  return Effect.runPromise(tool.execute(args, ctx));
}

/** Run a tool that must fail; returns the ToolFailure. */
export async function runFailure(
  tool: AnyTool,
  args: unknown,
  ctx: ToolContext = context(),
): Promise<ToolFailure> {
  const exit = await Effect.runPromiseExit(tool.execute(args, ctx));
  if (Exit.isSuccess(exit)) {
    throw new Error(`expected ${tool.name} to fail, got: ${JSON.stringify(exit.value.content)}`);
  }
  const failure = Cause.failureOption(exit.cause);
  if (Option.isNone(failure) || !(failure.value instanceof ToolFailure)) {
    throw new Error(`expected a ToolFailure, got ${Cause.pretty(exit.cause)}`);
  }
  return failure.value;
}

export function text(output: ToolOutput): string {
  return output.content.map((p) => (p.type === "text" ? p.text : `[attachment ${p.mediaType}]`)).join("\n");
}

export function read(dirs: TempDirs, name: string): string {
  return readFileSync(path.join(dirs.root, name), "utf8");
}

/** True while the process exists and is not a zombie (Linux /proc). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}
