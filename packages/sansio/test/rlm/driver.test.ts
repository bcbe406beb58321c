import { describe, expect, it } from "vitest";
import { EMPTY_RESPONSE, FINISH_REMINDER, repairMessage } from "../../src/internal.ts";
import { cell, drive, lastUserText, protocolEvents, requestText, text } from "./harness.ts";

const roles = (d: ReturnType<typeof drive>) => d.done.messages.map((m) => m.role);

describe("rlm driver (§2.6)", () => {
  it("prose without a cell finishes the turn (natural termination)", () => {
    const d = drive({ responses: [text("There are 3 lines.")] });
    expect(d.done.outcome).toEqual({
      type: "finished",
      finish: { kind: "assistantMessage", text: "There are 3 lines." },
    });
    expect(d.codes).toEqual([]);
    expect(roles(d)).toEqual(["user", "assistant"]);
    expect(protocolEvents(d.effects, "rlm.diagnostic")).toEqual([
      { iteration: 0, classification: "finish_prose" },
    ]);
    expect(d.requests[0]!.tools).toEqual([]);
  });

  it("a cell runs; its observation reaches the next prompt; `finish` ends with the value", () => {
    const d = drive({
      responses: [
        cell('r = await files.read({ path: "a.txt" })?\nprint r.totalLines', "Reading a.txt."),
        cell("finish { lines: 3 }"),
      ],
      exec: (_code, i) =>
        i === 0
          ? { ok: true, output: ["3"] }
          : { ok: true, output: [], finished: true, finalValue: { lines: 3 } },
    });
    expect(d.codes).toEqual([
      'r = await files.read({ path: "a.txt" })?\nprint r.totalLines',
      "finish { lines: 3 }",
    ]);
    expect(d.done.outcome).toEqual({ type: "finished", finish: { kind: "finalValue", value: { lines: 3 } } });
    expect(roles(d)).toEqual(["user", "assistant", "tool", "assistant", "tool"]);
    // The step is stored as prose + code, the observation as output parts.
    expect(d.done.messages[1]!.parts).toEqual([
      { type: "text", text: "Reading a.txt." },
      {
        type: "code",
        language: "lashlang",
        source: 'r = await files.read({ path: "a.txt" })?\nprint r.totalLines',
      },
    ]);
    expect(d.done.messages[2]!.parts).toEqual([{ type: "output", text: "3" }]);
    const second = requestText(d.requests[1]!);
    expect(second).toContain("Reading a.txt.\n<lashlang>\nr = await files.read");
    expect(second).toContain("history[1].output[0] (1 chars):\n3");
    expect(lastUserText(d.requests[1]!)).toContain("=== CURRENT ITERATION: 2 ===");
    const trajectory = protocolEvents(d.effects, "rlm.trajectory");
    expect(trajectory).toHaveLength(2);
    expect(trajectory[1]).toMatchObject({
      iteration: 1,
      code: "finish { lines: 3 }",
      final_output: { lines: 3 },
    });
  });

  it("two cells in one response: nothing runs, a repair message, then the model recovers", () => {
    const d = drive({
      responses: [
        text("<lashlang>\nprint 1\n</lashlang>\n<lashlang>\nprint 2\n</lashlang>\n"),
        cell("print 3"),
        text("Done."),
      ],
      exec: () => ({ ok: true, output: ["3"] }),
    });
    expect(d.codes).toEqual(["print 3"]);
    expect(requestText(d.requests[1]!)).toContain(repairMessage("multipleCells"));
    expect(d.done.messages[2]).toMatchObject({
      role: "system",
      parts: [{ text: repairMessage("multipleCells") }],
    });
    expect(repairMessage("multipleCells")).toContain(
      "Reply again using exactly one paired `<lashlang>...</lashlang>` block, with no text after `</lashlang>`.",
    );
    expect(d.done.outcome).toMatchObject({
      type: "finished",
      finish: { kind: "assistantMessage", text: "Done." },
    });
    expect(protocolEvents(d.effects, "rlm.diagnostic")[0]).toEqual({
      iteration: 0,
      classification: "invalid_lashlang_cell",
      error: "multipleCells",
    });
  });

  it("trailing text after the cell: nothing runs, a repair message, then the model recovers", () => {
    const d = drive({
      responses: [text("<lashlang>\nprint 1\n</lashlang>\nThat prints 1."), cell("finish 1")],
      exec: () => ({ ok: true, output: [], finished: true, finalValue: 1 }),
    });
    expect(d.codes).toEqual(["finish 1"]);
    expect(requestText(d.requests[1]!)).toContain(repairMessage("trailingText"));
    expect(d.done.outcome).toEqual({ type: "finished", finish: { kind: "finalValue", value: 1 } });
  });

  it("finishRequired: prose gets a reminder, a schema violation gets a repair, the fixed value finishes", () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    const d = drive({
      environment: { termination: { kind: "finishRequired", schema }, bindings: [] },
      responses: [text("The answer is three."), cell('finish { n: "three" }'), cell("finish { n: 3 }")],
      exec: (code) =>
        code.includes('"three"')
          ? {
              ok: true,
              output: [],
              finished: true,
              finalValue: { n: "three" },
              details: { schemaErrors: ["/n: expected integer, got string"] },
            }
          : { ok: true, output: [], finished: true, finalValue: { n: 3 } },
    });
    expect(d.codes).toHaveLength(2);
    expect(requestText(d.requests[1]!)).toContain(FINISH_REMINDER);
    const third = requestText(d.requests[2]!);
    expect(third).toContain(
      "The `finish` value didn't match the required output schema:\n/n: expected integer, got string\n\nFix the value and call `finish <corrected>` from another paired block.",
    );
    expect(third).toContain("Error:\n/n: expected integer, got string");
    expect(lastUserText(d.requests[0]!)).toContain("=== REQUIRED OUTPUT ===");
    expect(lastUserText(d.requests[0]!)).toContain('"n": {');
    expect(d.done.outcome).toEqual({ type: "finished", finish: { kind: "finalValue", value: { n: 3 } } });
  });

  it("max turns (natural): after the limit the model is told to answer in prose, then the turn stops", () => {
    const d = drive({
      maxTurns: 2,
      responses: [cell("print 1"), cell("print 2"), text("Summary: printed 1 and 2. Remaining: nothing.")],
      exec: (code) => ({ ok: true, output: [code.slice(6)] }),
    });
    expect(d.codes).toEqual(["print 1", "print 2"]);
    expect(d.requests).toHaveLength(3);
    const tail = lastUserText(d.requests[2]!);
    expect(tail).toContain("Turn limit reached (2). You MUST reply in plain prose now");
    expect(tail).not.toContain("Each response must be exactly one of");
    expect(d.done.outcome).toMatchObject({
      type: "stopped",
      reason: "maxTurns",
      text: "Summary: printed 1 and 2. Remaining: nothing.",
    });
  });

  it("max turns (finishRequired): no prose grace call, the turn stops at the limit", () => {
    const d = drive({
      maxTurns: 2,
      environment: { termination: { kind: "finishRequired" }, bindings: [] },
      responses: [cell("print 1"), cell("print 2")],
      exec: () => ({ ok: true, output: ["x"] }),
    });
    expect(d.requests).toHaveLength(2);
    expect(d.done.outcome).toMatchObject({ type: "stopped", reason: "maxTurns" });
  });

  it("an empty response stops the turn with a provider error", () => {
    const d = drive({ responses: [text("")] });
    expect(d.done.outcome).toEqual({ type: "stopped", reason: "providerError", message: EMPTY_RESPONSE });
    expect(d.codes).toEqual([]);
  });

  it("a runtime error is an observation the model sees; continue_as switches frames", () => {
    const d = drive({
      responses: [cell("print nope"), cell('await control.continue_as({ task: "go on", seed: { k: 1 } })?')],
      exec: (_code, i) =>
        i === 0
          ? { ok: false, output: [], error: "unknown name `nope`\n--> line 1, column 7" }
          : {
              ok: true,
              output: [],
              control: { type: "frameSwitch", frameId: "f2", task: "go on", seed: { k: 1 } },
            },
    });
    expect(requestText(d.requests[1]!)).toContain("Error:\nunknown name `nope`");
    expect(d.done.outcome).toEqual({ type: "frameSwitch", frameId: "f2", task: "go on", seed: { k: 1 } });
    expect(d.done.messages.at(-1)?.role).toBe("tool");
  });

  it("the same responses give the same effects (deterministic)", () => {
    const script = { responses: [cell("print 1"), text("ok")], exec: () => ({ ok: true, output: ["1"] }) };
    expect(JSON.stringify(drive(script).effects)).toBe(JSON.stringify(drive(script).effects));
  });
});
