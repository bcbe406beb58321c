// Compaction strategy "handoff" in the TUI (App + controller on a real runtime, keys through
// stdin): /compact opens a successor session, the TUI switches to it, and the next prompt goes
// to the successor, whose history starts with the summary.
import { HANDOFF_PREFIX, LashRuntime } from "@lash/core";
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

describe("TUI: handoff", () => {
  it("/compact with the handoff strategy switches the TUI to the successor session", async () => {
    const t: TestContext = await makeContext(
      [
        { text: "the first answer" },
        { text: "## Goals and constraints\nfinish the report" },
        { text: "answered in the successor" },
      ],
      { compaction: { strategy: "handoff" } },
    );
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
    await wait((f) => f.includes("the first answer"));
    const first = controller.getState().sessionId!;
    await send("/compact");
    await wait((f) => f.includes("handed off: the session continues as"));
    const successor = controller.getState().sessionId!;
    expect(successor).not.toBe(first);

    await send("go on");
    await wait((f) => f.includes("answered in the successor"));
    const requests = (t.provider as { requests: LlmRequest[] }).requests;
    const last = JSON.stringify(requests[2]!.messages);
    expect(last).toContain(JSON.stringify(HANDOFF_PREFIX(first)).slice(1, -1));
    expect(last).toContain("finish the report");
    expect(last).not.toContain("write the report");
    // the prompt went to the successor; the first session ends with the link to it
    const [old, next] = await t.ctx.runtime.runPromise(
      Effect.flatMap(LashRuntime, (rt) => Effect.all([rt.readView(first), rt.readView(successor)])),
    );
    expect(JSON.stringify(next)).toContain("go on");
    expect(JSON.stringify(old)).not.toContain("go on");
    const leaf = await t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.chronological(first)));
    expect(leaf.at(-1)!.payload).toMatchObject({ type: "handoff", to: successor });
  });

  it("a turn that hands off at the threshold goes on in the successor, and the TUI follows it", async () => {
    const t: TestContext = await makeContext(
      [
        { text: "the first answer" },
        { text: "## Goals and constraints\nwrite the report" },
        { text: "answered after the handoff" },
      ],
      // the tool specs alone fill this window: the second turn compacts, and hands off
      { compaction: { strategy: "handoff", contextWindow: 2_500 } },
    );
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
    await wait((f) => f.includes("the first answer"));
    const first = controller.getState().sessionId!;
    await send("and the appendix");
    await wait((f) => f.includes("answered after the handoff") && f.includes("handed off"));
    const successor = controller.getState().sessionId!;
    expect(successor).not.toBe(first);
    const requests = (t.provider as { requests: LlmRequest[] }).requests;
    expect(requests).toHaveLength(3);
    const last = JSON.stringify(requests[2]!.messages);
    expect(last).toContain(JSON.stringify(HANDOFF_PREFIX(first)).slice(1, -1));
    expect(last).toContain("and the appendix");
    expect(last).not.toContain("the first answer");
    const next = await t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.readView(successor)));
    expect(JSON.stringify(next)).toContain("and the appendix");
  });
});
