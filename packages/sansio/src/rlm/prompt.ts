/**
 * The RLM prompt (reference §2.2–§2.4): the execution section and tool catalog of the system
 * prompt, and the per-iteration tail (bound variables, finalization rules, context budget).
 * The system prompt and history stay byte-stable across iterations (prompt caching); everything
 * that changes per iteration lives in the tail.
 */
import { CLOSE_TAG, OPEN_TAG } from "./cell.ts";
import type {
  RlmBinding,
  RlmEnvironment,
  RlmFinalAnswerFormat,
  RlmOperation,
  RlmTermination,
} from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Execution section

export interface ExecutionSectionOptions {
  /** True when at least one operation is available. */
  readonly hasOperations: boolean;
  /** The `processes`, `sleep` and `process_signals` abilities (default on: the RLM host enables them). */
  readonly processes?: boolean;
  /** The `triggers` ability (`triggers.register` is in the catalog). */
  readonly triggers?: boolean;
}

/** Language bullets for processes, sleep, signals and triggers (reference prompt.rs wording, for what this host has). */
function processBullets(triggers: boolean): string[] {
  const out = [
    '- Sleep: pause foreground code or process code with `sleep for "5s"` or `sleep until deadline`. Durations accept milliseconds, `ms`, `s`, `m`, or `h`; deadlines accept RFC3339 text or Unix epoch milliseconds.',
    "- Background processes: `process name(param: TYPE) { ... }` declares a reusable process definition. Add typed inbound signals with `signals { name: TYPE }` when the process receives external messages, e.g. " +
      '`process worker() signals { approve: { ok: bool } } { payload = wait_signal("approve") finish payload }`. ' +
      "`handle = start name(param: value)` creates one process run from that definition and returns its run handle" +
      (triggers
        ? "; matching trigger firings can also create process runs through registered triggers. "
        : ". ") +
      'Inside a process use `yield value`, `wake value`, `finish value`, `fail value` and `payload = wait_signal("name")`. ' +
      "`yield value` and `wake value` are progress events of the run. `finish value` completes the run and stores `value` as its success value; `fail value` completes it as failed; falling off the end is `finish null`. " +
      "`print` is foreground-only and invalid inside processes. A process body is self-contained: it sees only its params and the module operations. " +
      "A run keeps running after the block that started it ends; its handle is an ordinary value, so a later block of the same turn can `await`, signal or `cancel` it, and a later turn can `await` it for its stored result. Runs still open when the turn ends are waited for before the turn is committed. " +
      "Parallelism comes from starting all independent process handles before waiting for any of them; join a list or record of handles with `results = await handles`. `await handle` waits and returns a result wrapper like `{ ok: true, value: ... }`; when you need fields from the `finish` value, use `result = (await handle)?`. Cancel a live run with `cancel handle` (best-effort).",
    '- Signalling processes: `signal_run(handle, "name", payload)` sends a typed `signal.name` event to a running process and may be used from the foreground as well as inside a process body, like `await handle` and `cancel handle`. The receiving side, `payload = wait_signal("name")`, parks a process until that named signal arrives and is only valid inside a process body. Signals are delivered in the order they were sent.',
  ];
  if (triggers)
    out.push(
      "- Trigger registry: a trigger registration connects a source value to a process definition plus explicit inputs. " +
        'Build a source with `source = cron.Schedule({ cron: "0 9 * * 1-5", timezone: "Europe/Berlin" })` (a value, never awaited) and register with ' +
        '`receipt = await triggers.register({ source: source, target: "daily_digest", inputs: { tick: trigger.event }, name: "daily_digest" })?`. ' +
        "`target` names a process declared in the same block; `inputs` maps every process param exactly once; `trigger.event` is the whole firing (`{ source, name, scheduled_at }`) and is only valid as a value inside `inputs`. " +
        "Registrations are stored with the session, and each firing runs the target process once. Use `await triggers.list({})?` to see them and `await triggers.delete({ id: receipt.id })?` to remove one.",
    );
  return out;
}

export function renderExecutionSection(options: ExecutionSectionOptions): string {
  const contract = options.hasOperations
    ? [
        "- Answer in plain prose when the request is pure conversation.",
        "- For anything that needs an action or a computation, write Lashlang and let the host run it.",
        "- Call the operations documented under Tools as `await module.operation({ ... })?` inside one paired block.",
      ]
    : [
        "- Answer in plain prose when the request is pure conversation.",
        "- Use Lashlang for computation. No host operations are available in this session: do not invent tool calls.",
      ];
  return [
    "# Execution",
    "",
    "You work in a persistent Lashlang REPL. Each of your responses may contain one Lashlang cell; the host runs it,",
    "records what it printed, and shows you the result before your next response.",
    "",
    "## Operating contract",
    ...contract,
    "",
    "## `print` vs `finish`",
    "- `print <expr>` shows you a value and the turn continues. Print only the part you need (a field, a slice, a count).",
    "- `finish <expr>` ends the turn with that value: a string is passed through as the reply, other values are shown as pretty JSON.",
    "- Keep the final value concise and decision-sized; never finish with a raw dump. Check your result before finishing.",
    "",
    "## Response shape",
    `- Code goes between \`${OPEN_TAG}\` and \`${CLOSE_TAG}\`, each tag alone on its own line. Exactly one block per response.`,
    "- Prose (status, reasoning for the user) goes before the block; nothing may follow the closing tag.",
    "- When a response ends the turn is decided by the FINALIZATION rules at the end of each prompt.",
    "",
    "## Language",
    "- Values: null, bool, number, string, list `[1, 2]`, tuple `(1, 2)`, record `{ a: 1 }`, images (from operations).",
    '- Strings: `"..."` or `\'...\'` with `\\n \\t \\\\` escapes, triple-quoted `"""..."""` for multi-line text, raw `r"..."` without escapes. There are no f-strings: use `format("{} of {}", a, b)` or `+`.',
    "- Assignment: `x = 1` (optional `let`). Paths mutate in place: `r.items[0].done = true`. Histogram idiom: `counts[k] = counts[k] + 1` (a missing key reads as null, and `null + 1` is 1).",
    "- Every assignment is global and persists to later cells and turns; only `for` variables are restored after the loop.",
    "- Comprehensions: `[x.path for x in files if x.size > 0]`.",
    "- Control flow: `if c { } else { }`, `for x in list { }`, `while c { }`, `break`, `continue`; inline conditionals are `c ? a : b`.",
    '- Module operations: `r = await files.read({ path: "a.txt" })` gives a wrapper `{ok: true, value}` or `{ok: false, error}`; add `?` to get the value or stop the cell on failure. Bare calls like `len(x)` are builtins only.',
    '- Operation scheduling: statements run one after another. `await` over a literal list or record of operations runs them concurrently: `both = await { a: files.read({ path: "a" })?, b: files.read({ path: "b" })? }`.',
    ...(options.processes === false ? [] : processBullets(options.triggers === true)),
    "- Bare expressions are valid statements; there are no functions, classes, imports or exceptions.",
    "- Values already in scope are listed under BOUND VARIABLES (plus the read-only `history`).",
    "",
    "## Builtins",
    "`len empty keys values trim to_string to_int to_float json_parse contains starts_with ends_with split join find grep_text validate ceil_div floor_div push slice format range`",
    "- `grep_text(s, needle)` returns `{line, text, match, start, end}` per matching line; `slice(x, start, end)` takes `null` for an open bound; `push(list, x)` returns a new list.",
    "",
    "## Type literals",
    "- `Type { name: str, tags: list[str], score: float?, note: str | null }` builds a type; `validate(value, T)` checks a value against it.",
    "- `T?` means the field may be absent (null not allowed); `T | null` means present but nullable. Nested shapes need `Type { ... }`.",
    '- Types: `str int float bool dict any null enum["a", "b"] list[T]`.',
    "",
    "## Working with context",
    "- Keep the trace decision-sized: print summaries, counts and the few lines that matter, not whole files.",
    "- Long printed outputs are shown as previews; the full value is kept. Re-print `history[N].output[M]` (or a slice of it) to see more.",
    "- Independent slow operations belong in one aggregate `await`.",
    "- When the trace is bloated and the work can continue from a summary, end a cell with `control.continue_as({ task, seed })` to continue in a fresh frame.",
    "",
    "Example (fan-out, then keep only what matters):",
    OPEN_TAG,
    'found = await { src: files.grep({ pattern: "TODO", path: "src" })?, docs: files.grep({ pattern: "TODO", path: "docs" })? }',
    "print { src: found.src.total, docs: found.docs.total }",
    CLOSE_TAG,
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------
// Tool catalog

type Schema = { readonly [key: string]: unknown };

function asSchema(v: unknown): Schema {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Schema) : {};
}

/** A JSON schema as a Lashlang type expression. */
export function schemaType(schema: unknown): string {
  const s = asSchema(schema);
  if (Array.isArray(s.enum)) return `enum[${s.enum.map((v) => JSON.stringify(v)).join(", ")}]`;
  if (s.const !== undefined) return JSON.stringify(s.const);
  const union = (s.anyOf ?? s.oneOf) as unknown;
  if (Array.isArray(union)) return union.map(schemaType).join(" | ");
  const t = s.type;
  if (Array.isArray(t)) return t.map((x) => schemaType({ ...s, type: x })).join(" | ");
  switch (t) {
    case "string":
      return "str";
    case "integer":
      return "int";
    case "number":
      return "float";
    case "boolean":
      return "bool";
    case "null":
      return "null";
    case "array":
      return `list[${s.items === undefined ? "any" : schemaType(s.items)}]`;
    case "object":
      return s.properties ? "record" : "dict";
    default:
      return "any";
  }
}

interface Param {
  readonly name: string;
  readonly type: string;
  readonly optional: boolean;
  readonly description?: string;
}

function params(inputSchema: Schema): Param[] {
  const props = asSchema(inputSchema.properties);
  const required = new Set(Array.isArray(inputSchema.required) ? (inputSchema.required as string[]) : []);
  return Object.keys(props).map((name) => {
    const p = asSchema(props[name]);
    return {
      name,
      type: schemaType(p),
      optional: !required.has(name),
      ...(typeof p.description === "string" ? { description: p.description } : {}),
    };
  });
}

export function operationPath(op: RlmOperation): string {
  return `${op.module}.${op.operation}`;
}

export function renderOperation(op: RlmOperation): string {
  const ps = params(op.inputSchema);
  const sig = ps.map((p) => `${p.name}${p.optional ? "?" : ""}: ${p.type}`).join(", ");
  const lines = [
    `### ${operationPath(op)}({ ${sig} }) -> ${op.returns ?? "any"}`.replace("({  })", "({})"),
    op.description.trim(),
  ];
  if (ps.length > 0) {
    lines.push("", "Parameters:");
    for (const p of ps)
      lines.push(
        `- \`${p.name}${p.optional ? "?" : ""}: ${p.type}\`${p.description ? ` — ${p.description}` : ""}`,
      );
  }
  lines.push("", `Example: \`r = await ${operationPath(op)}({ ${exampleArgs(ps)} })?\``);
  return lines.join("\n");
}

function exampleArgs(ps: readonly Param[]): string {
  return ps
    .filter((p) => !p.optional)
    .map((p) => `${p.name}: ${exampleValue(p.type)}`)
    .join(", ");
}

function exampleValue(type: string): string {
  if (type === "str") return '"..."';
  if (type === "int" || type === "float") return "1";
  if (type === "bool") return "true";
  if (type.startsWith("list[")) return "[]";
  if (type.startsWith("enum[")) return type.slice(5, -1).split(", ")[0] ?? '""';
  return "{}";
}

/** The Tools section: every operation under its Lashlang call path, sorted. */
export function renderToolCatalog(ops: readonly RlmOperation[]): string {
  if (ops.length === 0) return "# Tools\n\nNo host operations are available.";
  const sorted = [...ops].sort((a, b) => (operationPath(a) < operationPath(b) ? -1 : 1));
  return [
    "# Tools",
    "",
    "Call these from Lashlang only, never as bare names.",
    "",
    ...sorted.map(renderOperation),
  ]
    .join("\n")
    .replace(/\n{3,}/g, "\n\n");
}

/** Longest preview of a host-projected value in the prompt (characters of compact JSON). */
const READ_ONLY_PREVIEW = 200;

function typeOfJson(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "list";
  if (typeof v === "object") return "record";
  return typeof v === "boolean" ? "bool" : typeof v === "number" ? "number" : "string";
}

export function renderReadOnlyVariables(
  names: readonly string[],
  hostValue?: (name: string) => unknown,
): string {
  return [
    "# Read-Only Variables",
    "",
    ...names.map((n) => {
      if (n === "history")
        return "- `history`: read-only list of this frame's history items (`history[N].output[M]`, `history[N].code`, `history[N].content`)";
      const v = hostValue?.(n);
      if (v === undefined) return `- \`${n}\`: read-only value`;
      const json = JSON.stringify(v) ?? "null";
      const preview =
        json.length > READ_ONLY_PREVIEW
          ? `${json.slice(0, READ_ONLY_PREVIEW)}… (${json.length} chars)`
          : json;
      return `- \`${n}\`: read-only ${typeOfJson(v)} from the host: ${preview}`;
    }),
  ].join("\n");
}

/** The system prompt: host text, then the execution section, tools and read-only variables. */
export function renderSystemPrompt(
  host: string | undefined,
  ops: readonly RlmOperation[],
  readOnly: readonly string[] = ["history"],
  hostValue?: (name: string) => unknown,
): string {
  return [
    host?.trim(),
    renderExecutionSection({
      hasOperations: ops.length > 0,
      triggers: ops.some((o) => o.module === "triggers" && o.operation === "register"),
    }),
    renderToolCatalog(ops),
    renderReadOnlyVariables(readOnly, hostValue),
  ]
    .filter((s): s is string => typeof s === "string" && s !== "")
    .join("\n\n");
}

// ---------------------------------------------------------------------------------------------
// The current-iteration tail

export interface TailInput {
  /** 1-based protocol iteration. */
  readonly iteration: number;
  readonly environment: RlmEnvironment;
  readonly historyCount: number;
  /** The turn-limit notice was given: the next response must be prose. */
  readonly finalNotice: boolean;
  readonly maxTurns?: number;
  /** Estimated tokens of the request so far (for the context budget). */
  readonly tokens: number;
}

function renderBinding(b: RlmBinding): string {
  if (b.inline !== undefined) return `- \`${b.name}\` = ${b.inline}`;
  const meta: string[] = [];
  if (b.len !== undefined) meta.push(`len=${b.len}`);
  if (b.lines !== undefined) meta.push(`lines=${b.lines}`);
  if (b.keys !== undefined) meta.push(`keys=${b.keys}`);
  return `- \`${b.name}\`: \`${b.type}\`${meta.length ? `, ${meta.join(", ")}` : ""} ≈ ${b.preview ?? "…"} (full value live — \`print ${b.name}\`)`;
}

export function turnLimitText(maxTurns: number | undefined): string {
  return [
    `Turn limit reached${maxTurns !== undefined ? ` (${maxTurns})` : ""}. You MUST reply in plain prose now, containing:`,
    "1. A summary of what you did and found.",
    "2. The tasks that remain.",
    "3. The recommended next steps.",
    `Do NOT emit a ${OPEN_TAG} block: it would not run.`,
  ].join("\n");
}

function finalizationRules(termination: RlmTermination): string[] {
  if (termination.kind === "finishRequired")
    return [
      "This turn ends only through `finish`. Prose never ends it.",
      `- To continue: prose (optional) followed by one ${OPEN_TAG} block.`,
      `- To end: a ${OPEN_TAG} block that calls \`finish <value>\`${termination.schema ? " with a value matching REQUIRED OUTPUT" : ""}. Use \`finish null\` only if null is really the answer.`,
    ];
  return [
    "Each response must be exactly one of:",
    `1. Continue: optional prose (a short status), then one ${OPEN_TAG} block. The turn goes on after it runs.`,
    `2. Finish with prose: no block at all. The prose is your final reply and the turn ends immediately.`,
    `3. Finish with a value: a ${OPEN_TAG} block that calls \`finish <value>\`.`,
    "Never say you will continue, check or run something unless the same response contains the block that does it.",
  ];
}

function finalAnswerFormat(format: RlmFinalAnswerFormat | undefined): string | undefined {
  if (!format || format.kind === "rawFinalValue") return undefined;
  if (format.kind === "custom") return format.guidance;
  return "Write the final reply as concise Markdown: lead with the answer, then only the details the user needs.";
}

function budgetSection(input: TailInput, budget: number): string {
  const pct = Math.floor((input.tokens / budget) * 100);
  const lines = [
    `Turn: ${input.iteration} · Tokens: ${input.tokens} · frame switch threshold: ${budget} (${pct}%).`,
  ];
  if (pct >= 100)
    lines.push(
      "Past the frame switch threshold. End this block with `control.continue_as({ task, seed })` now, seeding only what the next frame needs.",
    );
  else if (pct >= 90)
    lines.push(
      "Budget tight — finish only the current step, then end the block with `control.continue_as({ task, seed })`.",
    );
  else if (pct >= 60)
    lines.push(
      "Look for a clean frame switch point: once the current sub-task is done, continue in a fresh frame with `control.continue_as`.",
    );
  return lines.join("\n");
}

export function renderTail(input: TailInput): string {
  const env = input.environment;
  const sections: string[] = [`=== CURRENT ITERATION: ${input.iteration} ===`];
  sections.push(
    [
      "=== BOUND VARIABLES ===",
      "These variables are already bound in lashlang; use them directly, do not recreate them manually.",
      "Small values are shown in full; larger ones show only a truncated preview — `print` the variable (or a part of it) to see more.",
      "Available variables:",
      "- `history`: `list<HistoryItem>`, read-only",
      ...env.bindings.map(renderBinding),
      "Runtime notes:",
      `- \`history\` currently has ${input.historyCount} entries`,
    ].join("\n"),
  );
  sections.push(
    [
      "=== FINALIZATION ===",
      ...(input.finalNotice ? [turnLimitText(input.maxTurns)] : finalizationRules(env.termination)),
    ].join("\n"),
  );
  if (env.termination.kind === "finishRequired" && env.termination.schema && !input.finalNotice)
    sections.push(
      [
        "=== REQUIRED OUTPUT ===",
        "The `finish` value must match this JSON Schema exactly:",
        "```json",
        JSON.stringify(env.termination.schema, null, 2),
        "```",
      ].join("\n"),
    );
  else if (env.termination.kind === "natural") {
    const format = finalAnswerFormat(env.finalAnswerFormat);
    if (format) sections.push(`=== FINAL ANSWER FORMAT ===\n${format}`);
  }
  if (env.contextBudget !== undefined && env.contextBudget > 0)
    sections.push(`=== CONTEXT BUDGET ===\n${budgetSection(input, env.contextBudget)}`);
  return sections.join("\n\n");
}
