// Traces written before lash gave tool calls their own ids named tool spans by the provider's
// id (`tool:{session}:{callId}`), which providers reuse: the viewer still shows one row per call.
import { describe, expect, it } from "vitest";
import { parseTrace } from "../src/schema.ts";
import { buildViewerModel } from "../src/viewer.ts";

describe("trace viewer: tool spans of older traces", () => {
  it("a provider id reused across turns and within a turn gives one row per call, each with its result", () => {
    const lines: string[] = [];
    let id = 0;
    const rec = (turn: string, kind: string, extra: Record<string, unknown>) =>
      lines.push(
        JSON.stringify({
          v: 1,
          id: `r-${++id}`,
          ts: 1000 + id,
          kind,
          sessionId: "s",
          turnId: turn,
          spanId: "tool:s:call_1",
          parentSpanId: `turn:s:${turn}`,
          ...extra,
        }),
      );
    const started = (turn: string, n: number) =>
      rec(turn, "tool_started", { callId: "call_1", name: "note", args: { n } });
    const completed = (turn: string, n: number) =>
      rec(turn, "tool_completed", {
        callId: "call_1",
        name: "note",
        isError: false,
        durationMs: 1,
        replayed: false,
        result: { chars: 8, attachments: 0, preview: `result ${n}` },
      });
    for (const [turn, n] of [
      ["t1", 1],
      ["t2", 2],
    ] as const) {
      started(turn, n);
      completed(turn, n);
    }
    started("t3", 3);
    completed("t3", 3);
    started("t3", 4);
    completed("t3", 4);
    const model = buildViewerModel(parseTrace(`${lines.join("\n")}\n`));
    const tools = model.rows.filter((r) => r.category === "tool");
    expect(tools.map((r) => r.summary.replace(/ · .*$/, ""))).toEqual([
      '{"n":1} → result 1',
      '{"n":2} → result 2',
      '{"n":3} → result 3',
      '{"n":4} → result 4',
    ]);
    expect(model.stats.toolCalls).toBe(4);
  });
});
