// Issue 25 item 4 in a real terminal (tmux) at 80×24 and 120×40: the `/` menu as
// you type, `@path` completion and attachment, Ctrl+R history search, and
// `!command` without a model turn (its output goes with the next prompt).
import { afterEach, describe, expect, it } from "vitest";
import { type LashTerm, SIZES, startLash } from "./tmux-term.ts";

let term: LashTerm | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const userText = (body: unknown): string =>
  JSON.stringify(
    ((body as { messages?: { role: string; content: unknown }[] }).messages ?? []).filter(
      (m) => m.role === "user",
    ),
  );

describe.each(SIZES)("prompt ergonomics at $cols×$rows (tmux)", ({ cols, rows }) => {
  it("/ menu, @path completion + attachment, Ctrl+R, !command", async () => {
    const t = await startLash({
      cols,
      rows,
      replies: [
        { text: "I read the widget.", usage: { input: 900, output: 5 } },
        { text: "It said forty-two.", usage: { input: 950, output: 5 } },
      ],
      files: {
        "src/alpha-widget.ts": "export const ALPHA = 41;\n",
        "src/beta.ts": "export const BETA = 2;\n",
        "docs/guide.md": "# Guide\n",
        "ignored/alpha-hidden.ts": "secret stuff\n",
        ".gitignore": "ignored/\n",
      },
      history: ["first old prompt", "deploy the staging server", "another one"],
    });
    term = t;
    await t.waitFor((s) => s.includes("ask anything"), "the prompt");

    // `/` opens the command menu as you type; Tab completes the selected entry
    t.type("/");
    let s = await t.waitFor((p) => /\/help\s+keys and commands/.test(p), "the / menu");
    expect(s).toMatch(/\/model \[provider\/model\]\s+show or switch the model/);
    t.type("res");
    s = await t.waitFor((p) => /❯ \/resume \[id\]/.test(p) && !/\/help\s+keys/.test(p), "the filtered menu");
    t.keys("Tab");
    await t.waitFor((p) => /› \/resume\s*$/m.test(p) && !p.includes("❯ /resume"), "the completed command");
    t.keys("C-u");
    await t.waitFor((p) => p.includes("ask anything"), "the cleared prompt");

    // `@` completes files of the workspace (fuzzy, .gitignore respected)
    t.type("what is in @alwid");
    s = await t.waitFor((p) => p.includes("❯ src/alpha-widget.ts"), "the @ menu");
    expect(s).not.toContain("alpha-hidden.ts"); // ignored by .gitignore
    t.keys("Tab");
    await t.waitFor((p) => p.includes("› what is in @src/alpha-widget.ts"), "the completed path");
    t.keys("Enter");
    s = await t.waitFor((p) => p.includes("I read the widget."), "the answer");
    expect(s).toContain("attached 1 file: src/alpha-widget.ts");
    const first = t.server.requests[0]!;
    expect(userText(first.body)).toContain('<file path=\\"src/alpha-widget.ts\\">');
    expect(userText(first.body)).toContain("export const ALPHA = 41;");

    // Ctrl+R finds an older prompt; Enter puts it in the prompt (not sent)
    t.keys("C-r");
    await t.waitFor((p) => p.includes("reverse search:"), "the search line");
    t.type("stag");
    s = await t.waitFor((p) => /reverse search: stag.*deploy the staging server/.test(p), "the match");
    t.keys("Enter");
    await t.waitFor(
      (p) => p.includes("› deploy the staging server") && !p.includes("reverse search:"),
      "the loaded prompt",
    );
    expect(t.server.requests.length).toBe(1);
    t.keys("C-u");
    await t.waitFor((p) => p.includes("ask anything"), "the cleared prompt");

    // `!command` runs in a shell, shows its output, asks no model
    t.type("!echo shell-said-$((6*7))");
    t.keys("Enter");
    s = await t.waitFor(
      (p) => /● Shell \$ echo shell-said-\$\(\(6\*7\)\)/.test(p) && /⎿ shell-said-42/.test(p),
      "the shell card",
    );
    expect(s).toContain("goes with your next prompt");
    expect(t.server.requests.length).toBe(1);
    // … and its output goes with the next prompt
    t.type("what did it say?");
    t.keys("Enter");
    await t.waitFor((p) => p.includes("It said forty-two."), "the second answer");
    const second = userText(t.server.requests[1]!.body);
    expect(second).toContain("shell-said-42");
    expect(second).toContain("what did it say?");
  }, 120_000);
});
