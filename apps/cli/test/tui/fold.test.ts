// Folding per card (`/expand` prints one card again in full, the rest stay folded)
// and thinking rendered as markdown.
import { Box } from "ink";
import { render } from "ink-testing-library";
import { describe, expect, it } from "vitest";
import { type Item, Transcript } from "../../src/tui/model.ts";
import { ItemView } from "../../src/tui/view/items.ts";
import { h } from "../../src/tui/view/text.ts";
import { plain } from "./support.ts";

function show(items: readonly Item[], expanded = false, width = 100): string {
  const r = render(
    h(
      Box,
      { flexDirection: "column" },
      ...items.map((item) => h(ItemView, { key: item.id, item, width, expanded })),
    ),
  );
  const out = plain(r.lastFrame());
  r.unmount();
  return out;
}

const base = { sessionId: "s", turnId: "t", seq: 0, at: 1000 } as const;

function longDiffTurn(tr: Transcript, callId: string, path: string): void {
  const diff = [
    `--- a/${path}`,
    `+++ b/${path}`,
    "@@ -1,20 +1,20 @@",
    ...Array.from({ length: 20 }, (_, i) => `-old ${i}\n+new ${i}`),
  ].join("\n");
  tr.apply({ ...base, type: "toolStarted", callId, name: "edit", args: { path }, family: "edit" });
  tr.apply({
    ...base,
    type: "toolCompleted",
    callId,
    name: "edit",
    isError: false,
    content: [{ type: "text", text: "edited" }],
    details: { path, diff },
    durationMs: 5,
    replayed: false,
  });
}

describe("per-card folding", () => {
  it("/expand prints the chosen card again unfolded; the other cards stay folded", () => {
    const tr = new Transcript();
    tr.apply({ ...base, type: "turnStarted", input: [], resumed: false } as never);
    longDiffTurn(tr, "c1", "a.ts");
    longDiffTurn(tr, "c2", "b.ts");
    const folded = show(tr.committed);
    expect(folded).toContain("more diff lines (/expand shows this card)");
    expect(folded).not.toContain("new 19");
    // n = 2: the second newest card (a.ts), in full
    const copy = tr.unfoldCopy(2)!;
    expect(copy.kind).toBe("tool");
    const out = show([copy]);
    expect(out).toContain("Edit a.ts");
    expect(out).toContain("+ new 19");
    expect(out).not.toContain("more diff lines");
    // the copy is not itself a candidate: /expand again picks the newest original card
    expect(tr.unfoldCopy(1)).toMatchObject({ kind: "tool", args: { path: "b.ts" } });
  });
});

describe("thinking", () => {
  it("is rendered as markdown when expanded (no raw ** or ###)", () => {
    const tr = new Transcript();
    tr.apply({
      ...base,
      type: "reasoningDelta",
      text: "### Plan\n\nFirst **check** the `tests`.\n\n- one\n- two",
    });
    tr.apply({ ...base, type: "textDelta", text: "ok" });
    tr.apply({ ...base, type: "llmResponse", iteration: 0, stopReason: "stop", usage: {} } as never);
    const out = show(tr.committed, true);
    expect(out).toContain("Plan");
    expect(out).not.toContain("###");
    expect(out).toContain("First check the tests.");
    expect(out).toMatch(/• one|- one|· one/);
    expect(out).not.toContain("**");
  });
});

describe("counts", () => {
  it('a glob with one hit says "1 file", a grep with one "1 match"', () => {
    const tr = new Transcript();
    for (const [callId, name] of [
      ["g1", "glob"],
      ["g2", "grep"],
    ] as const) {
      tr.apply({ ...base, type: "toolStarted", callId, name, args: { pattern: "*.ts" }, family: "search" });
      tr.apply({
        ...base,
        type: "toolCompleted",
        callId,
        name,
        isError: false,
        content: [{ type: "text", text: "a.ts" }],
        details: { count: 1 },
        durationMs: 1,
        replayed: false,
      });
    }
    const out = show(tr.committed);
    expect(out).toMatch(/Glob \*\.ts {2}1 file ·/);
    expect(out).toMatch(/Grep "\*\.ts" {2}1 match ·/);
  });
});
