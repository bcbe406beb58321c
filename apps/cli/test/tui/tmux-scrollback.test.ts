// Issue 25 items 1, 3, 5, 8 in a real terminal: the whole scrollback (`capture-pane -S -`) after a
// long streamed answer holds one copy of it and no frame fragments; wide tables and long code
// lines stay inside the width; keys batched in one write are read as the keys they are; Ctrl+O
// and /resume keep the earlier scrollback.
import { afterEach, describe, expect, it } from "vitest";
import { cellWidth, count, hasTmux, startLash, TMUX_MISSING, type TmuxLash } from "./tmux-harness.ts";

const WORDS =
  "the quick brown fox jumps over a lazy dog while streaming tokens arrive in small pieces and wrap across rows".split(
    " ",
  );

/** Ten paragraphs with unique start/end markers; some hold wide characters (CJK, emoji). */
function paragraphs(): string {
  const out: string[] = [];
  for (let p = 1; p <= 10; p++) {
    const id = String(p).padStart(2, "0");
    const words: string[] = [`P${id}start`];
    for (let w = 0; w < 70 + p * 3; w++) words.push(WORDS[(w * 7 + p) % WORDS.length]!);
    if (p % 3 === 0) words.splice(20, 0, "漢字の幅は二列です", "😀🚀", "宽字符");
    words.push(`P${id}end.`);
    out.push(words.join(" "));
  }
  return out.join("\n\n");
}

const sizes = [
  { cols: 80, rows: 24 },
  { cols: 120, rows: 40 },
] as const;

let lash: TmuxLash | undefined;
afterEach(async () => {
  await lash?.close();
  lash = undefined;
});

describe.each(sizes)("lash in tmux at $cols×$rows", ({ cols, rows }) => {
  it("a 10-paragraph streamed answer leaves one copy of its text and no frame fragments", async () => {
    if (!hasTmux) throw new Error(TMUX_MISSING);
    const text = paragraphs();
    lash = await startLash({
      cols,
      rows,
      replies: [{ text, textChunks: 160, chunkDelayMs: 15, usage: { input: 100, output: 900 } }],
    });
    await lash.waitScreen((s) => s.includes("ask anything"), "the prompt");
    lash.type("write ten paragraphs");
    lash.keys("Enter");
    await lash.waitScreen(
      (s) => s.includes("P10end.") && s.includes("ask anything") && !s.includes("esc to cancel"),
      "the answer",
    );
    const all = lash.history();
    for (let p = 1; p <= 10; p++) {
      const id = String(p).padStart(2, "0");
      expect(count(all, `P${id}start`), `P${id}start in\n${all}`).toBe(1);
      expect(count(all, `P${id}end.`), `P${id}end in\n${all}`).toBe(1);
    }
    expect(count(all, "› write ten paragraphs")).toBe(1);
    // the live frame (spinner line, prompt box, status bar) is on screen once and nowhere in the scrollback
    expect(count(all, "esc to cancel"), all).toBe(0);
    expect(count(all, "mock · standard · ctx"), all).toBe(1);
    expect(count(all, "ask anything"), all).toBe(1);
    // every row fits the width (no row the terminal had to wrap)
    for (const row of lash.history(true).split("\n")) expect(cellWidth(row), row).toBeLessThanOrEqual(cols);
  }, 120_000);
});
