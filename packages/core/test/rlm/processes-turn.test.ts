// Processes in a real RLM turn: two process bodies call a tool through the turn's one dispatch
// path at the same time (the tool answers only when both calls are in flight), `yield` reaches the
// turn's activity stream as progress of a `process:<name>` call, and the cell gets the results.
import type { LlmEvent, TurnActivity } from "@lash/sansio";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { defineTool, type Plugin, withRlm } from "../../src/index.ts";
import { say, scriptedProvider, withRuntime } from "../support.ts";

const cell = (code: string): LlmEvent[] => say(`<lashlang>\n${code}\n</lashlang>`);

const waiting: (() => void)[] = [];
let peak = 0;
let inFlight = 0;
const gate: Plugin = {
  name: "gate",
  tools: [
    defineTool<{ label: string }>({
      name: "gate_pass",
      description: "Answers when two calls are in flight.",
      inputSchema: {
        type: "object",
        properties: { label: { type: "string" } },
        required: ["label"],
        additionalProperties: false,
      },
      binding: { module: "gate", operation: "pass", returns: "str" },
      run: async ({ label }) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length === 2) for (const w of waiting.splice(0)) w();
        });
        inFlight--;
        return { content: [{ type: "text", text: `passed ${label}` }], value: `passed ${label}` };
      },
    }),
  ],
};

describe("rlm processes in a turn", () => {
  it("fan out through the dispatch path in parallel; yield is turn activity", async () => {
    const provider = scriptedProvider([
      cell(`process pass(label: str) {
  yield { label: label }
  finish await gate.pass({ label: label })?
}
rs = await [start pass(label: "a"), start pass(label: "b")]
finish [r? for r in rs]`),
    ]);
    const events: TurnActivity[] = [];
    const t = await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            return yield* rt.turn(s.id, { text: "go" }, { onEvent: (e) => events.push(e) });
          }),
        withRlm({ plugins: [gate] }),
      ),
    );
    expect(t.finalValue).toEqual(["passed a", "passed b"]);
    expect(peak).toBe(2);
    const started = events.filter((e) => e.type === "toolStarted" && e.name === "process:pass");
    expect(started).toHaveLength(2);
    const progress = events.flatMap((e) => (e.type === "toolProgress" ? [e.update] : []));
    expect(progress).toEqual([
      { kind: "process.yield", value: { label: "a" } },
      { kind: "process.yield", value: { label: "b" } },
    ]);
    const gateCalls = events.filter((e) => e.type === "toolStarted" && e.name === "gate_pass");
    expect(gateCalls.map((e) => (e.type === "toolStarted" ? e.callId : ""))).toEqual([
      expect.stringContaining("process:pass"),
      expect.stringContaining("process:pass"),
    ]);
  });
});
