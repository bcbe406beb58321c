import type { ToolControl, ToolResultContent, ToolSpec, Usage } from "@lash/sansio";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import type { ArtifactsShape } from "./artifacts.ts";

/** A JSON Schema object (draft 2020-12 subset) describing a tool's input. */
export type JsonSchema = { readonly [key: string]: unknown };

export type ToolFailureClass =
  | "invalidRequest"
  | "unavailable"
  | "permissionDenied"
  | "timeout"
  | "execution"
  | "external"
  | "resourceLimit"
  | "cancelled"
  | "interrupted"
  | "internal";

/**
 * A tool failure. It never escapes the dispatcher as an exception: it becomes
 * an error result the model reads (`message` is what the model sees).
 * `retry: "safe"` marks a failure the dispatcher may retry (with backoff).
 */
export class ToolFailure extends Data.TaggedError("ToolFailure")<{
  readonly class: ToolFailureClass;
  readonly message: string;
  readonly retry?: "never" | "safe";
  readonly retryAfterMs?: number;
}> {}

/** The result of one tool call as the tool produced it (the graph keeps it whole). */
export interface ToolOutput {
  /** What the model sees, before the output-budget projection. */
  readonly content: readonly ToolResultContent[];
  /** An error result the model reads (the call itself completed). */
  readonly isError?: boolean;
  /** Structured value for Lashlang bindings (`files.read` returns this). Defaults to the text content. */
  readonly value?: unknown;
  /** Data for UIs and exporters (diff, plan items, exit code). Kept in the graph; never sent to the model. */
  readonly details?: unknown;
  /** Usage this call spent on models (a subagent, an `llm.query`): added to the session's ledger. */
  readonly usage?: readonly ToolUsage[];
  /** Ask the turn to end (`finish`) or switch agent frames. */
  readonly control?: ToolControl;
}

export interface ToolUsage {
  /** Ledger source, e.g. `agent:<childSessionId>`. */
  readonly source: string;
  readonly model: string;
  readonly usage: Usage;
  readonly costUsd?: number;
}

export interface ToolContext {
  readonly sessionId: string;
  /** The provider's id for the call (providers may reuse it across turns). */
  readonly callId: string;
  /** lash's id for the call, unique in the session (absent for calls made inside RLM cells). */
  readonly lashCallId?: string;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Aborted when the call is cancelled or times out; pass it to child processes and fetches. */
  readonly signal: AbortSignal;
  /** Live progress for UIs (e.g. shell output as it arrives). Not journaled. */
  readonly progress: (update: unknown) => void;
  /** The turn this call belongs to. */
  readonly turnId?: string;
  /** Host access for tools that drive the runtime (subagents). Set by `LashRuntime`. */
  readonly host?: ToolHost;
}

/** What the runtime lends a tool that needs to drive it (e.g. `spawn_agent`). */
export interface ToolHost {
  /** The runtime itself (typed loosely here to keep the module graph acyclic; cast to `LashRuntimeShape`). */
  readonly runtime: unknown;
  /** The calling session's record. */
  readonly session: unknown;
  /** Publish an activity event on the calling turn (e.g. child started/finished). */
  readonly emit: (event: {
    readonly type: "plugin";
    readonly plugin: string;
    readonly name: string;
    readonly data: unknown;
  }) => void;
  /** The runtime's content-addressed artifacts (what `read_artifact` reads). */
  readonly artifacts?: ArtifactsShape;
}

export interface ToolDefinition<A = unknown> {
  readonly name: string;
  /** Written for models: what it does, when to use it, what it returns. */
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** Read-only tools change nothing and are idempotent. */
  readonly readOnly?: boolean;
  /** Safe to run again after a crash mid-run. Read-only tools are. */
  readonly idempotent?: boolean;
  /** Per-call timeout; the dispatcher's default applies when absent. */
  readonly timeoutMs?: number;
  /** Retries for failures marked `retry: "safe"`. */
  readonly retry?: {
    readonly maxAttempts: number;
    readonly baseDelayMs?: number;
    readonly maxDelayMs?: number;
  };
  /** Which end the output budget keeps when cutting (shell output keeps the tail). */
  readonly truncate?: "head" | "tail";
  /** Lashlang binding for the RLM mode: `module.operation(args)`. */
  readonly binding?: { readonly module: string; readonly operation: string; readonly returns?: string };
  /** UI family for activity cards (`shell`, `edit`, `read`, `search`, `plan`, `mcp`, `agent`, …). */
  readonly family?: string;
  /**
   * What the call does to the world (see `ToolEffectKind`). Absent: `["read"]` for a
   * read-only tool, `["write"]` otherwise — an undeclared tool is treated as a mutation.
   */
  readonly effects?: readonly ToolEffectKind[];
  /**
   * What the call would do, without doing it: the approval prompt shows it, and in
   * dry-run (`writes: "stub"`) a write tool returns it instead of running. Must not
   * change anything. Tools without one get a generic preview (name and arguments).
   */
  preview?(args: A, context: ToolPreviewContext): Effect.Effect<ToolPreview, ToolFailure>;
  execute(args: A, context: ToolContext): Effect.Effect<ToolOutput, ToolFailure>;
}

/**
 * One kind of effect a tool has: `read` changes nothing; `write` changes files or
 * state; `exec` runs a program; `network` reaches beyond the machine; `secret`
 * reads or handles credentials. Policy, risk, approvals and dry-run go by these.
 */
export type ToolEffectKind = "read" | "write" | "exec" | "network" | "secret";

/** The effects a tool declares, or its default (`read` when read-only, else `write`). */
export function toolEffects(tool: ToolDefinition): readonly ToolEffectKind[] {
  return tool.effects ?? (tool.readOnly ? ["read"] : ["write"]);
}

export interface ToolPreviewContext {
  readonly sessionId: string;
  readonly callId: string;
  readonly signal: AbortSignal;
}

/** What a call would do: shown in approval prompts and returned by write tools in dry-run. */
export interface ToolPreview {
  /** One line for people and the model, e.g. `edit src/a.ts (+3 −1)`, `run \`make\` in /repo`. */
  readonly summary: string;
  /** Unified diff of every file the call would change. */
  readonly diff?: string;
  readonly files?: readonly {
    readonly path: string;
    readonly action: "create" | "modify" | "delete";
    readonly added: number;
    readonly removed: number;
  }[];
  /** A command the call would run: what, where, and what the sandbox lets it do. */
  readonly command?: { readonly command: string; readonly cwd: string; readonly sandbox?: string };
}

export function toolSpec(tool: ToolDefinition): ToolSpec {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
}

export function isIdempotent(tool: ToolDefinition): boolean {
  return tool.idempotent ?? tool.readOnly ?? false;
}

/** A text-only tool output. */
export function textOutput(text: string, extra?: Omit<ToolOutput, "content">): ToolOutput {
  return { content: [{ type: "text", text }], ...extra };
}

/**
 * Define a tool whose body is a promise-returning function. Rejections become
 * `ToolFailure{class: "execution"}` unless the function throws a ToolFailure.
 */
export function defineTool<A>(
  definition: Omit<ToolDefinition<A>, "execute"> & {
    readonly run: (args: A, context: ToolContext) => Promise<ToolOutput>;
  },
): ToolDefinition<A> {
  const { run, ...rest } = definition;
  return {
    ...rest,
    execute: (args, context) =>
      Effect.tryPromise({
        try: () => run(args, context),
        catch: (error) =>
          error instanceof ToolFailure
            ? error
            : new ToolFailure({
                class: "execution",
                message: error instanceof Error ? error.message : String(error),
              }),
      }),
  };
}
