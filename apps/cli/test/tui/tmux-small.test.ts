// Issue 25 item 9 in a real terminal (tmux) at 80×24 and 120×40: /export's place,
// NO_COLOR, the exit (resume hint, no prompt box left), --continue (which session,
// ctx at once), `lash --resume` → the TUI picker, /model offers providers with a
// key, the paste count, wrapped input indented, the Ctrl+C hint times out.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type LashTerm, paneLines, SIZES, startLash } from "./tmux-term.ts";

const terms: LashTerm[] = [];
afterEach(async () => {
  for (const t of terms.splice(0).reverse()) await t.close();
});

describe.each(SIZES)("small items at $cols×$rows (tmux)", ({ cols, rows }) => {
  it("export, paste count, wrapped input, Ctrl+C hint, /model, exit hint; then --continue and --resume", async () => {
    const a = await startLash({
      cols,
      rows,
      replies: [{ text: "First answer.", usage: { input: 1200, output: 5 } }],
    });
    terms.push(a);
    await a.waitFor((s) => s.includes("ask anything"), "the prompt");

    // a paste of 150 lines (ending in a newline) says 150
    a.paste(`${Array.from({ length: 150 }, (_, i) => `line ${i + 1}`).join("\n")}\n`);
    await a.waitFor((s) => s.includes("[pasted 150 lines #1]"), "the paste marker");
    a.keys("C-u");
    await a.waitFor((s) => s.includes("ask anything"), "the cleared prompt");

    // a long input line wraps under its text, not at column 0
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    a.type(words);
    const wrapped = paneLines(await a.waitFor((s) => s.includes("w39"), "the long input"));
    const at = wrapped.findIndex((l) => l.startsWith("› w0 w1"));
    expect(at).toBeGreaterThan(0);
    expect(wrapped[at + 1]).toMatch(/^ {2}w\d+/);
    a.keys("Enter");
    await a.waitFor((s) => s.includes("First answer.") && s.includes("ask anything"), "the answer");

    // /export writes next to the sessions, not into the working directory
    a.type("/export md");
    a.keys("Enter");
    // (the path may wrap: compare without white space)
    const exported = await a.waitFor((s) => s.includes("exported to"), "the export");
    expect(exported.replace(/\s+/g, "")).toContain(`exportedto${join(a.home, "exports")}/ses_`);
    expect(readdirSync(join(a.home, "exports")).some((f) => f.endsWith(".md"))).toBe(true);
    expect(readdirSync(a.cwd).filter((f) => f.startsWith("lash-"))).toEqual([]);

    // /model offers only providers with a key (here: none but the openai-compatible server)
    a.type("/model");
    a.keys("Enter");
    const picker = await a.waitFor((s) => s.includes("Model for new sessions"), "the model picker");
    expect(picker).not.toMatch(/anthropic\/|openai\/gpt|google\//);
    a.keys("Escape");
    await a.waitFor(
      (s) => s.includes("ask anything") && !s.includes("Model for new sessions ("),
      "the closed picker",
    );

    // the Ctrl+C hint goes away by itself
    a.keys("C-c");
    await a.waitFor((s) => s.includes("press Ctrl+C again to quit"), "the Ctrl+C hint");
    await a.waitFor(
      (s) => !a.screen().includes("press Ctrl+C again to quit") && s.includes("ask anything"),
      "the hint to time out",
      10_000,
    );

    // leaving: the resume hint, and no prompt box or status bar left behind
    a.keys("C-d");
    const exited = await a.waitFor((s) => s.includes("LASH-EXITED"), "the exit");
    expect(exited).toMatch(/Resume this session with: lash --resume ses_\w+/);
    const tail = exited.slice(exited.lastIndexOf("First answer."));
    expect(tail).not.toContain("ask anything");
    expect(tail).not.toMatch(/openai-compatible\/mock · standard · ctx/);
    expect(exited).toContain("LASH-EXITED 0");

    // --continue: says which session it opened, and the context at once
    const b = await startLash({
      cols,
      rows,
      replies: [],
      args: ["--continue"],
      reuse: { root: (a as LashTerm & { root: string }).root },
    });
    terms.push(b);
    const cont = await b.waitFor(
      (s) =>
        s.includes("ask anything") &&
        s.includes("First answer.") &&
        / · 1 turn · /.test(s.replace(/\s+/g, " ")),
      "the continued session",
    );
    expect(cont.replace(/\s+/g, " ")).toMatch(
      /session (?:"[^"]+" )?ses_\w+ · 1 turn · openai-compatible\/mock/,
    );
    expect(cont).toMatch(/ctx ~\d/);
    expect(cont).toContain("First answer.");
    b.keys("C-d");
    await b.waitFor((s) => s.includes("LASH-EXITED"), "the exit");

    // --resume without an id: the TUI's picker (not a numbered prompt)
    const c = await startLash({
      cols,
      rows,
      replies: [],
      args: ["--resume"],
      reuse: { root: (a as LashTerm & { root: string }).root },
    });
    terms.push(c);
    const pick = await c.waitFor((s) => s.includes("Resume a session of this directory"), "the picker");
    expect(pick).not.toContain("Number (Enter for the newest");
    c.keys("Enter");
    await c.waitFor((s) => /resumed /.test(s) && s.includes("First answer."), "the resumed session");
    c.keys("C-d");
    await c.waitFor((s) => s.includes("LASH-EXITED"), "the exit");
  }, 180_000);

  it("NO_COLOR: no colour escapes on the screen", async () => {
    const t = await startLash({ cols, rows, replies: [], env: { NO_COLOR: "1" } });
    terms.push(t);
    await t.waitFor((s) => s.includes("ask anything"), "the prompt");
    const ansi = t.screenAnsi();
    // foreground/background colours: 30–37, 90–97, 40–47, 38;…, 48;…
    expect(ansi).not.toMatch(/\x1b\[[\d;]*(?:3[0-7]|9[0-7]|4[0-7]|38;|48;)[\d;]*m/);
    expect(existsSync(t.cwd)).toBe(true);
  }, 60_000);
});
