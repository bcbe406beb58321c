// Issue 25 items 6 and 7 in a real terminal (tmux) at 80×24 and 120×40: a running
// subagent shows its child's tool calls live and `/stop` cancels just the child;
// a code block's rows copy as the code alone (no gutter).
import { afterEach, describe, expect, it } from "vitest";
import { type LashTerm, paneLines, SIZES, startLash } from "./tmux-term.ts";

let term: LashTerm | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const CODE = ["def area(r):", "    # the circle's area", "    return 3.14159 * r * r", "", "print(area(2))"];

describe.each(SIZES)("cards at $cols×$rows (tmux)", ({ cols, rows }) => {
  it("a running subagent shows its child's tool calls, tokens and cost; /stop cancels just the child", async () => {
    const t = await startLash({
      cols,
      rows,
      replies: [
        // the parent delegates
        {
          toolCalls: [
            { id: "p1", name: "spawn_agent", arguments: { task: "inspect the repo", capability: "peer" } },
          ],
          usage: { input: 100, output: 10 },
        },
        // the child: one quick command, then a slow one
        {
          toolCalls: [{ id: "k1", name: "shell", arguments: { command: "echo child-one" } }],
          usage: { input: 400, output: 20 },
        },
        {
          toolCalls: [{ id: "k2", name: "shell", arguments: { command: "sleep 45; echo never" } }],
          usage: { input: 500, output: 30 },
        },
        // the parent after the child was stopped
        { text: "The subagent was stopped; carrying on.", usage: { input: 200, output: 10 } },
      ],
    });
    term = t;
    await t.waitFor((s) => s.includes("ask anything"), "the prompt");
    t.type("delegate it");
    t.keys("Enter");
    const live = await t.waitFor(
      (s) => /◌ shell \$ sleep 45; echo never/.test(s) && /● shell \$ echo child-one/.test(s),
      "the child's tool calls under the subagent card",
    );
    expect(live).toMatch(/Subagent inspect the repo/);
    expect(live).toMatch(/2 tool calls/);
    expect(live).toMatch(/\d[\d.]*k? tokens/);
    expect(live).toContain("/stop cancels just this subagent");
    // the parent's turn is still running
    expect(live).toMatch(/esc to cancel/);

    t.type("/stop");
    t.keys("Enter");
    const after = await t.waitFor(
      (s) => s.includes("The subagent was stopped; carrying on.") && s.includes("ask anything"),
      "the parent's answer after the stop",
    );
    expect(after).toMatch(/stopping the subagent ses_\S+ \(the turn goes on\)/);
    expect(after).toMatch(/✗ Subagent inspect the repo.*cancelled/);
    expect(after).not.toContain("⊘ cancelled —"); // the parent's turn was not cancelled
    expect(t.server.requests.length).toBe(4);
  }, 120_000);

  it("a code block's rows are the code alone (no gutter to copy)", async () => {
    const t = await startLash({
      cols,
      rows,
      replies: [
        {
          text: `Here it is:\n\n\`\`\`python\n${CODE.join("\n")}\n\`\`\`\n\nDone.`,
          usage: { input: 10, output: 5 },
        },
      ],
    });
    term = t;
    await t.waitFor((s) => s.includes("ask anything"), "the prompt");
    t.type("show code");
    t.keys("Enter");
    const s = await t.waitFor((p) => p.includes("Done.") && p.includes("ask anything"), "the answer");
    const lines = paneLines(s);
    const first = lines.indexOf(CODE[0]!);
    expect(first).toBeGreaterThan(0);
    // the block's rows, as a terminal selection of them copies them: exactly the source
    expect(lines.slice(first, first + CODE.length)).toEqual(CODE);
    expect(s).not.toMatch(/│ ?(def area|print\(area)/);
  }, 60_000);

  it("a failed shell with a long command shows ✗ and its exit code in the scrollback (item 2)", async () => {
    const long = `echo ${"x".repeat(cols)} >/dev/null; echo failing-now; exit 3`;
    const t = await startLash({
      cols,
      rows,
      replies: [
        {
          toolCalls: [{ id: "f1", name: "shell", arguments: { command: long } }],
          usage: { input: 10, output: 5 },
        },
        { text: "It failed.", usage: { input: 10, output: 5 } },
      ],
    });
    term = t;
    await t.waitFor((s) => s.includes("ask anything"), "the prompt");
    t.type("run it");
    t.keys("Enter");
    await t.waitFor((s) => s.includes("It failed.") && s.includes("ask anything"), "the answer");
    const header = t
      .scrollback()
      .split("\n")
      .find((l) => /Shell \$ echo x/.test(l));
    // the status is never the part that is cut: the failure marker and the exit code stay
    expect(header).toMatch(/^✗ Shell/);
    expect(header).toContain("exit 3");
    expect(header).not.toContain("●");
    for (const l of t.scrollback().split("\n")) expect(l.length).toBeLessThanOrEqual(cols);
  }, 60_000);
});
