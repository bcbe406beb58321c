import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompletedToolCall,
  canonicalJson,
  type LlmErrorKind,
  type LlmResult,
  type Message,
  type Part,
  type StopReason,
  type TurnEffect,
  TurnMachine,
  type TurnResponse,
} from "../src/index.ts";
import { config, settle, userMessage } from "./helpers.ts";

const stopReasons: StopReason[] = [
  "stop",
  "toolUse",
  "outputLimit",
  "contextOverflow",
  "contentFilter",
  "error",
  "cancelled",
];
const errorKinds: LlmErrorKind[] = [
  "rateLimited",
  "overloaded",
  "server",
  "network",
  "timeout",
  "streamIncomplete",
  "auth",
  "permission",
  "notFound",
  "badRequest",
  "contextOverflow",
  "contentFilter",
  "cancelled",
  "unknown",
];

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const usageArb = fc.record(
  {
    input: maybe(fc.nat(2000)),
    output: maybe(fc.nat(500)),
    reasoning: maybe(fc.nat(100)),
    cacheRead: maybe(fc.nat(100)),
  },
  { requiredKeys: [] },
);
const argsArb = fc.oneof(
  fc
    .dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
    .map((o) => JSON.stringify(o)),
  fc.constantFrom('{"a":', "[1,2]", "not json", "", "null"),
);
const partArb: fc.Arbitrary<Part> = fc.oneof(
  fc.string({ maxLength: 20 }).map((text) => ({ type: "text" as const, text })),
  fc
    .record({ text: fc.string({ maxLength: 20 }), sig: maybe(fc.string({ maxLength: 8 })) })
    .map(({ text, sig }) => ({
      type: "reasoning" as const,
      text,
      ...(sig !== undefined ? { replay: { provider: "anthropic", signature: sig } } : {}),
    })),
  fc.record({ name: fc.constantFrom("echo", "read_file", "shell"), args: argsArb }).map(({ name, args }) => ({
    type: "toolCall" as const,
    id: "",
    name,
    argumentsText: args,
  })),
);
const resultArb: fc.Arbitrary<LlmResult> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record({
        parts: fc.array(partArb, { maxLength: 5 }),
        stop: fc.constantFrom(...stopReasons),
        usage: usageArb,
      })
      .map(({ parts, stop, usage }) => ({ ok: true as const, response: { parts, stopReason: stop, usage } })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ kind: fc.constantFrom(...errorKinds), retryable: fc.boolean() })
      .map(({ kind, retryable }) => ({
        ok: false as const,
        error: { kind, message: `${kind} failure`, retryable },
      })),
  },
);

const scenarioArb = fc.record({
  results: fc.array(resultArb, { minLength: 1, maxLength: 6 }),
  maxTurns: maybe(fc.integer({ min: 1, max: 5 })),
  reverseTools: fc.boolean(),
  deliverAt: maybe(fc.nat(4)),
  history: fc.nat(3),
  contextWindow: maybe(fc.constantFrom(1000, 2000)),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

/** Deterministic host: answers are a function of the effect and of how many LLM / checkpoint answers came before. */
class Host {
  llmIndex = 0;
  checkpoints = 0;
  readonly s: Scenario;
  constructor(s: Scenario) {
    this.s = s;
  }

  answer(effect: TurnEffect): TurnResponse | undefined {
    switch (effect.kind) {
      case "syncEnvironment":
        return { kind: "environmentSynced", effectId: effect.effectId };
      case "callLlm": {
        const i = this.llmIndex++;
        let result = this.s.results[i] ?? {
          ok: true,
          response: { parts: [{ type: "text", text: "end" }], stopReason: "stop", usage: {} },
        };
        if (result.ok) {
          // give tool calls ids unique to this call
          let n = 0;
          const parts = result.response.parts.map((p) =>
            p.type === "toolCall" ? { ...p, id: `c${i}_${n++}` } : p,
          );
          result = { ok: true, response: { ...result.response, parts } };
        }
        return { kind: "llmComplete", effectId: effect.effectId, result };
      }
      case "runTools": {
        const results: CompletedToolCall[] = effect.calls.map((c) => ({
          callId: c.callId,
          name: c.name,
          content: [{ type: "text", text: `ran ${c.name} ${JSON.stringify(c.args)}` }],
          isError: false,
        }));
        if (this.s.reverseTools) results.reverse();
        return { kind: "toolResults", effectId: effect.effectId, results };
      }
      case "checkpoint": {
        const n = this.checkpoints++;
        const messages: Message[] = n === this.s.deliverAt ? [userMessage(`queued ${n}`, `q${n}`)] : [];
        return { kind: "checkpointDelivered", effectId: effect.effectId, messages };
      }
      default:
        return undefined;
    }
  }
}

function machineFor(s: Scenario) {
  const history: Message[] = Array.from({ length: s.history }, (_, i) => userMessage(`h${i}`, `h${i}`));
  return config({
    history,
    ...(s.maxTurns !== undefined ? { maxTurns: s.maxTurns } : {}),
    ...(s.contextWindow !== undefined ? { contextWindow: s.contextWindow } : {}),
  });
}

/** Drive in half-steps (poll, then respond), recording serialized effects. */
function drive(machine: TurnMachine, host: Host, effects: string[], stopAfter = Number.POSITIVE_INFINITY) {
  let steps = 0;
  let pending: TurnResponse | undefined;
  for (let guard = 0; guard < 5000; guard++) {
    if (steps >= stopAfter) return { done: false, pending };
    if (pending) {
      machine.respond(pending);
      pending = undefined;
      steps++;
      continue;
    }
    const effect = machine.poll();
    steps++;
    if (!effect) throw new Error("stalled");
    effects.push(canonicalJson(settle(effect)));
    if (effect.kind === "done") return { done: true, pending };
    pending = host.answer(effect);
  }
  throw new Error("did not finish");
}

function fullRun(s: Scenario): string[] {
  const effects: string[] = [];
  drive(new TurnMachine(machineFor(s)), new Host(s), effects);
  return effects;
}

describe("TurnMachine properties", () => {
  it("(a) replaying the same responses yields identical effects", () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        expect(fullRun(s)).toEqual(fullRun(s));
      }),
      { numRuns: 300 },
    );
  });

  it("(b) checkpoint at any step + restore + the remaining responses yields the same tail", () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(60), (s, cut) => {
        const full = fullRun(s);
        const host = new Host(s);
        const head: string[] = [];
        const machine = new TurnMachine(machineFor(s));
        const { done, pending } = drive(machine, host, head, cut);
        if (done) return;
        const outstanding = machine.outstanding();
        const checkpoint = JSON.parse(JSON.stringify(machine.checkpoint()));
        const restored = TurnMachine.restore(machineFor(s), checkpoint);
        const tail: string[] = [];
        // a response computed before the cut is delivered after the restore
        if (pending) {
          // the effect it answers was polled before the cut, so the restored machine re-emits it first
          const again = restored.poll();
          expect(again && canonicalJson(again)).toBe(canonicalJson(outstanding));
          restored.respond(pending);
        }
        drive(restored, host, tail);
        expect([...head, ...tail]).toEqual(full);
      }),
      { numRuns: 300 },
    );
  });

  it("(c) stale and duplicate responses change nothing", () => {
    fc.assert(
      fc.property(scenarioArb, fc.array(fc.nat(40), { maxLength: 6 }), (s, noisePoints) => {
        const full = fullRun(s);
        const machine = new TurnMachine(machineFor(s));
        const host = new Host(s);
        const effects: string[] = [];
        const seen: TurnResponse[] = [];
        let step = 0;
        for (let guard = 0; guard < 5000; guard++) {
          if (noisePoints.includes(step) && seen.length > 0) {
            const before = canonicalJson(machine.checkpoint());
            for (const old of seen) {
              expect(machine.respond(old)).toBe(false);
              expect(machine.respond({ ...old, effectId: old.effectId + 1000 } as TurnResponse)).toBe(false);
            }
            expect(canonicalJson(machine.checkpoint())).toBe(before);
          }
          step++;
          const effect = machine.poll();
          if (!effect) throw new Error("stalled");
          effects.push(canonicalJson(settle(effect)));
          if (effect.kind === "done") break;
          const response = host.answer(effect);
          if (response) {
            expect(machine.respond(response)).toBe(true);
            seen.push(response);
          }
        }
        expect(effects).toEqual(full);
      }),
      { numRuns: 300 },
    );
  });
});
