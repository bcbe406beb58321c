// The TUI's resumed transcript of a session whose provider reused one tool-call id in
// every turn (issue 26, acceptance 1): 40 turns over the mock wire server, each call
// `call_1` with its own result; every card must show its own result and status.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LashRuntime, SqliteStore } from "@lash/core";
import type { Message, Part } from "@lash/sansio";
import { Effect } from "effect";
import { render } from "ink-testing-library";
import { afterEach, describe, expect, it } from "vitest";
import {
  noteFails,
  notePlugin,
  noteResult,
  prompt,
  startRepeatedIdServer,
  TURNS,
} from "../../../../packages/export/test/repeated-ids.ts";
import { TuiController } from "../../src/tui/controller.ts";
import { History } from "../../src/tui/editor.ts";
import { type ToolItem, Transcript } from "../../src/tui/model.ts";
import { App } from "../../src/tui/view/app.ts";
import { h } from "../../src/tui/view/text.ts";
import { makeContext, plain } from "./support.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe("TUI: resuming a session whose provider repeated its tool-call ids", () => {
  it(`shows each of ${TURNS} tool cards with its own result and status`, async () => {
    const { server, provider } = await startRepeatedIdServer();
    cleanups.push(() => server.close());
    const db = join(mkdtempSync(join(tmpdir(), "lash-tui-ids-")), "lash.db");
    const t = await makeContext([], {
      provider,
      plugins: [notePlugin],
      store: SqliteStore.layer({ filename: db }),
    });
    cleanups.push(() => t.cleanup());
    const s = await t.ctx.newSession();
    for (let k = 1; k <= TURNS; k++)
      await t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.turn(s.id, { text: prompt(k) })));

    const controller = new TuiController(t.ctx, { throttleMs: 0, clearScreen: () => {}, sessionId: s.id });
    const r = render(h(App, { controller, history: new History([]) }));
    cleanups.push(async () => r.unmount());
    await controller.start();
    await new Promise<void>((resolve) => setImmediate(resolve));

    const cards = controller.getState().committed.filter((it): it is ToolItem => it.kind === "tool");
    expect(cards).toHaveLength(TURNS);
    cards.forEach((card, i) => {
      const k = i + 1;
      expect(card.args).toEqual({ n: k });
      expect(card.resultText).toContain(noteResult(k));
      expect(card.status).toBe(noteFails(k) ? "error" : "ok");
    });
    // and on screen: each failure's own message, the newest result under its call
    const frame = plain(r.lastFrame());
    for (let k = 4; k <= TURNS; k += 4) expect(frame).toContain(noteResult(k));
    expect(frame).toContain(noteResult(TURNS - 1));
  }, 120_000);
});

describe("TUI: resuming a session recorded before lash's call ids", () => {
  it("pairs each result with the waiting call of that id (same turn, in order), never across the session", () => {
    const call = (id: string, n: number): Part => ({
      type: "toolCall",
      id,
      name: "note",
      argumentsText: JSON.stringify({ n }),
    });
    const result = (id: string, text: string, isError = false): Part => ({
      type: "toolResult",
      callId: id,
      name: "note",
      content: [{ type: "text", text }],
      isError,
    });
    let i = 0;
    const msg = (role: Message["role"], parts: Part[]): Message => ({ id: `m${i++}`, role, parts });
    const messages: Message[] = [
      msg("user", [{ type: "text", text: "one" }]),
      msg("assistant", [call("call_1", 1)]),
      msg("tool", [result("call_1", "result 1")]),
      msg("user", [{ type: "text", text: "two" }]),
      msg("assistant", [call("call_1", 2), call("call_1", 3)]),
      msg("tool", [result("call_1", "result 2", true), result("call_1", "result 3")]),
      msg("user", [{ type: "text", text: "lost" }]),
      msg("assistant", [call("call_1", 4)]),
    ];
    const t = new Transcript();
    t.loadMessages(messages);
    const cards = t.committed.filter((it): it is ToolItem => it.kind === "tool");
    expect(cards.map((c) => [c.args, c.resultText ?? null, c.status])).toEqual([
      [{ n: 1 }, "result 1", "ok"],
      [{ n: 2 }, "result 2", "error"],
      [{ n: 3 }, "result 3", "ok"],
      [{ n: 4 }, null, "cancelled"],
    ]);
  });
});
