// /compact in the TUI (App + controller on a real runtime, keys through stdin): the compaction
// card, the context shown dropping, and the next request carrying the summary.
import { LashRuntime } from "@lash/core";
import type { LlmRequest } from "@lash/sansio";
import { Effect } from "effect";
import { render } from "ink-testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { TuiController } from "../../src/tui/controller.ts";
import { History } from "../../src/tui/editor.ts";
import { App } from "../../src/tui/view/app.ts";
import { h } from "../../src/tui/view/text.ts";
import { makeContext, plain, type TestContext, waitForFrame } from "./support.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const LONG = "a long answer with many words in it ".repeat(400);

describe("TUI: /compact", () => {
  it("shows the compaction card, the context % drops, and the next request sends the summary", async () => {
    const t: TestContext = await makeContext([
      { text: LONG, usage: { input: 30_000, output: 3_000 } },
      { text: "## Goals and constraints\nfinish the report\n## Plan state\nstep 2 of 3" },
      { text: "after the summary", usage: { input: 900, output: 5 } },
    ]);
    const controller = new TuiController(t.ctx, { throttleMs: 0, clearScreen: () => {} });
    const r = render(h(App, { controller, history: new History([]) }));
    cleanups.push(async () => {
      r.unmount();
      await t.cleanup();
    });
    await controller.start();
    const type = async (s: string) => {
      r.stdin.write(s);
      await new Promise<void>((resolve) => setImmediate(resolve));
    };
    const send = async (s: string) => {
      await type(s);
      await type("\r");
      await controller.idle();
    };
    const wait = (pred: (f: string) => boolean) => waitForFrame(r, (f) => pred(plain(f)));

    await send("write the report");
    await wait((f) => f.includes("30%"));
    await send("/compact keep the plan");
    const frame = await wait((f) => f.includes("compacted: 2 messages summarised in 1 stage"));
    expect(frame).toContain("finish the report");
    // the context is now the summary's estimate: far below 30 %
    const pct = /(\d+)%/.exec(
      frame
        .split("\n")
        .filter((l) => l.includes("ctx"))
        .join(" "),
    );
    expect(pct).not.toBeNull();
    expect(Number(pct![1])).toBeLessThan(5);

    await send("go on");
    await wait((f) => f.includes("after the summary"));
    const requests = (t.provider as { requests: LlmRequest[] }).requests;
    const summariser = requests[1]!;
    expect(JSON.stringify(summariser.messages)).toContain("keep the plan");
    const last = JSON.stringify(requests[2]!.messages);
    expect(last).toContain("finish the report");
    expect(last).not.toContain("write the report");
    const id = controller.getState().sessionId!;
    const nodes = await t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.chronological(id)));
    expect(nodes.filter((n) => n.kind === "protocol")).toHaveLength(1);
  });
});
