/**
 * The `triggers` ability of the RLM host (reference §1.9), opt-in with `rlmMode({ triggers: true })`:
 * `cron.Schedule({ cron, timezone? })` builds a source value; `await triggers.register({ source,
 * target: "<process>", inputs: { param: trigger.event | value }, name? })` stores a registration in
 * the session's RLM state (snapshotted into the session record at commit, like the frames);
 * `triggers.list()` / `triggers.delete({ id })`. A registration keeps the declaring cell's text
 * content-addressed (`module_ref` = sha256 of it), so the target process can be run from it later.
 *
 * Firing: `dueFirings` says which registrations are due between two times (croner, as the daemon's
 * scheduler uses). A turn whose input is `firingText(id, at)` runs `firingCell` — the target started
 * with its inputs (the `trigger.event` slot gets `{ source: "cron", name, scheduled_at }`) — as its only
 * cell, without a model call (`lash serve` starts those runs: packages/server/src/triggers.ts).
 * `runTriggerProcess` runs the target body against a host the caller gives (library users).
 */
import type { Json, LashlangHost, OperationResult } from "@lash/lashlang";
import { sha256Hex } from "@lash/sansio";
import { Cron } from "croner";
import * as Clock from "effect/Clock";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import { lashlang } from "./lashlang.ts";

export const TRIGGER_EVENT = "__trigger_event__";
export const TRIGGER_SOURCE = "__trigger_source__";

export interface CronSource {
  readonly [TRIGGER_SOURCE]: "cron";
  readonly cron: string;
  readonly timezone?: string;
}

export interface TriggerRecord {
  readonly id: string;
  readonly name: string;
  readonly source: CronSource;
  readonly target: string;
  readonly inputs: { readonly [param: string]: Json };
  /** `sha256:<hex>` of `module`, the text of the cell that declared the target process. */
  readonly module_ref: string;
  readonly module: string;
  readonly enabled: boolean;
}

function isRecord(u: unknown): u is { [k: string]: unknown } {
  return u !== null && typeof u === "object" && !Array.isArray(u);
}

const fail = (error: string): OperationResult => ({ ok: false, error });

/** `cron.Schedule({ cron, timezone? })`: a source value (checked now, so a bad pattern fails at the call). */
export function cronSchedule(args: unknown): OperationResult {
  const a = isRecord(args) ? args : {};
  if (typeof a.cron !== "string")
    return fail('cron.Schedule: missing `cron`, e.g. cron.Schedule({ cron: "0 9 * * 1-5" })');
  if (a.timezone !== undefined && typeof a.timezone !== "string")
    return fail('cron.Schedule: `timezone` must be an IANA name such as "Europe/Berlin"');
  try {
    new Cron(a.cron, { paused: true, ...(a.timezone ? { timezone: a.timezone } : {}) }).stop();
  } catch (e) {
    return fail(`cron.Schedule: ${(e as Error).message}; use five fields like "*/15 * * * *"`);
  }
  const value: { [k: string]: Json } = { [TRIGGER_SOURCE]: "cron", cron: a.cron };
  if (typeof a.timezone === "string") value.timezone = a.timezone;
  return { ok: true, value };
}

/** The registrations of one RLM session, with the operations a cell calls. */
export class TriggerRegistry {
  records: TriggerRecord[] = [];

  constructor(records: readonly TriggerRecord[] = []) {
    this.records = [...records];
  }

  /** `triggers.register({...})` from a cell whose text is `cellSource`. */
  register(args: unknown, cellSource: string): OperationResult {
    const a = isRecord(args) ? args : {};
    // `cron.Schedule({...})` is a module call here, so without `?` the source comes as a result wrapper
    const src =
      isRecord(a.source) && a.source.ok === true && isRecord(a.source.value) ? a.source.value : a.source;
    if (!isRecord(src) || src[TRIGGER_SOURCE] !== "cron")
      return fail(
        'triggers.register: `source` must be a source value such as cron.Schedule({ cron: "0 * * * *" })',
      );
    if (typeof a.target !== "string")
      return fail("triggers.register: `target` must name a process declared in this cell, as a string");
    const parsed = lashlang().parseCell(cellSource);
    const decl = parsed.ok ? parsed.program.processes.find((p) => p.name === a.target) : undefined;
    if (!decl) return fail(`triggers.register: no process \`${a.target}\` is declared in this cell`);
    const inputs = a.inputs === undefined ? {} : a.inputs;
    if (!isRecord(inputs)) return fail("triggers.register: `inputs` must be a record of parameter → value");
    const params = decl.params.map((p) => p.name);
    for (const k of Object.keys(inputs))
      if (!params.includes(k))
        return fail(
          `triggers.register: process \`${decl.name}\` has no parameter \`${k}\` (its parameters: ${params.join(", ") || "none"})`,
        );
    for (const p of params)
      if (!(p in inputs))
        return fail(
          `triggers.register: input \`${p}\` of process \`${decl.name}\` is not mapped; map every parameter once (e.g. ${p}: trigger.event)`,
        );
    const name = typeof a.name === "string" ? a.name : decl.name;
    const module_ref = `sha256:${sha256Hex(cellSource)}`;
    const id = `trg_${sha256Hex(`${name}\n${module_ref}\n${JSON.stringify(src)}\n${JSON.stringify(inputs)}`).slice(0, 16)}`;
    const record: TriggerRecord = {
      id,
      name,
      source: src as unknown as CronSource,
      target: decl.name,
      inputs: inputs as { [k: string]: Json },
      module_ref,
      module: cellSource,
      enabled: true,
    };
    this.records = [...this.records.filter((r) => r.name !== name), record];
    return { ok: true, value: summary(record) };
  }

  list(): OperationResult {
    return { ok: true, value: this.records.map(summary) };
  }

  delete(args: unknown): OperationResult {
    const id = isRecord(args) ? args.id : undefined;
    const before = this.records.length;
    this.records = this.records.filter((r) => r.id !== id && r.name !== id);
    if (this.records.length === before)
      return fail(`triggers.delete: no trigger \`${String(id)}\`; triggers.list() shows the ids`);
    return { ok: true, value: { deleted: id as Json } };
  }
}

function summary(r: TriggerRecord): Json {
  const next = nextFiring(r, Date.now());
  return {
    id: r.id,
    name: r.name,
    target: r.target,
    source: r.source as unknown as Json,
    enabled: r.enabled,
    next_fire: next === undefined ? null : new Date(next).toISOString(),
  };
}

/** The registration's next firing strictly after `after` (epoch ms). */
export function nextFiring(r: TriggerRecord, after: number): number | undefined {
  const job = new Cron(r.source.cron, {
    paused: true,
    ...(r.source.timezone ? { timezone: r.source.timezone } : {}),
  });
  const next = job.nextRun(new Date(after))?.getTime();
  job.stop();
  return next;
}

/** Firings of enabled registrations in (from, to], in time order. */
export function dueFirings(
  records: readonly TriggerRecord[],
  from: number,
  to: number,
): { record: TriggerRecord; at: number }[] {
  const out: { record: TriggerRecord; at: number }[] = [];
  for (const r of records) {
    if (!r.enabled) continue;
    for (let t = nextFiring(r, from); t !== undefined && t <= to; t = nextFiring(r, t))
      out.push({ record: r, at: t });
  }
  return out.sort((a, b) => a.at - b.at);
}

/** The turn input of a firing (`lash serve` starts a run of the session with it): see `firingCell`. */
export const FIRING_PREFIX = "lash:trigger-firing ";

export const firingText = (id: string, at: number): string =>
  `${FIRING_PREFIX}${JSON.stringify({ trigger: id, scheduled_at: new Date(at).toISOString() })}`;

/** The firing a turn input names (`firingText`), if it is one. */
export function parseFiring(text: string): { trigger: string; at: number } | undefined {
  if (!text.startsWith(FIRING_PREFIX)) return undefined;
  try {
    const j = JSON.parse(text.slice(FIRING_PREFIX.length)) as { trigger?: unknown; scheduled_at?: unknown };
    const at = typeof j.scheduled_at === "string" ? Date.parse(j.scheduled_at) : Number.NaN;
    return typeof j.trigger === "string" && !Number.isNaN(at) ? { trigger: j.trigger, at } : undefined;
  } catch {
    return undefined;
  }
}

const literal = (v: Json): string => `json_parse(${JSON.stringify(JSON.stringify(v))})`;

/**
 * The cell a firing runs in its session (no model call): the target's declaration from the stored
 * module, then `finish await start <target>(<inputs>)` — the run's result wrapper is the turn's
 * final value. A registration that is gone gives a cell finishing with an error wrapper.
 */
export function firingCell(records: readonly TriggerRecord[], trigger: string, at: number): string {
  const r = records.find((x) => x.id === trigger);
  const gone = (why: string) => `finish ${literal({ ok: false, error: why })}`;
  if (!r) return gone(`trigger ${trigger} is no longer registered in this session`);
  const parsed = lashlang().parseCell(r.module);
  const decl = parsed.ok ? parsed.program.processes.find((p) => p.name === r.target) : undefined;
  if (!decl) return gone(`trigger ${r.name}: process \`${r.target}\` is not in its module`);
  const event: Json = { source: "cron", name: r.name, scheduled_at: new Date(at).toISOString() };
  const args = Object.entries(r.inputs).map(
    ([k, v]) => `${k}: ${literal(isRecord(v) && v[TRIGGER_EVENT] === true ? event : v)}`,
  );
  return `${r.module.slice(decl.start, decl.end)}\nfinish await start ${r.target}(${args.join(", ")})`;
}

/** Runs the registration's target process once for a firing at `at`, against `host`. */
export async function runTriggerProcess(
  r: TriggerRecord,
  at: number,
  host: LashlangHost,
): Promise<OperationResult> {
  const { ProcessRuntime, runCell, LashlangState } = lashlang();
  const event: Json = { source: "cron", name: r.name, scheduled_at: new Date(at).toISOString() };
  const state = new LashlangState();
  const args: string[] = [];
  for (const [k, v] of Object.entries(r.inputs)) {
    state.set(`__in_${k}`, isRecord(v) && v[TRIGGER_EVENT] === true ? event : v);
    args.push(`${k}: __in_${k}`);
  }
  const declarations = lashlang().parseCell(r.module);
  if (!declarations.ok) return fail(`trigger ${r.name}: its module no longer parses`);
  // the stored module's declarations, then one start of the target
  const decl = declarations.program.processes.find((p) => p.name === r.target);
  if (!decl) return fail(`trigger ${r.name}: process \`${r.target}\` is not in its module`);
  const text = `${r.module.slice(decl.start, decl.end)}\nfinish await start ${r.target}(${args.join(", ")})`;
  const processes = new ProcessRuntime(host);
  const out = await runCell(state, text, processes.forCell(text), {
    check: false,
    cellId: `trigger:${r.id}:${at}`,
  });
  await processes.settle();
  if (out.outcome === "error") return fail(out.error?.message ?? "the trigger's run failed");
  const wrapper = out.value as { ok?: boolean; value?: Json; error?: string } | undefined;
  return wrapper?.ok ? { ok: true, value: wrapper.value ?? null } : fail(wrapper?.error ?? "failed");
}

export interface TriggerSchedulerOptions {
  /** The registrations to fire (read again before each wait, so new ones are picked up). */
  readonly records: () => readonly TriggerRecord[];
  /** The host a firing's process runs against (its module operations); see `runTriggerProcess`. */
  readonly host: (record: TriggerRecord) => LashlangHost;
  /** Told of every firing and its result. */
  readonly onFired?: (record: TriggerRecord, at: number, result: OperationResult) => void;
  /** Ask again for registrations at least this often (ms; default 60 000): a new one may fire sooner. */
  readonly pollMs?: number;
}

/**
 * An in-process scheduler on Effect's `Clock`: waits for the next firing of any enabled
 * registration, runs it (`runTriggerProcess`), and goes on; fork it in a scope and interrupt it to
 * stop. Firings are not journaled: a firing missed while no scheduler ran is not made up.
 */
export function triggerScheduler(options: TriggerSchedulerOptions): Effect.Effect<never> {
  const poll = options.pollMs ?? 60_000;
  return Effect.gen(function* () {
    let last = yield* Clock.currentTimeMillis;
    for (;;) {
      const now = yield* Clock.currentTimeMillis;
      const due = dueFirings(options.records(), last, now);
      for (const { record, at } of due) {
        const result = yield* Effect.promise(() => runTriggerProcess(record, at, options.host(record)));
        options.onFired?.(record, at, result);
      }
      last = now;
      let next = now + poll;
      for (const r of options.records())
        if (r.enabled) {
          const t = nextFiring(r, now);
          if (t !== undefined && t < next) next = t;
        }
      yield* Effect.sleep(Duration.millis(Math.max(1, next - now)));
    }
  });
}
