/**
 * Per-session RLM state: one persistent Lashlang state per agent frame (plus the images its
 * values refer to), the session's RLM options, and the `history` items of the latest projection.
 * Snapshotted into the session record at every commit (plugin `rlm`), restored at every turn start.
 */

import type { Json, LashlangState, ProcessRecord, ProcessRuntime } from "@lash/lashlang";
import type {
  AttachmentPart,
  RlmBinding,
  RlmFinalAnswerFormat,
  RlmHistoryItem,
  RlmTermination,
} from "@lash/sansio";
import { lashlang } from "./lashlang.ts";
import { type TriggerRecord, TriggerRegistry } from "./triggers.ts";

/** Options of one RLM session (fixed at creation; stored in the session record). */
export interface RlmSessionOptions {
  readonly termination?: RlmTermination;
  readonly finalAnswerFormat?: RlmFinalAnswerFormat;
  /** Token budget of a frame: enables the CONTEXT BUDGET section of the prompt. */
  readonly contextBudget?: number;
}

/** The durable form (session record, `state.rlm`). */
export interface RlmSnapshot {
  readonly version: 1;
  readonly options?: RlmSessionOptions;
  readonly frames: { readonly [frameId: string]: FrameSnapshot };
  /** Trigger registrations (`triggers.register`, rlm/triggers.ts). */
  readonly triggers?: readonly TriggerRecord[];
  /** Process runs (`start`): id, process, module ref, arguments, state, result (rlm/processes.ts). */
  readonly processes?: readonly ProcessRecord[];
  /** The modules the runs name, by content hash (`sha256:<hex>` of the declaring cell's text). */
  readonly modules?: { readonly [ref: string]: string };
}

export interface FrameSnapshot {
  readonly globals: { readonly [name: string]: Json };
  readonly images?: readonly AttachmentPart[];
}

/** Images kept per frame for `print` (the newest ones). */
export const MAX_FRAME_IMAGES = 16;

export class FrameState {
  state: LashlangState;
  readonly images = new Map<string, AttachmentPart>();

  constructor(state: LashlangState = new (lashlang().LashlangState)()) {
    this.state = state;
  }

  addImage(id: string, part: AttachmentPart): void {
    this.images.delete(id);
    this.images.set(id, part);
    while (this.images.size > MAX_FRAME_IMAGES) {
      const oldest = this.images.keys().next().value;
      if (oldest === undefined) break;
      this.images.delete(oldest);
    }
  }

  snapshot(): FrameSnapshot {
    const images = [...this.images.values()];
    return { globals: this.state.snapshotJson().globals, ...(images.length > 0 ? { images } : {}) };
  }

  static restore(s: FrameSnapshot | undefined): FrameState {
    const frame = new FrameState(
      s ? lashlang().LashlangState.restore({ globals: { ...s.globals } }) : undefined,
    );
    for (const img of s?.images ?? []) if (img.name !== undefined) frame.images.set(img.name, img);
    return frame;
  }

  /** A new frame whose globals are the seed entries. */
  static seeded(seed: unknown): FrameState {
    const frame = new FrameState();
    if (seed !== null && typeof seed === "object" && !Array.isArray(seed))
      for (const [k, v] of Object.entries(seed)) frame.state.set(k, v as Json);
    return frame;
  }
}

export class RlmSessionState {
  frameId: string;
  options: RlmSessionOptions;
  readonly frames = new Map<string, FrameState>();
  /** The `history` items of the latest projected request (what `history[N]` in the prompt refers to). */
  history: readonly RlmHistoryItem[] = [];
  readonly triggers = new TriggerRegistry();
  /** The session's process runs: they outlive the cell that started them (rlm/processes.ts). */
  processes: ProcessRuntime | undefined;
  /** Process modules by content hash (`sha256:<hex>` → the declaring cell's text). */
  readonly modules = new Map<string, string>();

  constructor(frameId: string, options: RlmSessionOptions) {
    this.frameId = frameId;
    this.options = options;
  }

  frame(frameId: string = this.frameId): FrameState {
    let f = this.frames.get(frameId);
    if (!f) {
      f = new FrameState();
      this.frames.set(frameId, f);
    }
    return f;
  }

  /** The session's process runtime (made on first use; runs start from a cell's host). */
  processRuntime(): ProcessRuntime {
    this.processes ??= new (lashlang().ProcessRuntime)({
      call: async () => ({ ok: false, error: "process runs take the host of the cell that starts them" }),
    });
    return this.processes;
  }

  /** Restore the runs and modules of a snapshot (ended runs stay awaitable by their handles). */
  restoreProcesses(s: RlmSnapshot): void {
    for (const [ref, text] of Object.entries(s.modules ?? {})) this.modules.set(ref, text);
    if (s.processes && s.processes.length > 0) this.processRuntime().restore(s.processes);
  }

  snapshot(): RlmSnapshot {
    const frames: { [id: string]: FrameSnapshot } = {};
    for (const [id, f] of this.frames) frames[id] = f.snapshot();
    const processes = keptRecords(this.processes?.records() ?? []);
    const modules: { [ref: string]: string } = {};
    for (const r of processes) {
      const text = r.module ? this.modules.get(r.module) : undefined;
      if (r.module && text !== undefined) modules[r.module] = text;
    }
    return {
      version: 1,
      ...(Object.keys(this.options).length > 0 ? { options: this.options } : {}),
      frames,
      ...(this.triggers.records.length > 0 ? { triggers: this.triggers.records } : {}),
      ...(processes.length > 0 ? { processes, modules } : {}),
    };
  }
}

/** Ended runs kept in the session record (the newest); running ones are always kept. */
export const MAX_PROCESS_RECORDS = 256;

/** The records a snapshot keeps: every running run and the newest `MAX_PROCESS_RECORDS` ended ones. */
export function keptRecords(records: readonly ProcessRecord[]): ProcessRecord[] {
  const ended = records.filter((r) => r.state !== "running");
  const drop = new Set(ended.slice(0, Math.max(0, ended.length - MAX_PROCESS_RECORDS)));
  return records.filter((r) => !drop.has(r));
}

export function isRlmSnapshot(u: unknown): u is RlmSnapshot {
  return (
    u !== null &&
    typeof u === "object" &&
    (u as { version?: unknown }).version === 1 &&
    typeof (u as { frames?: unknown }).frames === "object"
  );
}

/** The initial `state` entry for `createSession({ mode: "rlm", state: rlmSessionState(options) })`. */
export function rlmSessionState(options: RlmSessionOptions): { readonly rlm: RlmSnapshot } {
  return { rlm: { version: 1, options, frames: {} } };
}

// ---------------------------------------------------------------------------------------------
// Bound-variable previews (reference §2.4: 1 KiB / 40 lines / depth 3 inline, else typed previews)

const INLINE_CHARS = 1024;
const INLINE_LINES = 40;
const INLINE_DEPTH = 3;
const PREVIEW_CHARS = 160;

function depth(j: unknown): number {
  if (j === null || typeof j !== "object") return 0;
  let d = 0;
  for (const v of Array.isArray(j) ? j : Object.values(j)) d = Math.max(d, depth(v));
  return d + 1;
}

function isImage(j: unknown): boolean {
  return (
    j !== null &&
    typeof j === "object" &&
    !Array.isArray(j) &&
    (j as { type?: unknown }).type === "image" &&
    typeof (j as { id?: unknown }).id === "string"
  );
}

/** A Lashlang-style type name for a JSON value. */
export function typeOfJson(j: unknown): string {
  if (j === null || j === undefined) return "null";
  if (typeof j === "boolean") return "bool";
  if (typeof j === "number") return Number.isInteger(j) ? "int" : "float";
  if (typeof j === "string") return "str";
  if (Array.isArray(j)) {
    const kinds = [...new Set(j.slice(0, 20).map(typeOfJson))];
    return `list[${kinds.length === 1 ? kinds[0] : "any"}]`;
  }
  if (isImage(j)) return "image";
  return "record";
}

export function bindingPreview(name: string, j: Json): RlmBinding {
  const text = JSON.stringify(j) ?? "null";
  const chars = [...text].length;
  const lines = typeof j === "string" ? j.split("\n").length : 1;
  const type = typeOfJson(j);
  if (chars <= INLINE_CHARS && lines <= INLINE_LINES && depth(j) <= INLINE_DEPTH)
    return { name, type, inline: text };
  const preview = `${[...text].slice(0, PREVIEW_CHARS).join("")}…`;
  if (typeof j === "string") return { name, type, preview, len: [...j].length, lines };
  if (Array.isArray(j)) return { name, type, preview, len: j.length };
  if (j !== null && typeof j === "object") return { name, type, preview, keys: Object.keys(j).length };
  return { name, type, preview };
}

/** Previews of a frame's globals, sorted by name (read-only names excluded). */
export function bindingPreviews(state: LashlangState, readOnly: ReadonlySet<string>): RlmBinding[] {
  const out: RlmBinding[] = [];
  const names = [...state.globals.keys()].filter((n) => !readOnly.has(n)).sort();
  for (const name of names) out.push(bindingPreview(name, state.get(name) ?? null));
  return out;
}
