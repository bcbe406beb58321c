/**
 * The Lashlang executor of the RLM mode: runs one cell against the frame's persistent state.
 * Module operations go through the runtime's tool dispatch (validation, journal, hooks, output
 * budget, concurrency for aggregate awaits); `llm.query` is a journaled one-shot model call;
 * `control.continue_as` asks the runtime to switch agent frames.
 */
import type {
  CellProcessContext,
  HostSurface,
  Json,
  LashlangHost,
  OperationCall,
  OperationResult,
  ProcessRecord,
} from "@lash/lashlang";
import {
  type AttachmentPart,
  type CompletedToolCall,
  type ExecResult,
  type LlmRequest,
  type PendingToolCall,
  type RlmExecDetails,
  type RlmOperation,
  type RlmTermination,
  responseText,
  sha256Hex,
  type ToolControl,
  type ToolResultPart,
  type Usage,
} from "@lash/sansio";
import { cleanCode, LASHLANG, toolResultPart } from "@lash/sansio/internal";
import * as Cause from "effect/Cause";
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Option from "effect/Option";
import * as Runtime from "effect/Runtime";
import { validateJson } from "../jsonschema.ts";
import type { CodeExecutor, ExecContext } from "../runtime.ts";
import { TurnError } from "../runtime.ts";
import type { ToolDefinition } from "../tool.ts";
import { loadLashlang } from "./lashlang.ts";
import { clockTimers, processActivity } from "./processes.ts";
import { FrameState, keptRecords, type RlmSessionState } from "./state.ts";
import { cronSchedule, TRIGGER_EVENT, type TriggerRecord } from "./triggers.ts";

/** Tool call records kept per cell (reference §1.15). */
export const MAX_CELL_TOOL_RECORDS = 128;

export const LLM_QUERY = "llm_query";
export const CONTINUE_AS = "continue_as";

const LLM_QUERY_INPUT = {
  type: "object",
  properties: {
    task: { type: "string", description: "The focused sub-question to answer." },
    inputs: { description: "Any value the answer must be based on (sent as JSON)." },
    output: {
      description:
        'The result type: a `Type { ... }` literal or a shorthand record like `{ claims: "list[str]", score: "float" }`. Default: a concise string.',
    },
  },
  required: ["task"],
  additionalProperties: false,
} as const;

const CONTINUE_AS_INPUT = {
  type: "object",
  properties: {
    task: { type: "string", description: "What the new frame must do (its first user message)." },
    seed: { type: "object", description: "Values the new frame starts with, as globals." },
  },
  required: ["task"],
  additionalProperties: false,
} as const;

const BUILTINS: readonly RlmOperation[] = [
  {
    name: LLM_QUERY,
    module: "llm",
    operation: "query",
    description:
      "A one-shot, tool-less model call on a focused sub-question: it sees only `task` and `inputs` and returns a value of the `output` type (typed result; a failure is an error result).",
    inputSchema: LLM_QUERY_INPUT,
    returns: "value of the `output` type (default str)",
  },
  {
    name: CONTINUE_AS,
    module: "control",
    operation: "continue_as",
    description:
      "Ends this turn and continues in a fresh agent frame: no variables, no message history — only the `seed` entries (as globals) and `task` (as the new input). Make it the last statement of the cell; do not call `finish` after it.",
    inputSchema: CONTINUE_AS_INPUT,
    returns: "{ok, frame_id, task, seed_keys, seed_count}",
  },
];

/** The `triggers` ability's operations (rlm/triggers.ts), with `rlmMode({ triggers: true })`. */
const TRIGGER_OPS: readonly RlmOperation[] = [
  {
    name: "cron_schedule",
    module: "cron",
    operation: "Schedule",
    description:
      'A trigger source firing on a cron schedule (five fields, e.g. "*/15 * * * *"); a value, not awaited.',
    inputSchema: {
      type: "object",
      properties: { cron: { type: "string" }, timezone: { type: "string" } },
      required: ["cron"],
      additionalProperties: false,
    },
    returns: "trigger source",
  },
  {
    name: "triggers_register",
    module: "triggers",
    operation: "register",
    description:
      "Register a trigger: when `source` fires, run process `target` (declared in this cell) with `inputs` (every parameter mapped once; `trigger.event` is the firing). Stored with the session.",
    inputSchema: {
      type: "object",
      properties: {
        source: { type: "object" },
        target: { type: "string" },
        inputs: { type: "object" },
        name: { type: "string" },
      },
      required: ["source", "target"],
      additionalProperties: false,
    },
    returns: "{id, name, target, source, enabled, next_fire}",
  },
  {
    name: "triggers_list",
    module: "triggers",
    operation: "list",
    description: "The session's trigger registrations.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    returns: "list of {id, name, target, source, enabled, next_fire}",
  },
  {
    name: "triggers_delete",
    module: "triggers",
    operation: "delete",
    description: "Delete a trigger registration by id (or name).",
    inputSchema: {
      type: "object",
      properties: { id: { type: "string" } },
      required: ["id"],
      additionalProperties: false,
    },
    returns: "{deleted}",
  },
];

/** The operations Lashlang can call in a turn with these tools (bound tools first, then built-ins). */
export function rlmOperations(
  tools: ReadonlyMap<string, ToolDefinition>,
  options: { readonly triggers?: boolean } = {},
): RlmOperation[] {
  const out: RlmOperation[] = [];
  const paths = new Set<string>();
  for (const tool of tools.values()) {
    const b = tool.binding;
    if (!b) continue;
    const path = `${b.module}.${b.operation}`;
    if (paths.has(path)) continue;
    paths.add(path);
    out.push({
      name: tool.name,
      module: b.module,
      operation: b.operation,
      description: tool.description,
      inputSchema: tool.inputSchema,
      ...(b.returns !== undefined ? { returns: b.returns } : {}),
    });
  }
  for (const b of BUILTINS) if (!paths.has(`${b.module}.${b.operation}`)) out.push(b);
  if (options.triggers)
    for (const b of TRIGGER_OPS) if (!paths.has(`${b.module}.${b.operation}`)) out.push(b);
  return out;
}

export function hostSurface(ops: readonly RlmOperation[]): HostSurface {
  const modules: {
    [path: string]: { operations: { [op: string]: { tool: string; input: Json; description: string } } };
  } = {};
  for (const op of ops) {
    const m = modules[op.module] ?? { operations: {} };
    modules[op.module] = m;
    m.operations[op.operation] = {
      tool: op.name,
      input: op.inputSchema as Json,
      description: op.description,
    };
  }
  return { modules };
}

export interface ExecutorOptions {
  /** Model for `llm.query` (default: the session's). */
  readonly llmQueryModel?: string;
  /**
   * Projected bindings (reference §1.12, §2.8): read-only host values in every cell's scope,
   * beside `history` (CLI `--rlm-var`). JSON values; a cell that assigns one fails to link with
   * "`name` is a read-only projected binding". See `checkBindings` for the names allowed.
   */
  readonly bindings?: { readonly [name: string]: unknown };
  /** Step budget per cell (Lashlang default: 10,000,000). */
  readonly stepBudget?: number;
  /**
   * Memory budget per cell: approximate bytes of values a cell may allocate (Lashlang default:
   * 256 MiB). Over it the cell ends with a "memory budget exceeded" error the model sees, and its
   * assignments are discarded.
   */
  readonly memoryBudget?: number;
  /**
   * The `triggers` ability: `cron.Schedule`, `triggers.register/list/delete` in the catalog, and
   * the read-only `trigger` binding (`trigger.event`). Default off.
   */
  readonly triggers?: boolean;
}

function isRecord(u: unknown): u is { [k: string]: unknown } {
  return u !== null && typeof u === "object" && !Array.isArray(u);
}

function textOf(parts: readonly { type: string; text?: string }[]): string {
  return parts.flatMap((p) => (p.type === "text" && p.text !== undefined ? [p.text] : [])).join("\n");
}

/** Decoded byte size of base64 data. */
function base64Size(data: string | undefined): number {
  if (!data) return 0;
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - pad;
}

function collectImageIds(j: unknown, out: string[]): void {
  if (Array.isArray(j)) for (const x of j) collectImageIds(x, out);
  else if (isRecord(j)) {
    if (j.type === "image" && typeof j.id === "string" && typeof j.mime === "string") out.push(j.id);
    else for (const v of Object.values(j)) collectImageIds(v, out);
  }
}

// ---------------------------------------------------------------------------------------------
// llm.query

const SHORTHAND: { readonly [k: string]: Json } = {
  str: { type: "string" },
  string: { type: "string" },
  int: { type: "integer" },
  integer: { type: "integer" },
  float: { type: "number" },
  number: { type: "number" },
  bool: { type: "boolean" },
  boolean: { type: "boolean" },
  record: { type: "object" },
  dict: { type: "object" },
  any: {},
};

/** `output` of `llm.query`: a Type literal (`{"$lash_type": schema}`) or a shorthand record. */
export function outputSchema(output: unknown): { schema: Json } | { error: string } {
  if (output === undefined || output === null) return { schema: { type: "string" } };
  if (isRecord(output) && "$lash_type" in output) return { schema: output.$lash_type as Json };
  const fromShorthand = (v: unknown, path: string): Json | string => {
    if (typeof v === "string") {
      const t = v.trim();
      const list = /^list\[(.*)\]$/.exec(t);
      if (list) {
        const item = fromShorthand(list[1], path);
        return typeof item === "string" ? item : { type: "array", items: item };
      }
      return SHORTHAND[t] ?? `unknown type \`${t}\` at ${path}`;
    }
    if (isRecord(v)) {
      if ("$lash_type" in v) return v.$lash_type as Json;
      const properties: { [k: string]: Json } = {};
      for (const [k, x] of Object.entries(v)) {
        const s = fromShorthand(x, `${path}.${k}`);
        if (typeof s === "string") return s;
        properties[k] = s;
      }
      return { type: "object", properties, required: Object.keys(v), additionalProperties: false };
    }
    return `\`output\` must be a Type literal or a shorthand record (at ${path})`;
  };
  const s = fromShorthand(output, "output");
  return typeof s === "string" ? { error: s } : { schema: s };
}

const LLM_QUERY_SYSTEM =
  "You answer one focused sub-question. Use only the task and the inputs you are given; you have no tools. " +
  "Reply with a single JSON object and nothing else.";

/**
 * The request of one `llm.query` — the RLM built-in and the standard-mode `llm_query` tool
 * alike: the task, inputs and output type as one tool-less model call, with the reply's
 * shape (`queryReplySchema`) as structured output. `id` names the task message.
 */
export function llmQueryRequest(
  rawArgs: unknown,
  id: string,
):
  | {
      readonly task: string;
      readonly inputs: unknown;
      readonly schema: Json;
      readonly request: Pick<LlmRequest, "system" | "messages" | "tools" | "output">;
    }
  | { readonly error: string } {
  const args = isRecord(rawArgs) ? rawArgs : {};
  if (typeof args.task !== "string" || args.task.trim() === "")
    return { error: "missing required parameter: task" };
  const out = outputSchema(args.output);
  if ("error" in out) return { error: out.error };
  return {
    task: args.task,
    inputs: args.inputs,
    schema: out.schema,
    request: {
      system: LLM_QUERY_SYSTEM,
      messages: [
        {
          id: `${id}.task`,
          role: "user",
          parts: [{ type: "text", text: llmQueryPrompt(args.task, args.inputs, out.schema) }],
        },
      ],
      tools: [],
      // the provider sends the reply's shape as structured output and checks the reply
      output: { schema: queryReplySchema(out.schema), name: "llm_query_reply" },
    },
  };
}

/** The graph record's `details` of one `llm.query` (what exports show). */
export function llmQueryDetails(
  q: { readonly task: string; readonly inputs: unknown; readonly schema: Json },
  model: string,
  usage: Usage | undefined,
): Json {
  return {
    kind: "llm.query",
    task: q.task,
    ...(q.inputs !== undefined ? { inputs: q.inputs as Json } : {}),
    output: q.schema,
    model,
    ...(usage !== undefined && Object.keys(usage).length > 0 ? { usage: usage as Json } : {}),
  };
}

function llmQueryPrompt(task: string, inputs: unknown, schema: Json): string {
  const blocks = [`Task:\n${task}`];
  if (inputs !== undefined) blocks.push(`Inputs:\n\`\`\`json\n${JSON.stringify(inputs, null, 2)}\n\`\`\``);
  blocks.push(
    [
      'Answer with a JSON object `{"kind": "value", "value": <value>, "error": null}` where <value> matches this JSON Schema:',
      "```json",
      JSON.stringify(schema, null, 2),
      "```",
      'If the task cannot be answered from what you were given, answer `{"kind": "error", "value": null, "error": "<why>"}`.',
    ].join("\n"),
  );
  return blocks.join("\n\n");
}

/** The JSON Schema of an `llm.query` reply: `{kind, value, error}` with `value` of the output type. */
export function queryReplySchema(schema: Json): { [k: string]: unknown } {
  return {
    type: "object",
    properties: {
      kind: { type: "string", enum: ["value", "error"] },
      value: { anyOf: [schema, { type: "null" }] },
      error: { anyOf: [{ type: "string" }, { type: "null" }] },
    },
    required: ["kind", "value", "error"],
    additionalProperties: false,
  };
}

/** The outermost JSON object in a model reply (tolerates text around it). */
export function extractJsonObject(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) throw new Error("the reply contains no JSON object");
  return JSON.parse(text.slice(start, end + 1));
}

// ---------------------------------------------------------------------------------------------
// The executor

/** Lookup of the per-session state the executor works on. */
export interface RlmStateAccess {
  session(ctx: ExecContext): RlmSessionState;
  /** The session's termination (its own, else the mode's default). */
  termination(ctx: ExecContext): RlmTermination;
}

/** Apply a cell's durable effects to the session state (after running it, or on replay). */
export function applyExecResult(state: RlmSessionState, frameId: string, result: ExecResult): void {
  const d = result.details;
  if (isRecord(d) && isRecord(d.frame)) state.frames.set(frameId, FrameState.restore(d.frame as never));
  if (isRecord(d) && Array.isArray(d.triggers)) state.triggers.records = [...(d.triggers as TriggerRecord[])];
  if (isRecord(d) && isRecord(d.modules))
    for (const [ref, text] of Object.entries(d.modules))
      if (typeof text === "string") state.modules.set(ref, text);
  if (isRecord(d) && Array.isArray(d.processes))
    state.processRuntime().restore(d.processes as ProcessRecord[]);
  const c = result.control;
  if (c?.type === "frameSwitch" && !state.frames.has(c.frameId))
    state.frames.set(c.frameId, FrameState.seeded(c.seed));
}

/** Names a projected binding may have: an identifier, not `history` (always bound). Throws a `TypeError` naming the problem. */
export function checkBindings(bindings: { readonly [name: string]: unknown }): void {
  for (const name of Object.keys(bindings)) {
    if (name === "history")
      throw new TypeError(
        "the projected binding `history` is reserved (the RLM history); choose another name",
      );
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new TypeError(
        `the projected binding name \`${name}\` is not an identifier; use letters, digits and _ (not first a digit)`,
      );
  }
}

/** What a cell's host needs (one per executed or replayed cell). */
interface CellHostInput {
  readonly ctx: ExecContext;
  readonly session: RlmSessionState;
  readonly frame: FrameState;
  readonly runtime: Runtime.Runtime<never>;
  readonly source: string;
  readonly byPath: ReadonlyMap<string, RlmOperation>;
  readonly triggers: boolean;
  readonly bindings: { readonly [name: string]: unknown };
  readonly options: ExecutorOptions;
}

/**
 * The Lashlang host of one cell: module operations through the turn's dispatch (journaled under
 * the cell's key), the built-ins, and the records of the step. Process runs the cell starts keep
 * using it after the cell has ended (for the rest of the turn).
 */
function cellHost(input: CellHostInput) {
  const { ctx, session, frame, runtime, source, byPath, triggers, bindings, options } = input;
  const runExit = Runtime.runPromiseExit(runtime);
  let control: ToolControl | undefined;
  let fatal: TurnError | undefined;
  const records: ToolResultPart[] = [];
  let overflow = 0;
  const images: AttachmentPart[] = [];

  /** Run a journaled runtime effect from the (promise-based) Lashlang host. */
  const run = async <A>(effect: Effect.Effect<A, TurnError>): Promise<A | undefined> => {
    const exit = await runExit(effect);
    if (Exit.isSuccess(exit)) return exit.value;
    const failure = Cause.failureOption(exit.cause);
    fatal ??= Option.isSome(failure)
      ? failure.value
      : new TurnError({
          sessionId: ctx.session.id,
          reason: "store",
          message: `a cell operation died: ${Cause.pretty(exit.cause)}`,
        });
    return undefined;
  };

  const record = (r: CompletedToolCall) => {
    if (records.length >= MAX_CELL_TOOL_RECORDS) {
      overflow++;
      return;
    }
    records.push(toolResultPart(r));
  };

  /** An executor built-in (`llm.query`, `continue_as`) as a tool-result record of the step. */
  const builtinRecord = (call: OperationCall, name: string, result: OperationResult, details: Json) =>
    record({
      callId: call.id,
      name,
      content: [{ type: "text", text: result.ok ? JSON.stringify(result.value) : result.error }],
      isError: !result.ok,
      ...(result.ok ? { value: result.value } : {}),
      details,
    });

  const toResult = (r: CompletedToolCall): OperationResult => {
    const content = r.full ?? r.content;
    const text = textOf(content);
    if (r.isError) return { ok: false, error: text || `${r.name} failed` };
    let value: unknown = r.value !== undefined ? r.value : text;
    const imgs = content.filter(
      (p): p is AttachmentPart => p.type === "attachment" && p.mediaType.startsWith("image/"),
    );
    if (imgs.length > 0) {
      const descriptors = imgs.map((p, i) => {
        const id = `img:${r.callId}:${i}`;
        frame.addImage(id, { ...p, name: id });
        return { type: "image", id, mime: p.mediaType, label: p.name ?? "", size: base64Size(p.data) };
      });
      const one = descriptors.length === 1 ? descriptors[0] : descriptors;
      value = isRecord(value) ? { ...value, [descriptors.length === 1 ? "image" : "images"]: one } : one;
    }
    return { ok: true, value: (value ?? null) as Json };
  };

  const activity = (call: OperationCall, name: string, result: OperationResult, started: boolean) =>
    run(
      started
        ? ctx.emit({ type: "toolStarted", callId: call.id, name, args: call.args, family: "lashlang" })
        : ctx.emit({
            type: "toolCompleted",
            callId: call.id,
            name,
            isError: !result.ok,
            content: [{ type: "text", text: result.ok ? JSON.stringify(result.value) : result.error }],
            durationMs: 0,
            replayed: false,
          }),
    );

  const llmQuery = async (call: OperationCall): Promise<OperationResult> => {
    const q = llmQueryRequest(call.args, call.id);
    if ("error" in q) return { ok: false, error: `llm.query: ${q.error}` };
    await activity(call, LLM_QUERY, { ok: true, value: null }, true);
    const r = await run(
      ctx.complete(
        {
          ...(options.llmQueryModel !== undefined ? { model: options.llmQueryModel } : {}),
          ...q.request,
        },
        `llm:${call.id}`,
      ),
    );
    let result: OperationResult;
    if (r === undefined) result = { ok: false, error: "llm.query: the runtime failed" };
    else if (!r.ok) result = { ok: false, error: `llm.query: the model call failed: ${r.error.message}` };
    else result = parseQueryReply(responseText(r.response), q.schema);
    await activity(call, LLM_QUERY, result, false);
    // the query is a record of the step in the graph (exports show it; the model does not)
    builtinRecord(
      call,
      LLM_QUERY,
      result,
      llmQueryDetails(q, options.llmQueryModel ?? ctx.session.model, r?.ok ? r.response.usage : undefined),
    );
    return result;
  };

  const continueAs = (call: OperationCall): OperationResult => {
    const args = isRecord(call.args) ? call.args : {};
    if (typeof args.task !== "string" || args.task.trim() === "")
      return { ok: false, error: "missing required parameter: task" };
    const seed = args.seed ?? {};
    if (!isRecord(seed)) return { ok: false, error: "`seed` must be a record" };
    for (const name of ["history", ...Object.keys(bindings)])
      if (name in seed)
        return { ok: false, error: `seed entry \`${name}\` collides with a read-only binding` };
    if (control) return { ok: false, error: "continue_as was already called in this cell" };
    const frameId = `frame_${sha256Hex(`${ctx.key}:${call.id}`).slice(0, 24)}`;
    control = { type: "frameSwitch", frameId, task: args.task, seed };
    const keys = Object.keys(seed).sort();
    const result: OperationResult = {
      ok: true,
      value: { ok: true, frame_id: frameId, task: args.task, seed_keys: keys, seed_count: keys.length },
    };
    builtinRecord(call, CONTINUE_AS, result, {
      kind: "continue_as",
      frameId,
      task: args.task,
      seedKeys: keys,
    });
    return result;
  };

  const triggerOp = (name: string, args: Json): OperationResult => {
    if (name === "cron_schedule") return cronSchedule(args);
    if (name === "triggers_register") return session.triggers.register(args, source);
    if (name === "triggers_list") return session.triggers.list();
    return session.triggers.delete(args);
  };

  const callBatch = async (calls: OperationCall[]): Promise<OperationResult[]> => {
    // After a cancel (or a fatal runtime error) the rest of the cell gets error results at once.
    if (fatal || (await run(Deferred.isDone(ctx.cancelled))))
      return calls.map(() => ({ ok: false, error: "cancelled: the turn was stopped" }));
    const results: (OperationResult | undefined)[] = calls.map(() => undefined);
    const pending: { index: number; call: PendingToolCall }[] = [];
    const builtins: Promise<void>[] = [];
    calls.forEach((c, index) => {
      const op = byPath.get(`${c.module}.${c.operation}`);
      if (!op) {
        results[index] = { ok: false, error: `unknown operation ${c.module}.${c.operation}` };
        return;
      }
      if (op.name === LLM_QUERY && !ctx.tools.has(LLM_QUERY))
        builtins.push(
          llmQuery(c).then((r) => {
            results[index] = r;
          }),
        );
      else if (op.name === CONTINUE_AS && !ctx.tools.has(CONTINUE_AS)) results[index] = continueAs(c);
      else if (triggers && TRIGGER_OPS.includes(op) && !ctx.tools.has(op.name))
        results[index] = triggerOp(op.name, c.args);
      else pending.push({ index, call: { callId: c.id, name: op.name, args: c.args } });
    });
    if (pending.length > 0) {
      // One dispatch batch per aggregate await, labelled by its first call id (deterministic).
      const label = pending.length === 1 ? pending[0]!.call.callId : `batch:${pending[0]!.call.callId}`;
      const done = await run(
        ctx.dispatch(
          pending.map((p) => p.call),
          label,
        ),
      );
      pending.forEach((p, i) => {
        const r = done?.[i];
        if (!r) {
          results[p.index] = { ok: false, error: `${p.call.name} did not complete` };
          return;
        }
        record(r);
        results[p.index] = toResult(r);
      });
    }
    await Promise.all(builtins);
    return results.map((r) => r ?? { ok: false, error: "no result" });
  };

  const host: LashlangHost = {
    call: async (c) => (await callBatch([c]))[0]!,
    callBatch,
    print: (value) => {
      const ids: string[] = [];
      collectImageIds(value, ids);
      for (const id of ids) {
        const img = frame.images.get(id);
        if (img && !images.some((i) => i.name === id)) images.push(img);
      }
    },
  };

  return {
    host,
    records,
    images,
    run,
    overflow: () => overflow,
    control: () => control,
    fatal: () => fatal,
  };
}

/** Where the runs a cell starts do their work: its host, durable timers and records, its events. */
function processContext(
  ctx: ExecContext,
  runtime: Runtime.Runtime<never>,
  cell: ReturnType<typeof cellHost>,
  options: ExecutorOptions,
  moduleRef: string,
): CellProcessContext {
  const runPromise = Runtime.runPromise(runtime);
  return {
    host: cell.host,
    timers: clockTimers(runtime, (label, value) => ctx.remember?.(label, value) ?? value, ctx.cancelled),
    record: (label, compute) => {
      const value = Effect.promise(compute);
      return runPromise(ctx.remember ? Effect.orDie(ctx.remember(label, value)) : value);
    },
    onEvent: (e) => void cell.run(ctx.emit(processActivity(e))),
    runOptions: {
      ...(options.stepBudget !== undefined ? { stepBudget: options.stepBudget } : {}),
      ...(options.memoryBudget !== undefined ? { memoryBudget: options.memoryBudget } : {}),
    },
    // the cell's replay key names the runs it starts (unique per session, the same after a restart)
    idPrefix: `p${sha256Hex(ctx.key).slice(0, 10)}`,
    moduleRef,
    origin: ctx.key,
  };
}

/** The process runs of a session and the modules they name, as a cell's details record them. */
function processDetails(session: RlmSessionState): {
  processes?: ProcessRecord[];
  modules?: { [ref: string]: string };
} {
  const records = keptRecords(session.processes?.records() ?? []);
  if (records.length === 0) return {};
  const modules: { [ref: string]: string } = {};
  for (const r of records) {
    const text = r.module ? session.modules.get(r.module) : undefined;
    if (r.module && text !== undefined) modules[r.module] = text;
  }
  return { processes: records, modules };
}

export function rlmExecutor(access: RlmStateAccess, options: ExecutorOptions = {}): CodeExecutor {
  const bindings = options.bindings ?? {};
  checkBindings(bindings);
  const projectedBindings: { [name: string]: { get: () => Json; typeName: string } } = {};
  for (const [name, value] of Object.entries(bindings)) {
    // the reference's rule: projected host values are JSON values
    const json = JSON.parse(JSON.stringify(value) ?? "null") as Json;
    projectedBindings[name] = { get: () => json, typeName: "any" };
  }
  return {
    replayed: (ctx, _language, code, result) =>
      Effect.gen(function* () {
        yield* loadLashlang;
        const session = access.session(ctx);
        applyExecResult(session, ctx.frameId, result);
        // runs this cell started that were unfinished when the host stopped: run them again from
        // their module in this cell's context (the journal serves what they had completed)
        const unfinished = session
          .processRuntime()
          .unfinished()
          .filter((r) => r.origin === ctx.key);
        if (unfinished.length === 0) return;
        const runtime = yield* Effect.runtime<never>();
        const source = cleanCode(code);
        const triggers = options.triggers === true;
        const ops = rlmOperations(ctx.tools, { triggers });
        const byPath = new Map(ops.map((o) => [`${o.module}.${o.operation}`, o]));
        const frame = session.frame(ctx.frameId);
        const cell = cellHost({ ctx, session, frame, runtime, source, byPath, triggers, bindings, options });
        for (const r of unfinished) {
          const text = (r.module && session.modules.get(r.module)) ?? source;
          const moduleRef = r.module ?? `sha256:${sha256Hex(text)}`;
          session.processRuntime().resume(r.id, text, processContext(ctx, runtime, cell, options, moduleRef));
        }
      }),

    execute: (ctx, language, code) =>
      Effect.gen(function* () {
        if (language !== LASHLANG)
          return {
            ok: false,
            output: [],
            error: `the rlm executor runs ${LASHLANG} cells, not ${language}`,
          } satisfies ExecResult;
        const { runCell } = yield* loadLashlang;
        const session = access.session(ctx);
        const frame = session.frame(ctx.frameId);
        const runtime = yield* Effect.runtime<never>();
        const source = cleanCode(code);
        const triggers = options.triggers === true;
        const ops = rlmOperations(ctx.tools, { triggers });
        const byPath = new Map(ops.map((o) => [`${o.module}.${o.operation}`, o]));
        const surface = hostSurface(ops);
        const cell = cellHost({ ctx, session, frame, runtime, source, byPath, triggers, bindings, options });
        const { records, images } = cell;

        // Processes: a run keeps this cell's host (one dispatch path) after the cell ends; its
        // sleeps and consumed signals are journaled under the cell's key (rlm/processes.ts).
        const processes = session.processRuntime();
        const moduleRef = `sha256:${sha256Hex(source)}`;
        if (/\bprocess\b/.test(source)) session.modules.set(moduleRef, source);
        const processCell = processContext(ctx, runtime, cell, options, moduleRef);

        const termination = access.termination(ctx);
        const result = yield* Effect.tryPromise({
          try: async () => {
            return runCell(frame.state, source, processes.forCell(source, processCell), {
              surface,
              checkOptions: { abilities: { processes: true, sleep: true, processSignals: true, triggers } },
              projected: {
                ...projectedBindings,
                history: { get: () => session.history as unknown as Json, typeName: "list<HistoryItem>" },
                // `trigger.event` in `triggers.register({ inputs })`: a placeholder for the firing
                ...(triggers ? { trigger: { get: () => ({ event: { [TRIGGER_EVENT]: true } }) } } : {}),
              },
              cellId: `i${ctx.iteration}`,
              ...(options.stepBudget !== undefined ? { stepBudget: options.stepBudget } : {}),
              ...(options.memoryBudget !== undefined ? { memoryBudget: options.memoryBudget } : {}),
            });
          },
          catch: (e) =>
            new Error(`the Lashlang evaluator failed: ${e instanceof Error ? e.message : String(e)}`),
        });
        const fatal = cell.fatal();
        if (fatal) return yield* Effect.fail(fatal);
        const control = cell.control();
        const overflow = cell.overflow();

        const finished = result.outcome === "finished";
        let schemaErrors: string[] | undefined;
        if (finished && termination.kind === "finishRequired" && termination.schema) {
          const problems = validateJson(termination.schema, result.value ?? null);
          if (problems.length > 0) schemaErrors = problems;
        }
        const output = [...result.printed];
        if (overflow > 0) output.push(`(${overflow} more operation records were not kept)`);
        const details: RlmExecDetails & { frame: unknown; steps: number } = {
          frame: frame.snapshot(),
          ...(triggers ? { triggers: session.triggers.records } : {}),
          ...processDetails(session),
          steps: result.steps,
          ...(records.length > 0 ? { toolCalls: records } : {}),
          ...(images.length > 0 ? { images } : {}),
          ...(schemaErrors ? { schemaErrors } : {}),
        };
        const exec: ExecResult = {
          ok: result.outcome !== "error",
          output,
          ...(result.error ? { error: result.error.rendered } : {}),
          ...(finished ? { finished: true, finalValue: result.value ?? null } : {}),
          ...(control ? { control } : {}),
          details,
        };
        if (control?.type === "frameSwitch")
          session.frames.set(control.frameId, FrameState.seeded(control.seed));
        return exec;
      }),
  };
}

/** An `llm.query` reply read: the value when it matches `schema`, else the problem (`llm.query: …`). */
export function parseQueryReply(text: string, schema: Json): OperationResult {
  let reply: unknown;
  try {
    reply = extractJsonObject(text);
  } catch (e) {
    return { ok: false, error: `llm.query: could not read the reply (${(e as Error).message})` };
  }
  if (!isRecord(reply) || (reply.kind !== "value" && reply.kind !== "error"))
    return { ok: false, error: 'llm.query: the reply is not a {"kind", "value", "error"} object' };
  if (reply.kind === "error")
    return {
      ok: false,
      error: `llm.query: ${typeof reply.error === "string" ? reply.error : "the model reported an error"}`,
    };
  if (reply.value === null || reply.value === undefined)
    return { ok: false, error: "llm.query: the reply has no value" };
  const problems = validateJson(schema as { [k: string]: unknown }, reply.value);
  if (problems.length > 0)
    return {
      ok: false,
      error: `llm.query: the value does not match the output type: ${problems.join("; ")}`,
    };
  return { ok: true, value: reply.value as Json };
}
