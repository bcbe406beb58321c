import { describe, expect, it } from "vitest";
import { historyItems, previewText, renderHistory, renderTail, schemaType } from "../../src/internal.ts";
import { cell, drive, lastUserText, requestText, text } from "./harness.ts";

describe("rlm prompt", () => {
  it("first iteration (snapshot)", async () => {
    const d = drive({ responses: [text("Hello.")], input: "Summarize README.md." });
    await expect(requestText(d.requests[0]!)).toMatchFileSnapshot("./__snapshots__/first-iteration.txt");
  });

  it("a later iteration: history in emission format, previews, errors, bound variables, budget (snapshot)", async () => {
    const long = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n");
    const d = drive({
      input: "Find the longest line.",
      environment: (iteration) => ({
        termination: { kind: "natural" },
        finalAnswerFormat: { kind: "markdown" },
        contextBudget: 1000,
        bindings:
          iteration === 0
            ? []
            : [
                { name: "lines", type: "list[str]", preview: '["line 1","line 2",…', len: 3000 },
                { name: "n", type: "int", inline: "3000" },
              ],
      }),
      responses: [
        cell(
          'text = (await files.read({ path: "big.txt" })?).content\nlines = split(text, "\\n")\nprint text',
          "Reading.",
        ),
        cell("print nope"),
        text("Done."),
      ],
      exec: (_code, i) =>
        i === 0
          ? { ok: true, output: [long] }
          : {
              ok: false,
              output: [],
              error: "unknown name `nope`\n--> line 1, column 7\nprint nope\n      ^~~~",
            },
    });
    const third = requestText(d.requests[2]!);
    expect(third).toContain(
      "history[1].output[0] (28892 chars — preview only, full value retained; re-print history[1].output[0] for the rest):",
    );
    expect(lastUserText(d.requests[2]!)).toContain("Past the frame switch threshold.");
    await expect(third).toMatchFileSnapshot("./__snapshots__/later-iteration.txt");
  });

  it("the system prompt and history stay byte-stable across iterations; only the tail changes", () => {
    const d = drive({
      responses: [cell("print 1"), cell("print 2"), text("ok")],
      exec: (code) => ({ ok: true, output: [code.slice(6)] }),
    });
    const [a, b, c] = d.requests;
    expect(b!.system).toBe(a!.system);
    expect(c!.system).toBe(a!.system);
    // every message of request 2 but its tail is a prefix of request 3
    expect(c!.messages.slice(0, b!.messages.length - 1)).toEqual(b!.messages.slice(0, -1));
  });

  it("context budget escalates at 60%, 90% and 100%", () => {
    const tail = (tokens: number) =>
      renderTail({
        iteration: 1,
        historyCount: 1,
        finalNotice: false,
        tokens,
        environment: { termination: { kind: "natural" }, bindings: [], contextBudget: 100 },
      });
    expect(tail(10)).toContain("Tokens: 10 · frame switch threshold: 100 (10%).");
    expect(tail(10)).not.toMatch(/clean frame switch|Budget tight|Past the frame/);
    expect(tail(60)).toContain("Look for a clean frame switch point");
    expect(tail(90)).toContain("Budget tight — finish only the current step");
    expect(tail(100)).toContain("Past the frame switch threshold. End this block with `control.continue_as(");
  });

  it("a terminal step followed by an assistant message is superseded in history", () => {
    const items = historyItems([
      { id: "u", role: "user", parts: [{ type: "text", text: "hi" }] },
      { id: "a", role: "assistant", parts: [{ type: "code", language: "lashlang", source: "finish 1" }] },
      {
        id: "o",
        role: "tool",
        parts: [
          { type: "toolResult", callId: "f", name: "lashlang.finish", content: [], isError: false, value: 1 },
        ],
      },
      { id: "p", role: "assistant", parts: [{ type: "text", text: "The answer is 1." }] },
    ]);
    expect(items.map((i) => i.id)).toEqual(["u", "p"]);
    const kept = historyItems([
      { id: "a", role: "assistant", parts: [{ type: "code", language: "lashlang", source: "finish 1" }] },
      {
        id: "o",
        role: "tool",
        parts: [
          { type: "toolResult", callId: "f", name: "lashlang.finish", content: [], isError: false, value: 1 },
        ],
      },
    ]);
    expect(kept).toEqual([
      {
        kind: "lashlang_step",
        id: "a",
        prose: "",
        code: "finish 1",
        output: [],
        images: [],
        final_output: 1,
      },
    ]);
    expect(
      renderHistory([
        { id: "a", role: "assistant", parts: [{ type: "code", language: "lashlang", source: "x = 1" }] },
        { id: "o", role: "tool", parts: [] },
      ])[1]!.parts[0],
    ).toEqual({ type: "text", text: "(no printed output)" });
  });

  it("images printed by a step are listed and re-sent; long user messages are cut with a note", () => {
    const out = renderHistory([
      { id: "u", role: "user", parts: [{ type: "text", text: "x".repeat(12_000) }] },
      { id: "a", role: "assistant", parts: [{ type: "code", language: "lashlang", source: "print img" }] },
      {
        id: "o",
        role: "tool",
        parts: [{ type: "attachment", mediaType: "image/png", data: "AAAA", name: "img:c1:0" }],
      },
    ]);
    expect(out[0]!.parts[0]).toMatchObject({
      text: expect.stringContaining(
        "(preview only — full value retained; re-print history[0].content for the rest)",
      ),
    });
    expect(out[2]!.parts).toEqual([
      {
        type: "text",
        text: 'Images:\n- history[1].images[0]: {"id":"img:c1:0","media_type":"image/png","label":"img:c1:0"}',
      },
      { type: "attachment", mediaType: "image/png", data: "AAAA", name: "img:c1:0" },
    ]);
  });

  it("previews and schema types", () => {
    expect(previewText("short", 10)).toEqual({ text: "short", lossy: false, chars: 5 });
    const p = previewText("a\nb\nc\nd\ne\nf", 100, 3);
    expect(p.lossy).toBe(true);
    expect(p.text).toContain("chars truncated");
    expect(schemaType({ type: "array", items: { type: "string", enum: ["a", "b"] } })).toBe(
      'list[enum["a", "b"]]',
    );
    expect(schemaType({ anyOf: [{ type: "integer" }, { type: "null" }] })).toBe("int | null");
  });
});
