/**
 * The memory budget: an allocation meter. Every value the evaluator builds is charged an
 * approximate size when it is built (a list or tuple 64 bytes + 8 a slot, a record 96 + 32 an
 * entry, a string 32 + 1 a UTF-16 unit; host results by their JSON shape), so the meter counts the
 * bytes *allocated by the cell*, not the bytes it still holds: values that become garbage stay
 * counted. A concatenation `a + b` of strings is charged the shorter side (V8 builds a rope that
 * shares the longer one), so `out = out + line` in a loop costs its lines, not a square.
 * A cell that goes over its budget ends with "memory budget exceeded" before the allocation that
 * would cross it is made.
 *
 * Evaluation is synchronous between host suspensions, so one module-level meter is switched to the
 * running cell's meter each time the cell resumes (`enterMeter` / `leaveMeter`); code that runs
 * outside a cell (builtins called directly) charges an unbounded meter.
 */
import { LangError } from "./values.ts";

/** 256 MiB of accounted allocation per cell. */
export const DEFAULT_MEMORY_BUDGET = 256 * 1024 * 1024;

/**
 * Approximate sizes (bytes) charged per value, calibrated on V8 (Node 24, retained heap after GC):
 * a list is its object, array and backing store, a record its object, Map and hash table, a string
 * its header or the rope node a concatenation makes. Charges land within about 0.8–1.1× of the
 * retained heap for lists of numbers, small lists, small records and formatted strings.
 */
export const CONTAINER_BYTES = 64;
export const SLOT_BYTES = 8;
export const RECORD_BYTES = 96;
export const ENTRY_BYTES = 32;
export const STRING_BYTES = 32;

export class Meter {
  readonly budget: number;
  /** Bytes left while this meter is not the running one (the running one's are in `remaining`). */
  left: number;
  constructor(budget: number) {
    this.budget = budget;
    this.left = budget;
  }
  /** Bytes charged so far (read it when the meter is not running). */
  get used(): number {
    return this.budget - this.left;
  }
}

const unmetered = new Meter(Number.POSITIVE_INFINITY);
let meter: Meter = unmetered;
/** The running meter's bytes left, kept in one variable: a charge is a subtraction and a compare. */
let remaining = unmetered.left;

/** Makes `m` the meter charged until `leaveMeter(previous)`; returns the previous meter. */
export function enterMeter(m: Meter): Meter {
  const prev = meter;
  prev.left = remaining;
  meter = m;
  remaining = m.left;
  return prev;
}

export function leaveMeter(prev: Meter): void {
  meter.left = remaining;
  meter = prev;
  remaining = prev.left;
}

const MIB = 1024 * 1024;

export function formatBytes(n: number): string {
  if (n >= MIB) {
    const m = n / MIB;
    return `${Number.isInteger(m) ? m : m.toFixed(1)} MiB`;
  }
  if (n >= 1024) return `${Math.round(n / 1024)} KiB`;
  return `${n} bytes`;
}

export const MEMORY_HINT =
  "build smaller values (filter or slice before collecting, keep only what you need) or split the work " +
  "across cells; the cell's assignments were discarded. The host raises the limit with the `memoryBudget` option";

export function memoryError(budget: number): LangError {
  return new LangError(
    "Memory",
    `memory budget exceeded: the cell allocated more than ${formatBytes(budget)} of values (budget ${formatBytes(budget)})`,
    MEMORY_HINT,
  );
}

/**
 * V8's own limits on one value (a string over ~2^29 units, an array over 2^32 - 1 items) as a
 * language error, or undefined for any other RangeError.
 */
export function engineLimitError(e: RangeError): LangError | undefined {
  if (!/^Invalid (string|array|typed array) length/.test(e.message)) return undefined;
  const what = e.message.includes("string") ? "a string" : "a list";
  return new LangError(
    "Memory",
    `memory budget exceeded: ${what} grew past the JavaScript engine's size limit (${e.message})`,
    MEMORY_HINT,
  );
}

/** Charges `bytes` to the running cell; throws the memory budget error when it goes over. */
export function charge(bytes: number): void {
  const r = remaining - bytes;
  if (r < 0) throw memoryError(meter.budget);
  remaining = r;
}

/**
 * Charges `bytes` without throwing: true when that went over the budget (nothing is charged then;
 * the caller throws `exceeded()` at its own source location).
 */
export function over(bytes: number): boolean {
  const r = remaining - bytes;
  if (r < 0) return true;
  remaining = r;
  return false;
}

/** The memory budget error of the running cell. */
export function exceeded(): LangError {
  return memoryError(meter.budget);
}

/** A new string of `length` UTF-16 units. */
export function chargeString(length: number): void {
  charge(STRING_BYTES + length);
}

/** A new list or tuple of `n` items. */
export function chargeList(n: number): void {
  charge(CONTAINER_BYTES + SLOT_BYTES * n);
}

/** A new record of `n` entries. */
export function chargeRecord(n: number): void {
  charge(RECORD_BYTES + ENTRY_BYTES * n);
}

/** The approximate size of a JSON value once it is a language value (host results, `json_parse`). */
export function jsonBytes(j: unknown): number {
  if (j === null || j === undefined) return 0;
  switch (typeof j) {
    case "string":
      return STRING_BYTES + j.length;
    case "object": {
      if (Array.isArray(j)) {
        let n = CONTAINER_BYTES + SLOT_BYTES * j.length;
        for (let i = 0; i < j.length; i++) {
          const x = j[i];
          if (x !== null && typeof x === "object") n += jsonBytes(x);
          else if (typeof x === "string") n += STRING_BYTES + x.length;
        }
        return n;
      }
      let n = RECORD_BYTES;
      for (const k in j as object) {
        n += ENTRY_BYTES + k.length;
        n += jsonBytes((j as { [k: string]: unknown })[k]);
      }
      return n;
    }
    default:
      return 0;
  }
}
