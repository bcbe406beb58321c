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

/** One turn: returns [poll/respond pairs, ns spent in the loop, ns to build the machine, model calls if it reached `done` (else -1)]. */
function turn(h: Message[]): [number, number, number, number] {
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
  let done = false;
  const start = process.hrtime.bigint();
  const setup = Number(start - built);
  for (;;) {
    const effect = machine.poll();
    if (!effect) break;
    if (effect.kind === "done") {
      done = true;
      break;
    }
    const response = answer(effect, round);
    if (response) {
      machine.respond(response);
      pairs++;
    }
  }
  return [pairs, Number(process.hrtime.bigint() - start), setup, done ? round.n : -1];
}

const GOAL = 2;
const TURNS = 300;
const sizes = [10, 100, 1_000, 10_000];
const results: {
  history: number;
  cpuUsPerPair: number;
  usPerPair: number;
  pairsPerTurn: number;
  setupUs: number;
}[] = [];
for (const size of sizes) {
  const h = history(size);
  // Checked before timing: the turn ends with the model's final answer after every tool round.
  const [pairs0, , , calls] = turn(h);
  if (calls !== ROUNDS + 1)
    throw new Error(
      `history ${size}: the turn did not finish after ${ROUNDS} tool rounds (model calls: ${calls})`,
    );
  for (let i = 0; i < 200; i++) turn(h); // warm-up
  const samples: number[] = [];
  const setups: number[] = [];
  let totalPairs = 0;
  const cpu0 = process.cpuUsage();
  for (let run = 0; run < TURNS; run++) {
    const [pairs, ns, setup, n] = turn(h);
    if (pairs !== pairs0 || n !== ROUNDS + 1)
      throw new Error(
        `history ${size}: ${pairs} pairs and ${n} model calls in a turn, expected ${pairs0} and ${ROUNDS + 1}`,
      );
    totalPairs += pairs;
    samples.push(ns / pairs / 1000);
    setups.push(setup / 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  results.push({
    history: size,
    // CPU of the whole timed loop (machine builds included) per pair.
    cpuUsPerPair: (cpu.user + cpu.system) / totalPairs,
    usPerPair: median(samples),
    pairsPerTurn: pairs0,
    setupUs: median(setups),
  });
}

const base = results[0]!;
const last = results[results.length - 1]!;
const ratio = last.cpuUsPerPair / base.cpuUsPerPair;
const wallRatio = last.usPerPair / base.usPerPair;
const met = ratio <= GOAL;
report({
  name: "kernel",
  title: "Kernel: µs per poll/respond pair (standard tool loop), CPU first",
  table: markdownTable(
    [
      "history messages",
      `CPU µs / pair (${TURNS} turns)`,
      "vs 10, CPU",
      "goal",
      "met?",
      "wall µs / pair (median turn)",
      "vs 10, wall",
      "pairs / turn",
      "turn setup µs, wall (once per turn)",
    ],
    results.map((r) => [
      r.history,
      r.cpuUsPerPair.toFixed(3),
      (r.cpuUsPerPair / base.cpuUsPerPair).toFixed(2),
      r === last ? `≤ ${GOAL} (10,000 / 10)` : "-",
      r === last ? (met ? "met" : "**missed**") : "-",
      r.usPerPair.toFixed(3),
      (r.usPerPair / base.usPerPair).toFixed(2),
      r.pairsPerTurn,
      r.setupUs.toFixed(1),
    ]),
  ),
  results: { rows: results, goal: GOAL, ratio10kTo10: ratio, wallRatio10kTo10: wallRatio, met },
  goals:
    `Goal (issue 2): the per-step cost does not grow with history — 10,000 / 10 ratio ≤ ${GOAL}: ${ratio.toFixed(2)} by CPU (${met ? "met" : "missed"}; ${wallRatio.toFixed(2)} by wall). ` +
    "A turn copies the history once when its machine is built (the setup column); every step after that is independent of history length.",
  notes: [
    `CPU = this process's user + system time over ${TURNS} timed turns (machine builds included) divided by their pairs; wall = the median turn's loop time per pair (build excluded). Checked before timing: each history size's turn reaches \`done\` after ${ROUNDS + 1} model calls (${ROUNDS} tool rounds, then the answer); every timed turn is checked the same way.`,
  ],
});
