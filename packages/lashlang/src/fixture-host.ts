/**
 * The conformance corpus's declarative host fixture (the vocabulary of the corpus README): module
 * operations that echo, sleep-and-echo, look up a table, fail or return a value; processes answered by
 * the host (`direct` or `handle_record` style); projected values. Used by `lash lashlang run --host`
 * and `--corpus`, and by the conformance tests.
 */
import type { OperationResult } from "./interp.ts";
import type { LashlangHost } from "./runner.ts";
import type { Json } from "./values.ts";

export type FixtureOp =
  | { kind: "echo"; key: string }
  | { kind: "sleep_echo"; key: string; ms: number }
  | { kind: "table"; key: string; rows: { [k: string]: Json }; missing_error?: string }
  | { kind: "fail"; error: string }
  | { kind: "value"; value: Json };

export interface FixtureHost {
  ops?: { [path: string]: FixtureOp };
  /**
   * `direct` / `handle_record`: the host answers `start p(...)` from `ops[p]` (the Rust test hosts).
   * `run` (lash's own cases): the host runs the declared process bodies (processes.ts).
   */
  processes?:
    | { style: "direct" | "handle_record"; ops: { [name: string]: FixtureOp } }
    | { style: "run"; ops?: undefined };
  projected?: { [name: string]: Json };
}

export interface HostLog {
  calls: { op: string; payload: Json }[];
  inFlight: number;
  maxConcurrent: number;
}

function isObj(j: Json | undefined): j is { [k: string]: Json } {
  return typeof j === "object" && j !== null && !Array.isArray(j);
}

export function makeFixtureHost(fx: FixtureHost | null, log: HostLog): LashlangHost {
  const runOp = async (op: FixtureOp, payload: { [k: string]: Json }): Promise<OperationResult> => {
    switch (op.kind) {
      case "echo":
        return { ok: true, value: payload[op.key] ?? null };
      case "sleep_echo": {
        log.inFlight++;
        log.maxConcurrent = Math.max(log.maxConcurrent, log.inFlight);
        await new Promise((r) => setTimeout(r, op.ms));
        log.inFlight--;
        return { ok: true, value: payload[op.key] ?? null };
      }
      case "table": {
        const k = payload[op.key];
        const key = typeof k === "string" ? k : JSON.stringify(k ?? null);
        if (Object.hasOwn(op.rows, key)) return { ok: true, value: op.rows[key]! };
        return { ok: false, error: (op.missing_error ?? "no fixture row for {key}").replace("{key}", key) };
      }
      case "fail":
        return { ok: false, error: op.error };
      case "value":
        return { ok: true, value: op.value };
    }
  };
  const payloadOf = (args: Json): { [k: string]: Json } => {
    if (isObj(args)) {
      const a = args.args;
      if (Array.isArray(a) && Object.keys(args).length === 1) {
        const first = a[0];
        return isObj(first) ? first : {};
      }
      return args;
    }
    return {};
  };
  const style = fx?.processes?.style === "handle_record" ? "handle_record" : "direct";
  return {
    call: async (call) => {
      const name = `${call.module}.${call.operation}`;
      const payload = payloadOf(call.args);
      log.calls.push({ op: name, payload });
      const op = fx?.ops?.[name];
      if (!op) return { ok: false, error: `unknown tool: ${name}` };
      return runOp(op, payload);
    },
    startProcess: async (req) => {
      const op = fx?.processes?.ops?.[req.process];
      if (!op) return { ok: false, error: `unknown tool: ${req.process}` };
      const r = await runOp(op, req.args);
      if (!r.ok) return r;
      if (style === "direct") return r;
      return { ok: true, value: { __handle__: "process", tool: req.process, value: r.value } };
    },
    awaitHandle: async (req) => {
      if (style === "direct") return { ok: true, value: req.value };
      if (isObj(req.value)) return { ok: true, value: req.value.value ?? null };
      return { ok: false, error: "expected handle record" };
    },
    cancel: async (req) => {
      if (style === "direct") return { ok: false, error: "unsupported host ability" };
      return { ok: true, value: req.value };
    },
  };
}
