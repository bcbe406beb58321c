// /compact in a real terminal (tmux): the compaction card, and the context % in the status
// bar dropping from what the provider reported to the summary's estimate.
import { afterEach, describe, expect, it } from "vitest";
import { type LashTerm, startLash } from "./tmux-term.ts";

let term: LashTerm | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

const pctOf = (screen: string): number | undefined => {
  const m = /ctx \S+ \/ \S+ \((\d+)%\)/.exec(screen);
  return m ? Number(m[1]) : undefined;
};

describe("/compact (tmux, 100×30)", () => {
  it("shows the compaction card and the context % dropping", async () => {
    const t = await startLash({
      cols: 100,
      rows: 30,
      args: ["--context-window", "100000"],
      replies: [
        { text: "Here is the long first draft of the report.", usage: { input: 60_000, output: 400 } },
        {
          text: "## Goals and constraints\nwrite the quarterly report\n## Plan state\ndraft done, review next",
        },
        { text: "Reviewing from the summary.", usage: { input: 700, output: 10 } },
      ],
    });
    term = t;
    // type, see it in the prompt, then Enter (an Enter in the same burst as the text reads as a pasted newline)
    const send = async (text: string) => {
      t.type(text);
      await t.waitScreen((s) => s.includes(`› ${text}`), `"${text}" in the prompt`);
      t.keys("Enter");
    };
    await t.waitFor((s) => s.includes("ask anything"), "the prompt");
    await send("draft the report");
    const before = await t.waitScreen((s) => pctOf(s) === 60, "the context at 60 %");
    expect(before).toContain("long first draft");

    await send("/compact keep the plan");
    const after = await t.waitScreen(
      (s) => s.includes("compacted: 2 messages summarised in 1 stage") && (pctOf(s) ?? 100) < 60,
      "the compaction card and a lower context %",
    );
    expect(after).toContain("write the quarterly report");
    expect(pctOf(after)).toBeLessThan(5);
    const summariser = t.server.requests[1]!;
    expect(JSON.stringify(summariser.body)).toContain("keep the plan");

    await send("review it");
    await t.waitScreen((s) => s.includes("Reviewing from the summary."), "the next answer");
    const next = JSON.stringify(t.server.requests[2]!.body);
    expect(next).toContain("write the quarterly report");
    expect(next).not.toContain("draft the report");
  }, 90_000);
});
