// µs per poll/respond pair of the TurnMachine in a tool loop, against the
// length of the history the requests carry (10 … 10,000 messages).
// The per-step cost must not grow with history length.
import {
  type CompletedToolCall,
  type LlmResult,
  type Message,
  standardDriver,
  type TurnEffect,
  TurnMachine,
  type TurnResponse,
} from "@lash/sansio";
import { markdownTable, median, report } from "../util.ts";

const ROUNDS = 50;

function history(n: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      i % 2 === 0
        ? { id: `h${i}`, role: "user", parts: [{ type: "text", text: `question ${i}` }] }
        : { id: `h${i}`, role: "assistant", parts: [{ type: "text", text: `answer ${i}` }] },
    );
  }
  return out;
}

const toolCall: LlmResult = {
  ok: true,
  response: {
    parts: [{ type: "toolCall", id: "c", name: "echo", argumentsText: '{"text":"hi"}' }],
    usage: { input: 10, output: 5 },
    stopReason: "toolUse",
  },
};
const final: LlmResult = {
  ok: true,
  response: { parts: [{ type: "text", text: "done" }], usage: { input: 10, output: 2 }, stopReason: "stop" },
};

function answer(effect: TurnEffect, round: { n: number }): TurnResponse | undefined {
  switch (effect.kind) {
    case "syncEnvironment":
      return { kind: "environmentSynced", effectId: effect.effectId };
    case "callLlm":
      return {
        kind: "llmComplete",
        effectId: effect.effectId,
        result: round.n++ < ROUNDS ? toolCall : final,
      };
    case "runTools": {
      const results: CompletedToolCall[] = effect.calls.map((c) => ({
        callId: c.callId,
        name: c.name,
        content: [{ type: "text", text: "hi" }],
        isError: false,
      }));
      return { kind: "toolResults", effectId: effect.effectId, results };
    }
    case "checkpoint":
      return { kind: "checkpointDelivered", effectId: effect.effectId, messages: [] };
    default:
      return undefined;
  }
}

/** One turn: returns [poll/respond pairs, ns spent in the loop, ns to build the machine]. */
function turn(h: Message[]): [number, number, number] {
  const built = process.hrtime.bigint();
  const machine = new TurnMachine({
    sessionId: "s",
    turnId: "t",
    model: "openai/gpt-5-mini",
    driver: standardDriver,
    history: h,
    input: [{ id: "u", role: "user", parts: [{ type: "text", text: "go" }] }],
    tools: [{ name: "echo", description: "echo", inputSchema: { type: "object" } }],
  });
  const round = { n: 0 };
  let pairs = 0;
  const start = process.hrtime.bigint();
  const setup = Number(start - built);
  for (;;) {
    const effect = machine.poll();
    if (!effect || effect.kind === "done") break;
    const response = answer(effect, round);
    if (response) {
      machine.respond(response);
      pairs++;
    }
  }
  return [pairs, Number(process.hrtime.bigint() - start), setup];
}

const sizes = [10, 100, 1_000, 10_000];
const results: { history: number; usPerPair: number; pairsPerTurn: number; setupUs: number }[] = [];
for (const size of sizes) {
  const h = history(size);
  for (let i = 0; i < 200; i++) turn(h); // warm-up
  const samples: number[] = [];
  const setups: number[] = [];
  let pairsPerTurn = 0;
  for (let run = 0; run < 300; run++) {
    const [pairs, ns, setup] = turn(h);
    pairsPerTurn = pairs;
    samples.push(ns / pairs / 1000);
    setups.push(setup / 1000);
  }
  results.push({ history: size, usPerPair: median(samples), pairsPerTurn, setupUs: median(setups) });
}
const base = results[0]!.usPerPair;
const ratio = results[results.length - 1]!.usPerPair / base;
report({
  name: "kernel",
  title: "Kernel: µs per poll/respond pair (standard tool loop)",
  table: markdownTable(
    [
      "history messages",
      "µs / pair (median of 300 turns)",
      "vs 10",
      "pairs / turn",
      "turn setup µs (once per turn)",
    ],
    results.map((r) => [
      r.history,
      r.usPerPair.toFixed(3),
      (r.usPerPair / base).toFixed(2),
      r.pairsPerTurn,
      r.setupUs.toFixed(1),
    ]),
  ),
  results: { rows: results, ratio10kTo10: ratio },
  notes: [
    `10,000 / 10 ratio: ${ratio.toFixed(2)} (goal ≤ 2). A turn copies the history once when its machine is built ` +
      "(the setup column); every step after that is independent of history length.",
  ],
});
