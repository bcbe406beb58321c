import {
  type ChildTurnResult,
  type JsonSchema,
  type Plugin,
  rlmSessionState,
  type SessionMode,
  type SessionRecord,
  type Sessions,
  type ToolContext,
  type ToolDefinition,
  ToolFailure,
  type ToolFailureClass,
  type ToolHost,
  type ToolOutput,
  type ToolUsage,
} from "@lash/core";
import { addUsage, type Message, type TurnOutcome, type Usage } from "@lash/sansio";
import { Deferred, Effect, Exit } from "effect";
import { type Capability, CapabilityRegistry } from "./capabilities.ts";
import { CHILD_ONLY_TOOLS, childPlugin, SUBMIT_ERROR, SUBMIT_RESULT, unwrapSubmitted } from "./child.ts";
import { checkOutput, extractJson, outputSchema } from "./output.ts";
import { DEFAULT_CHILD_SYSTEM_PROMPT, renderTask } from "./prompt.ts";

export const SPAWN_AGENT = "spawn_agent";
export const DEFAULT_MAX_DEPTH = 5;
/** Name of the plugin, of its activity events (`plugin: "subagents"`) and of the child's state entry. */
export const PLUGIN_NAME = "subagents";
/** Key of the spawn record in a child session's `state`. */
export const SPAWN_STATE_KEY = "subagents.spawn";

export interface SubagentsOptions {
  /** Registered capabilities (default: `explore` and `peer`). */
  readonly capabilities?: CapabilityRegistry | readonly Capability[];
  /** Model overrides for the built-in capabilities (ignored when `capabilities` is given). */
  readonly models?: { readonly explore?: string; readonly peer?: string };
  /**
   * The capability used when a call names none. Without it, `capability` is
   * required when more than one capability is registered.
   */
  readonly defaultCapability?: string;
  /** Deepest child (the root session is depth 0; default 5). At the limit `spawn_agent` is hidden. */
  readonly maxDepth?: number;
  /** How long one child may run before it is cancelled (default 1 hour). */
  readonly timeoutMs?: number;
  /**
   * Text appended to every new child's system prompt (the CLI passes the project's
   * AGENTS.md files here; children get no CLAUDE.md).
   */
  readonly childInstructions?: string;
  /**
   * Called when a child is created or resumed, before it runs: a host that governs tool calls
   * registers the child's policy here (its parent's layers plus `capability.policy`; see
   * @lash/policy `SessionPolicies`), so the child's calls are decided under its own policy.
   */
  readonly onChild?: (child: {
    readonly sessionId: string;
    readonly parentSessionId: string;
    readonly capability: Capability;
  }) => void;
  /**
   * Durable state a new child starts with, besides the spawn record (the CLI stores the
   * child's policy layers here, so a child resumed on its own is governed as it was). A throw
   * refuses the spawn: its message is the tool's error, and no child is created.
   */
  readonly childState?: (child: { readonly parentSessionId: string; readonly capability: Capability }) => {
    readonly [key: string]: unknown;
  };
  /**
   * Agents as tools: each becomes a tool named after the agent (input typed by `inputSchema`);
   * a call opens a child session through the same machinery as `spawn_agent` (depth limit,
   * parent link, cost roll-up, tools narrowed to the parent's) with `capability` as its kind.
   */
  readonly agentTools?: readonly AgentTool[];
}

/** An agent callable as a tool (see {@link SubagentsOptions.agentTools}). */
export interface AgentTool {
  /** The tool's name (the agent's name). */
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the call's arguments (default: `{ task: string }`). */
  readonly inputSchema?: JsonSchema;
  /** JSON Schema of the child's result (the child ends with a value matching it). */
  readonly output?: JsonSchema;
  /** The child's kind: its model, mode, system prompt, max turns, tools and policy. */
  readonly capability: Capability;
}

/** The task text of an agent-tool call: a `task` string argument as is, other input as JSON. */
export function agentToolTask(args: unknown): string {
  if (typeof args === "object" && args !== null) {
    const keys = Object.keys(args);
    const task = (args as { readonly task?: unknown }).task;
    if (keys.length === 1 && typeof task === "string") return task;
  }
  if (typeof args === "string") return args;
  return `Input:\n\n\`\`\`json\n${JSON.stringify(args ?? {}, null, 2)}\n\`\`\``;
}

/** The Lashlang operation name of an agent tool (`code-reviewer` → `agents.code_reviewer`). */
export function agentToolOperation(name: string): string {
  const op = name.replace(/[^A-Za-z0-9_]/g, "_");
  return /^[0-9]/.test(op) ? `_${op}` : op;
}

export interface SpawnArgs {
  readonly task: string;
  readonly capability?: string;
  readonly output?: unknown;
  readonly seed?: unknown;
}

/** The durable record a child session carries under {@link SPAWN_STATE_KEY}. */
export interface SpawnRecord {
  readonly parentSessionId: string;
  readonly parentTurnId: string | null;
  readonly callId: string;
  /** lash's id for the spawning call, unique in the parent session (the provider's `callId` may repeat). */
  readonly lashCallId?: string;
  readonly capability: string;
  readonly depth: number;
  readonly task: string;
  readonly schema?: JsonSchema;
}

/** `data` of the `childStarted` activity event on the parent's stream. */
export interface ChildStartedData {
  readonly childSessionId: string;
  readonly callId: string;
  /** lash's id for the spawning call, unique in the parent session (the provider's `callId` may repeat). */
  readonly lashCallId?: string;
  readonly task: string;
  readonly capability: string;
  readonly depth: number;
  readonly model: string;
  /** True when an existing child (from before a crash) is resumed instead of created. */
  readonly resumed: boolean;
}

/** `data` of the `childFinished` activity event on the parent's stream. */
export interface ChildFinishedData {
  readonly childSessionId: string;
  readonly callId: string;
  /** lash's id for the spawning call, unique in the parent session (the provider's `callId` may repeat). */
  readonly lashCallId?: string;
  readonly task: string;
  readonly capability: string;
  readonly outcome: "finished" | "failed" | "cancelled";
  readonly error?: string;
  readonly usage?: Usage;
  readonly costUsd?: number;
}

/** `details` of a `spawn_agent` tool result (kept in the graph for UIs and exporters). */
export interface SpawnDetails {
  readonly childSessionId: string;
  readonly capability: string;
  readonly depth: number;
  readonly outcome: "finished" | "failed" | "cancelled";
  readonly usage: Usage;
  readonly costUsd?: number;
}

type ChildResult =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly error: string;
      readonly cancelled?: boolean;
      readonly problems?: readonly string[];
    };

const fail = (cls: ToolFailureClass, message: string) => new ToolFailure({ class: cls, message });

const toFailure = (e: { readonly message: string }) =>
  fail("execution", `the child agent could not run: ${e.message}`);

function renderValue(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** Stop signals of the children running in this process, by child session id. */
const running = new Map<string, () => void>();

/**
 * Cancel one running child agent (and only it): its turn is cancelled gracefully (what
 * finished is committed), and its `spawn_agent` call returns a cancelled result, so the
 * parent's turn goes on. False when no child with this session id runs in this process.
 */
export function cancelChild(childSessionId: string): boolean {
  const stop = running.get(childSessionId);
  if (!stop) return false;
  stop();
  return true;
}

/** Session ids of the child agents running in this process, oldest first. */
export function runningChildren(): readonly string[] {
  return [...running.keys()];
}

/** Map a child's outcome to its result for the parent (validated against the required output). */
export function interpretOutcome(outcome: TurnOutcome, schema: JsonSchema | undefined): ChildResult {
  const typed = (value: unknown): ChildResult => {
    if (schema === undefined) return { ok: true, value };
    const problems = checkOutput(schema, value);
    return problems.length === 0
      ? { ok: true, value }
      : {
          ok: false,
          error: `the child agent's result does not match the required output:\n${problems.map((p) => `- ${p}`).join("\n")}`,
          problems,
        };
  };
  switch (outcome.type) {
    case "finished": {
      const f = outcome.finish;
      if (f.kind === "toolValue") {
        if (f.toolName === SUBMIT_ERROR) {
          const reason = (f.value as { readonly reason?: unknown } | null)?.reason;
          return { ok: false, error: `the child agent gave up: ${String(reason ?? "no reason given")}` };
        }
        if (f.toolName === SUBMIT_RESULT) return typed(unwrapSubmitted(schema, f.value));
        return typed(f.value);
      }
      if (f.kind === "finalValue") return typed(f.value);
      const answer = f.text.trim();
      if (schema === undefined) return { ok: true, value: answer };
      const parsed = extractJson(answer);
      if (!parsed.found)
        return {
          ok: false,
          error: `the child agent answered in prose instead of calling ${SUBMIT_RESULT} with the required output`,
          problems: [`the answer is not JSON; call ${SUBMIT_RESULT}`],
        };
      // a structured-output answer of a non-object schema comes as `{ "value": … }`
      return typed(unwrapSubmitted(schema, parsed.value));
    }
    case "frameSwitch":
      return { ok: true, value: { frameId: outcome.frameId, task: outcome.task } };
    case "stopped": {
      if (outcome.reason === "cancelled")
        return { ok: false, error: "the child agent was cancelled", cancelled: true };
      // the provider's structured-output check gave up (`outputMismatch`): a result of the wrong shape
      if (
        outcome.reason === "providerError" &&
        schema !== undefined &&
        /does not match the required output schema/.test(outcome.message ?? "")
      ) {
        const problems = (outcome.message ?? "")
          .split("\n")
          .filter((l) => l.startsWith("- "))
          .map((l) => l.slice(2));
        return {
          ok: false,
          error: `the child agent's result does not match the required output:\n${problems.map((p) => `- ${p}`).join("\n")}`,
          problems,
        };
      }
      const detail = outcome.message ? `: ${outcome.message}` : "";
      return { ok: false, error: `the child agent stopped (${outcome.reason})${detail}` };
    }
  }
}

/**
 * The outcome of a child's last committed turn, read back from its transcript
 * (used when a crash fell between the child's commit and the parent's record of it).
 */
export function outcomeFromTranscript(messages: readonly Message[]): TurnOutcome {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "user") break;
    for (const p of m.parts) {
      if (p.type === "toolResult" && !p.isError && (p.name === SUBMIT_RESULT || p.name === SUBMIT_ERROR)) {
        return { type: "finished", finish: { kind: "toolValue", toolName: p.name, value: p.value } };
      }
    }
    if (m.role === "assistant") {
      const text = m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      if (text.trim() !== "" && !m.parts.some((p) => p.type === "toolCall"))
        return { type: "finished", finish: { kind: "assistantMessage", text } };
    }
  }
  return { type: "stopped", reason: "incomplete", message: "the child's last turn ended without a result" };
}

/** The child's whole ledger (its own turns and its descendants), as `agent:<childId>` rows per model. */
function rollUp(
  sessions: Sessions,
  childId: string,
): Effect.Effect<{ rows: ToolUsage[]; total: Usage; costUsd?: number }> {
  return sessions.usage(childId).pipe(
    Effect.map((summary) => {
      const byModel = new Map<string, { usage: Usage; costUsd?: number }>();
      for (const row of summary.rows) {
        const g = byModel.get(row.model) ?? { usage: {} };
        g.usage = addUsage(g.usage, row.usage);
        if (row.costUsd !== undefined) g.costUsd = (g.costUsd ?? 0) + row.costUsd;
        byModel.set(row.model, g);
      }
      const rows = [...byModel].map(
        ([model, g]): ToolUsage => ({
          source: `agent:${childId}`,
          model,
          usage: g.usage,
          ...(g.costUsd !== undefined ? { costUsd: g.costUsd } : {}),
        }),
      );
      return {
        rows,
        total: summary.total,
        ...(summary.costUsd !== undefined ? { costUsd: summary.costUsd } : {}),
      };
    }),
    Effect.orElseSucceed(() => ({ rows: [], total: {} })),
  );
}

/**
 * The initial `rlm` state entry of an RLM child: `finishRequired` (with the output schema,
 * when there is one) and the raw final value as its answer format.
 */
export function rlmChildState(schema: JsonSchema | undefined): { readonly rlm: unknown } {
  return rlmSessionState({
    termination: { kind: "finishRequired", ...(schema !== undefined ? { schema } : {}) },
    finalAnswerFormat: { kind: "rawFinalValue" },
  });
}

function registryOf(options: SubagentsOptions): CapabilityRegistry {
  const c = options.capabilities;
  if (c instanceof CapabilityRegistry) return c;
  if (c) return new CapabilityRegistry(c);
  return CapabilityRegistry.defaults(options.models);
}

/**
 * Subagents: the `spawn_agent` tool (Lashlang `agents.spawn`). Each call opens
 * a child session linked to the call (`parentLink`), runs it to its end and
 * returns its final value; child usage rolls up into the parent's ledger as
 * `agent:<childSessionId>`.
 */
export function subagentsPlugin(options: SubagentsOptions = {}): Plugin {
  const withInstructions = (prompt: string): string =>
    options.childInstructions?.trim() ? `${prompt}\n\n${options.childInstructions.trim()}` : prompt;
  const registry = registryOf(options);
  const names = registry.names();
  if (names.length === 0) throw new Error("subagentsPlugin: register at least one capability");
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const defaultCapability = options.defaultCapability ?? (names.length === 1 ? names[0] : undefined);
  if (defaultCapability !== undefined && !registry.get(defaultCapability))
    throw new Error(
      `subagentsPlugin: default capability \`${defaultCapability}\` is not registered (registered: ${names.join(", ")})`,
    );

  const capabilityList = registry
    .list()
    .map((c) => `- \`${c.name}\`: ${c.description}`)
    .join("\n");

  const spawn: ToolDefinition<SpawnArgs> = {
    name: SPAWN_AGENT,
    description: [
      "Delegate a self-contained task to a subagent: a fresh agent that sees only `task` and `seed` (nothing of this conversation), works with its own tools and returns its final result.",
      'Several spawn_agent calls in one response run in parallel. Give `output` (a JSON Schema, or a shorthand record such as {"summary": "str", "files": "list[str]"}) to get a structured result.',
      `Capabilities:\n${capabilityList}`,
    ].join("\n"),
    inputSchema: {
      type: "object",
      properties: {
        task: { type: "string", description: "What the subagent must do, self-contained." },
        capability: {
          type: "string",
          enum: [...names],
          description:
            defaultCapability !== undefined
              ? `The kind of subagent (default \`${defaultCapability}\`).`
              : "The kind of subagent.",
        },
        output: {
          type: "object",
          description:
            'Required shape of the result: a JSON Schema or a shorthand record ({"field": "str" | "int" | "float" | "bool" | "record" | "list[T]"}).',
        },
        seed: { description: "JSON context the subagent starts from (its only context besides the task)." },
      },
      required: defaultCapability !== undefined ? ["task"] : ["task", "capability"],
      additionalProperties: false,
    },
    idempotent: true,
    // spawning changes nothing by itself: every call the child makes is governed on its own,
    // under the parent's policy layers plus its capability's (a child never gains a tool)
    effects: ["read"],
    family: "agent",
    timeoutMs: options.timeoutMs ?? 3_600_000,
    binding: { module: "agents", operation: "spawn" },
    execute: (args, ctx) => runSpawn(args, ctx),
  };

  const runSpawn = (
    args: SpawnArgs,
    ctx: ToolContext,
    fixed?: Capability,
  ): Effect.Effect<ToolOutput, ToolFailure> =>
    Effect.gen(function* () {
      const host: ToolHost | undefined = ctx.host;
      if (!host)
        return yield* fail(
          "unavailable",
          "spawn_agent is unavailable in this session: it needs the lash runtime as its host",
        );
      const { sessions, children } = host;
      const parent = host.session;
      const depth = (parent.parentLink?.depth ?? 0) + 1;
      if (depth > maxDepth)
        return yield* fail("invalidRequest", `subagent recursion depth exceeded: max depth is ${maxDepth}`);
      const task = typeof args.task === "string" ? args.task.trim() : "";
      if (task === "") return yield* fail("invalidRequest", "missing task: give the subagent a task to do");
      const capName = fixed?.name ?? args.capability ?? defaultCapability;
      if (capName === undefined)
        return yield* fail(
          "invalidRequest",
          `missing capability: expected one of ${names.map((n) => `\`${n}\``).join(", ")}`,
        );
      const capability = fixed ?? registry.get(capName);
      if (!capability)
        return yield* fail(
          "invalidRequest",
          `unknown capability \`${capName}\`: expected one of ${names.map((n) => `\`${n}\``).join(", ")}`,
        );
      let schema: JsonSchema | undefined;
      if (args.output !== undefined) {
        const spec = outputSchema(args.output);
        if (!spec.ok) return yield* fail("invalidRequest", spec.error);
        schema = spec.schema;
      }
      const emit = (name: "childStarted" | "childFinished", data: ChildStartedData | ChildFinishedData) =>
        Effect.sync(() => host.emit({ type: "plugin", plugin: PLUGIN_NAME, name, data }));

      // An existing child of this call (a re-run after a crash) is resumed, never duplicated.
      const siblings = yield* sessions.children(parent.id).pipe(Effect.mapError(toFailure));
      const existing = siblings.find((c) => {
        const rec = c.state[SPAWN_STATE_KEY] as SpawnRecord | undefined;
        return (
          c.parentLink?.callId === ctx.callId &&
          (rec === undefined || rec.parentTurnId === (ctx.turnId ?? null))
        );
      });

      const mode: SessionMode = existing?.mode ?? capability.mode ?? parent.mode;
      const plugin = childPlugin({
        capability: capability.name,
        depth,
        maxDepth,
        mode,
        ...(schema !== undefined ? { schema } : {}),
      });
      let child: SessionRecord;
      if (existing) {
        child = existing;
        yield* sessions.attachPlugins(child.id, [plugin]);
      } else {
        const parentTools = (yield* sessions
          .toolDefinitions(parent.id)
          .pipe(Effect.mapError(toFailure))).filter((t) => !CHILD_ONLY_TOOLS.has(t.name));
        const visible = new Set(parentTools.map((t) => t.name));
        const canSpawn = capability.spawn !== false && depth < maxDepth;
        const picked = capability
          .tools({ parent, parentTools, depth })
          .filter((n) => visible.has(n) && (canSpawn || n !== SPAWN_AGENT));
        const allow = [...new Set(picked), ...plugin.tools!.map((t) => t.name)];
        let extraState: { readonly [key: string]: unknown } = {};
        if (options.childState) {
          const childState = options.childState;
          const got = yield* Effect.either(
            Effect.try(() => childState({ parentSessionId: parent.id, capability })),
          );
          if (got._tag === "Left")
            return yield* fail(
              "invalidRequest",
              got.left.error instanceof Error ? got.left.error.message : String(got.left.error),
            );
          extraState = got.right;
        }
        const record: SpawnRecord = {
          parentSessionId: parent.id,
          parentTurnId: ctx.turnId ?? null,
          callId: ctx.callId,
          ...(ctx.lashCallId !== undefined ? { lashCallId: ctx.lashCallId } : {}),
          capability: capability.name,
          depth,
          task,
          ...(schema !== undefined ? { schema } : {}),
        };
        child = yield* sessions
          .create({
            model: capability.model ?? parent.model,
            mode,
            systemPrompt: withInstructions(capability.systemPrompt ?? DEFAULT_CHILD_SYSTEM_PROMPT),
            title: task.replace(/\s+/g, " ").slice(0, 80),
            tools: allow,
            parentLink: { sessionId: parent.id, callId: ctx.callId, depth },
            plugins: [plugin],
            state: {
              ...extraState,
              [SPAWN_STATE_KEY]: record,
              ...(mode === "rlm" ? rlmChildState(schema) : {}),
            },
            ...(parent.cwd !== undefined ? { cwd: parent.cwd } : {}),
          })
          .pipe(Effect.mapError(toFailure));
      }
      const childId = child.id;
      if (options.onChild) {
        const onChild = options.onChild;
        yield* Effect.sync(() => onChild({ sessionId: childId, parentSessionId: parent.id, capability }));
      }
      const turnOptions = capability.maxTurns !== undefined ? { maxTurns: capability.maxTurns } : {};
      yield* emit("childStarted", {
        childSessionId: childId,
        callId: ctx.callId,
        ...(ctx.lashCallId !== undefined ? { lashCallId: ctx.lashCallId } : {}),
        task,
        capability: capability.name,
        depth,
        model: child.model,
        resumed: existing !== undefined,
      });

      const finished = (outcome: ChildFinishedData["outcome"], extra: Partial<ChildFinishedData>) =>
        emit("childFinished", {
          childSessionId: childId,
          callId: ctx.callId,
          ...(ctx.lashCallId !== undefined ? { lashCallId: ctx.lashCallId } : {}),
          task,
          capability: capability.name,
          outcome,
          ...extra,
        });

      const body = Effect.gen(function* () {
        // 1. the child's turn: fresh, resumed from its journal, or already committed
        let last: TurnOutcome;
        const asLast = (r: ChildTurnResult) => r.outcome;
        if (!existing) {
          last = asLast(
            yield* children.turn(childId, { text: renderTask(task, args.seed, schema, mode) }, turnOptions),
          );
        } else {
          const resumed = yield* children.resumePending(childId, turnOptions);
          if (resumed) last = asLast(resumed);
          else if (child.turnCount === 0)
            last = asLast(
              yield* children.turn(childId, { text: renderTask(task, args.seed, schema, mode) }, turnOptions),
            );
          else last = outcomeFromTranscript(yield* sessions.readView(childId));
        }
        let result = interpretOutcome(last, schema);
        // 2. one repair turn when the child ignored the required output
        if (!result.ok && result.problems && schema !== undefined) {
          const now = yield* sessions.get(childId);
          if (now.turnCount < 2) {
            const repair = yield* children.turn(
              childId,
              {
                text: `Your result does not match the required output:\n${result.problems.map((p) => `- ${p}`).join("\n")}\n${mode === "rlm" ? "Finish now with `finish <value>` where the value matches the schema." : `Call \`${SUBMIT_RESULT}\` now with a result that matches the schema.`}`,
              },
              turnOptions,
            );
            result = interpretOutcome(repair.outcome, schema);
          }
        }
        return result;
      }).pipe(Effect.mapError(toFailure));

      // cancelChild(childId) stops just this child: its turn is interrupted (a graceful cancel)
      const stop = yield* Deferred.make<void>();
      let stoppedByUser = false;
      running.set(childId, () => {
        stoppedByUser = true;
        Deferred.unsafeDone(stop, Exit.void);
      });
      const stoppedResult: ChildResult = {
        ok: false,
        error: "the child agent was cancelled by the user",
        cancelled: true,
      };
      const result = yield* Effect.raceFirst(
        body.pipe(
          Effect.onInterrupt(() =>
            stoppedByUser
              ? Effect.void
              : Effect.flatMap(rollUp(sessions, childId), (u) =>
                  finished("cancelled", {
                    error: "the parent cancelled the child agent",
                    usage: u.total,
                    ...(u.costUsd !== undefined ? { costUsd: u.costUsd } : {}),
                  }),
                ),
          ),
        ),
        Effect.as(Deferred.await(stop), stoppedResult),
      ).pipe(Effect.ensuring(Effect.sync(() => running.delete(childId))));
      const spent = yield* rollUp(sessions, childId);
      const outcome: ChildFinishedData["outcome"] = result.ok
        ? "finished"
        : result.cancelled
          ? "cancelled"
          : "failed";
      yield* finished(outcome, {
        ...(result.ok ? {} : { error: result.error }),
        usage: spent.total,
        ...(spent.costUsd !== undefined ? { costUsd: spent.costUsd } : {}),
      });
      const details: SpawnDetails = {
        childSessionId: childId,
        capability: capability.name,
        depth,
        outcome,
        usage: spent.total,
        ...(spent.costUsd !== undefined ? { costUsd: spent.costUsd } : {}),
      };
      if (!result.ok) {
        return {
          content: [{ type: "text", text: `${result.error} (child session ${childId})` }],
          isError: true,
          details,
          usage: spent.rows,
        } satisfies ToolOutput;
      }
      return {
        content: [{ type: "text", text: renderValue(result.value) }],
        value: result.value,
        details,
        usage: spent.rows,
      } satisfies ToolOutput;
    });

  const agentTools = (options.agentTools ?? []).map(
    (a): ToolDefinition => ({
      name: a.name,
      description: a.description,
      inputSchema: a.inputSchema ?? {
        type: "object",
        properties: { task: { type: "string", description: "What the agent must do, self-contained." } },
        required: ["task"],
        additionalProperties: false,
      },
      idempotent: true,
      effects: ["read"],
      family: "agent",
      timeoutMs: options.timeoutMs ?? 3_600_000,
      binding: { module: "agents", operation: agentToolOperation(a.name) },
      execute: (args, ctx) =>
        runSpawn(
          { task: agentToolTask(args), ...(a.output !== undefined ? { output: a.output } : {}) },
          ctx,
          a.capability,
        ),
    }),
  );

  return {
    name: PLUGIN_NAME,
    tools: [spawn as ToolDefinition, ...agentTools],
    status: () => ({ capabilities: names, maxDepth }),
  };
}
