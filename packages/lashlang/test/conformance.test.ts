/** Acceptance 0: the 130-case conformance corpus from the Rust test suite. */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { hasStart, surfaceOf } from "../src/corpus.ts";
import { type FixtureHost, type HostLog, makeFixtureHost } from "../src/fixture-host.ts";
import type { Json } from "../src/index.ts";
import {
  type CellResult,
  check,
  LashlangState,
  makeDiagnostic,
  type ProjectedBinding,
  parseCell,
  runProgram,
} from "../src/index.ts";

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const corpusDir = join(packageRoot, "test", "fixtures", "conformance");

type Check = { path: string; equals?: Json; contains?: string; len?: number; type?: string };
type Expect = {
  finish?: Json;
  finish_checks?: Check[];
  finish_same_as_cell?: number;
  continued?: boolean;
  completes?: boolean;
  error_contains?: string;
  parse_error_contains?: string;
  parses?: boolean;
  prints?: Json[];
  globals?: { [k: string]: Json };
  max_concurrent?: number;
  calls?: { op: string; index: number; checks: Check[] }[];
};
interface Case {
  id: string;
  mode: "link_fallback" | "unlinked" | "linked" | "parse_only";
  source?: string;
  cells?: string[];
  snapshot_between_cells?: boolean;
  globals?: { [k: string]: Json };
  host: FixtureHost | null;
  expect: Expect | Expect[];
}

/**
 * Named exceptions: cases kept in the run whose expectation we are convinced contradicts the
 * reference. Each maps to the reason; the test asserts the documented deviation instead.
 */
export const EXCEPTIONS: { [id: string]: string } = {};

const cases: Case[] = readFileSync(join(corpusDir, "cases.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as Case);

async function runOne(
  c: Case,
  state: LashlangState,
  source: string,
  log: HostLog,
): Promise<CellResult | { parseError: string } | { parsed: true }> {
  const parsed = parseCell(source);
  if (!parsed.ok) return { parseError: parsed.error.message };
  if (c.mode === "parse_only") return { parsed: true };
  const host = makeFixtureHost(c.host, log);
  const projected: { [k: string]: ProjectedBinding } = {};
  for (const [k, v] of Object.entries(c.host?.projected ?? {})) projected[k] = { get: () => v };
  const options = { projected };
  if (c.mode !== "unlinked") {
    const errs = check(parsed.program, {
      surface: surfaceOf(c.host),
      abilities: { processes: true, sleep: true, processSignals: true, triggers: true },
      projected: Object.keys(projected),
    });
    const first = errs[0];
    if (first && (c.mode === "linked" || hasStart(parsed.program))) {
      return {
        outcome: "error",
        prints: [],
        printed: [],
        steps: 0,
        stepBudget: 0,
        allocated: 0,
        memoryBudget: 0,
        error: makeDiagnostic("check", source, first.message, first.start, first.end, first.hint),
      };
    }
  }
  return runProgram(state, source, parsed.program, host, options);
}

function pointer(v: Json, path: string): Json | undefined {
  if (path === "") return v;
  let cur: Json | undefined = v;
  for (const raw of path.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (cur && typeof cur === "object") cur = cur[seg];
    else return undefined;
  }
  return cur;
}

function jsonType(v: Json | undefined): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "list";
  if (typeof v === "object") return "record";
  if (typeof v === "boolean") return "bool";
  return typeof v;
}

function applyChecks(v: Json | undefined, checks: Check[]): void {
  for (const ch of checks) {
    const x = pointer(v ?? null, ch.path);
    if ("equals" in ch) expect(x, ch.path).toEqual(ch.equals);
    if (ch.contains !== undefined) {
      expect(typeof x).toBe("string");
      expect(x as string).toContain(ch.contains);
    }
    if (ch.len !== undefined) {
      const n = Array.isArray(x)
        ? x.length
        : typeof x === "string"
          ? Array.from(x).length
          : x && typeof x === "object"
            ? Object.keys(x).length
            : -1;
      expect(n, ch.path).toBe(ch.len);
    }
    if (ch.type !== undefined) expect(jsonType(x), ch.path).toBe(ch.type);
  }
}

describe("lashlang conformance corpus", () => {
  it("has 130 cases", () => {
    expect(cases.length).toBe(130);
  });
  for (const c of cases) {
    it(c.id, async () => {
      const state = new LashlangState();
      for (const [k, v] of Object.entries(c.globals ?? {})) state.set(k, v);
      const sources = c.cells ?? [c.source!];
      const expects = Array.isArray(c.expect) ? c.expect : [c.expect];
      const values: (Json | undefined)[] = [];
      let cur = state;
      for (let i = 0; i < sources.length; i++) {
        if (i > 0 && c.snapshot_between_cells) cur = LashlangState.restore(cur.snapshot());
        const log: HostLog = { calls: [], inFlight: 0, maxConcurrent: 0 };
        const r = await runOne(c, cur, sources[i]!, log);
        const ex = expects[i]!;
        if ("parseError" in r) {
          expect(ex.parse_error_contains, `unexpected parse error: ${r.parseError}`).toBeDefined();
          expect(r.parseError).toContain(ex.parse_error_contains);
          continue;
        }
        expect(ex.parse_error_contains, "expected a parse error").toBeUndefined();
        if ("parsed" in r) {
          expect(ex.parses).toBe(true);
          continue;
        }
        const detail = r.error ? r.error.rendered : JSON.stringify(r.value);
        if (ex.error_contains !== undefined) {
          expect(r.outcome, detail).toBe("error");
          expect(r.error!.message).toContain(ex.error_contains);
        } else {
          expect(r.outcome, detail).not.toBe("error");
        }
        if ("finish" in ex) {
          expect(r.outcome, detail).toBe("finished");
          expect(r.value).toEqual(ex.finish);
        }
        if (ex.finish_checks) {
          expect(r.outcome, detail).toBe("finished");
          applyChecks(r.value, ex.finish_checks);
        }
        if (ex.finish_same_as_cell !== undefined) {
          expect(r.outcome).toBe("finished");
          expect(r.value).toEqual(values[ex.finish_same_as_cell]);
        }
        if (ex.continued) expect(r.outcome, detail).toBe("continued");
        if (ex.completes) expect(["finished", "continued"]).toContain(r.outcome);
        if (ex.prints) expect(r.prints).toEqual(ex.prints);
        for (const [k, v] of Object.entries(ex.globals ?? {})) expect(cur.get(k)).toEqual(v);
        if (ex.max_concurrent !== undefined) expect(log.maxConcurrent).toBe(ex.max_concurrent);
        for (const call of ex.calls ?? []) {
          const made = log.calls.filter((x) => x.op === call.op)[call.index];
          expect(made, `call ${call.op}#${call.index}`).toBeDefined();
          applyChecks(made!.payload, call.checks);
        }
        values.push(r.value);
      }
    });
  }
});
