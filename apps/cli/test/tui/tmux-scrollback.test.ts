// Issue 25 items 1, 3, 5, 8 in a real terminal: the whole scrollback (`capture-pane -S -`) after a
// long streamed answer holds one copy of it and no frame fragments; wide tables and long code
// lines stay inside the width; keys batched in one write are read as the keys they are; Ctrl+O
// and /resume keep the earlier scrollback.
import { afterEach, describe, expect, it } from "vitest";
import {
  BEFORE_LASH,
  cellWidth,
  count,
  hasTmux,
  startLash,
  TMUX_MISSING,
  type TmuxLash,
} from "./tmux-harness.ts";

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

  it("keys batched in one write are read as the keys they are: Ctrl+U then text; Down then Enter in /resume", async () => {
    if (!hasTmux) throw new Error(TMUX_MISSING);
    lash = await startLash({
      cols,
      rows,
      replies: [{ text: "answer alpha" }, { text: "answer beta" }, { text: "answer gamma" }],
    });
    const ready = () => lash!.waitScreen((s) => s.includes("ask anything"), "the idle prompt");
    await ready();
    lash.type("garbage to clear");
    await lash.waitScreen((s) => s.includes("› garbage to clear"), "the typed text");
    // Ctrl+U and the new text in one write
    lash.bytes(`15${Buffer.from("alpha prompt").toString("hex")}`);
    await lash.waitScreen(
      (s) => /› alpha prompt\s*\n/.test(s) && !s.includes("garbage"),
      "the prompt replaced",
    );
    lash.keys("Enter");
    await lash.waitScreen((s) => s.includes("answer alpha") && s.includes("ask anything"), "answer alpha");
    let previous = "answer alpha";
    for (const [name, answer] of [
      ["beta", "answer beta"],
      ["gamma", "answer gamma"],
    ] as const) {
      lash.type("/new");
      lash.keys("Enter");
      const before = previous;
      await lash.waitScreen(
        (s) => s.lastIndexOf("new session — it is saved") > s.lastIndexOf(before),
        "the new session",
      );
      previous = answer;
      lash.type(`${name} prompt`);
      lash.keys("Enter");
      await lash.waitScreen((s) => s.includes(answer) && s.includes("ask anything"), answer);
    }
    lash.type("/resume");
    lash.keys("Enter");
    // newest first: beta, then alpha (gamma is the current session)
    await lash.waitScreen((s) => /❯ beta prompt/.test(s) && s.includes("alpha prompt"), "the picker");
    lash.bytes("1b5b420d"); // Down and Enter in one write
    const resumed = await lash.waitScreen((s) => s.includes("resumed alpha prompt"), "alpha resumed");
    expect(resumed).not.toContain("resumed beta prompt");
    expect(lash.history()).toContain(BEFORE_LASH);
    // the earlier sessions are still in the scrollback, once; the switch printed a separator and alpha's history
    const all = lash.history();
    expect(all).not.toContain("garbage");
    expect(count(all, "› beta prompt"), all).toBe(1);
    expect(count(all, "› gamma prompt"), all).toBe(1);
    expect(count(all, "answer gamma"), all).toBe(1);
    expect(count(all, "› alpha prompt"), all).toBe(2);
    expect(all).toMatch(/── alpha prompt · ses_\S+ ─+/);
    expect(all.indexOf("answer gamma")).toBeLessThan(all.lastIndexOf("› alpha prompt"));
  }, 120_000);

  it("Ctrl+O and Ctrl+L keep the earlier scrollback and leave no frame behind", async () => {
    if (!hasTmux) throw new Error(TMUX_MISSING);
    lash = await startLash({
      cols,
      rows,
      replies: [
        { text: "first answer" },
        {
          reasoning: "a hidden plan in three steps",
          text: "Running it.",
          toolCalls: [{ id: "c1", name: "shell", arguments: { command: "seq 1 30" } }],
        },
        { text: "second answer" },
      ],
    });
    await lash.waitScreen((s) => s.includes("ask anything"), "the prompt");
    lash.type("first prompt");
    lash.keys("Enter");
    await lash.waitScreen((s) => s.includes("first answer") && s.includes("ask anything"), "first answer");
    lash.type("second prompt");
    lash.keys("Enter");
    await lash.waitScreen((s) => s.includes("second answer") && s.includes("ask anything"), "second answer");
    expect(lash.history()).not.toContain("a hidden plan");
    lash.keys("C-o");
    await lash.waitHistory((s) => s.includes("a hidden plan in three steps"), "the expanded reasoning");
    // nothing was erased: the terminal's lines from before lash, the first turn once
    const afterCtrlO = lash.history();
    expect(afterCtrlO).toContain(BEFORE_LASH);
    expect(count(afterCtrlO, "› first prompt"), afterCtrlO).toBe(1);
    lash.keys("C-l");
    await lash.waitScreen((s) => s.includes("screen cleared"), "the repaint");
    await lash.waitScreen((s) => !s.includes("screen cleared"), "the hint gone");
    const all = lash.history();
    expect(all).toContain(BEFORE_LASH);
    expect(count(all, "› first prompt"), all).toBe(1);
    expect(count(all, "first answer"), all).toBe(1);
    expect(count(all, "› second prompt"), all).toBe(1);
    expect(all).toMatch(/── the last turn, expanded · ctrl\+o collapses ─+/);
    expect(all).toContain("a hidden plan in three steps");
    // the frame is drawn once (on screen), none of it went to the scrollback
    expect(count(all, "mock · standard · ctx"), all).toBe(1);
    expect(count(all, "ask anything"), all).toBe(1);
  }, 120_000);

  it("a wide table, long code lines and nested lists stay inside the width: code without a gutter, lists with their indents", async () => {
    if (!hasTmux) throw new Error(TMUX_MISSING);
    const longCall = `const result = await client.request(${Array.from({ length: 14 }, (_, i) => `"parameter-${i}"`).join(", ")});`;
    const text = [
      "Here is the comparison:",
      "",
      "| tool | what it does | notes |",
      "|---|---|---|",
      "| grep | searches file contents for a regular expression across the whole repository tree | fast, respects .gitignore when run through the tools walker |",
      "| glob | lists files whose paths match a pattern | TBLEND |",
      "",
      "```ts",
      longCall,
      "```",
      "",
      "- first level",
      "  - a nested item whose text is much longer than any terminal is wide so that it has to wrap onto more rows of the terminal even at one hundred and twenty columns NESTEDEND",
    ].join("\n");
    lash = await startLash({ cols, rows, replies: [{ text, textChunks: 20, chunkDelayMs: 10 }] });
    await lash.waitScreen((s) => s.includes("ask anything"), "the prompt");
    lash.type("compare them");
    lash.keys("Enter");
    await lash.waitHistory((s) => s.includes("NESTEDEND") && s.includes("⎯"), "the answer");
    // no row the terminal had to wrap
    for (const row of lash.history(true).split("\n")) expect(cellWidth(row), row).toBeLessThanOrEqual(cols);
    const all = lash.history().split("\n");
    // the table: its cells wrap inside their columns (every row's bars in the same columns)
    const start = all.findIndex((l) => /tool\s+│ what it does/.test(l));
    const end = all.findIndex((l) => l.includes("TBLEND"));
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start + 3);
    const bars = all
      .slice(start, end + 1)
      .map((l) => [...l.matchAll(/[│┼]/g)].map((m) => cellWidth(l.slice(0, m.index))));
    for (const b of bars) expect(b, all.slice(start, end + 1).join("\n")).toEqual(bars[0]);
    // the code line wraps at column 0 without a gutter (its rows copy as the code alone), inside the width
    const code = all.filter((l) => l.includes("parameter-"));
    expect(code.length).toBeGreaterThan(1);
    expect(code[0]).toMatch(/^const result = await client\.request\(/);
    for (const l of code) {
      expect(cellWidth(l), l).toBeLessThanOrEqual(cols);
      expect(l).not.toContain("│");
      expect(l).toMatch(/^\S/);
    }
    expect(code.join(" ")).toContain(longCall);
    // the nested item wraps under its text, not at column 0
    const nested = all.findIndex((l) => l.includes("◦ a nested item"));
    const textCol = all[nested]!.indexOf("a nested item");
    const rest = all.slice(nested + 1, all.findIndex((l) => l.includes("NESTEDEND")) + 1);
    expect(rest.length).toBeGreaterThan(0);
    for (const l of rest) expect(l.match(/^ */)![0].length).toBe(textCol);
  }, 120_000);
});

describe("lash in tmux, resized", () => {
  it("shrinking the window leaves one prompt box, not a doubled one", async () => {
    if (!hasTmux) throw new Error(TMUX_MISSING);
    lash = await startLash({ cols: 120, rows: 40, replies: [{ text: "hello there" }] });
    await lash.waitScreen((s) => s.includes("ask anything"), "the prompt");
    lash.type("hi");
    lash.keys("Enter");
    await lash.waitScreen((s) => s.includes("hello there") && s.includes("ask anything"), "the answer");
    lash.type("draft");
    await lash.waitScreen((s) => s.includes("› draft"), "the draft");
    for (const [cols, rows] of [
      [80, 40],
      [60, 30],
    ] as const) {
      lash.resize(cols, rows);
      const screen = await lash.waitScreen(
        (s) => s.split("\n").some((l) => l.startsWith("openai-compatible/mock") && cellWidth(l) === cols),
        `the frame at ${cols} columns`,
      );
      // one box: two border rows, one prompt row, one status bar
      const borders = screen.split("\n").filter((l) => /^─+$/.test(l));
      expect(borders, screen).toEqual(["─".repeat(cols), "─".repeat(cols)]);
      expect(count(screen, "› draft"), screen).toBe(1);
      expect(count(screen, "mock · standard · ctx"), screen).toBe(1);
      expect(screen).toContain("● hello there");
    }
  }, 120_000);
});
