// The whole TUI (App + controller) on a real runtime, driven through stdin like a user.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LashRuntime, SessionStore, type ToolDefinition } from "@lash/core";
import type { Script } from "@lash/providers/testing";
import type { LlmRequest } from "@lash/sansio";
import { Effect, Option } from "effect";
import { render } from "ink-testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { HISTORY_REPLAY_CAP, TuiController } from "../../src/tui/controller.ts";
import { History } from "../../src/tui/editor.ts";
import type { Item } from "../../src/tui/model.ts";
import { App } from "../../src/tui/view/app.ts";
import { h } from "../../src/tui/view/text.ts";
import {
  MODEL,
  makeContext,
  plain,
  type TestContext,
  type TestContextOptions,
  waitForFrame,
} from "./support.ts";

const ESC = "\x1b";
const CTRL_C = "\x03";
const CTRL_D = "\x04";
const UP = "\x1b[A";
const DOWN = "\x1b[B";

interface Mounted {
  readonly t: TestContext;
  readonly controller: TuiController;
  readonly r: ReturnType<typeof render>;
  readonly cleared: number[];
  readonly exited: Promise<void>;
  /** Writes keys/text to stdin (one chunk) and lets React commit the update (it flushes in a microtask). */
  type(s: string): Promise<void>;
  frame(): string;
  /** The text inside the prompt box. */
  prompt(): string;
  wait(pred: (f: string) => boolean): Promise<string>;
  lastRequest(): LlmRequest;
}

/** The items after the last separator (a session switch). */
function sinceLastRule(items: readonly Item[]): readonly Item[] {
  let k = items.length - 1;
  while (k >= 0 && !(items[k]!.kind === "notice" && (items[k] as { rule?: boolean }).rule)) k--;
  return items.slice(k + 1);
}

let mounted: Mounted[] = [];
afterEach(async () => {
  for (const m of mounted) {
    m.r.unmount();
    await m.t.cleanup();
  }
  mounted = [];
});

async function mount(
  script: Script,
  options: TestContextOptions & { sessionId?: string; context?: TestContext; history?: string[] } = {},
): Promise<Mounted> {
  const t = options.context ?? (await makeContext(script, options));
  const cleared: number[] = [];
  const controller = new TuiController(t.ctx, {
    throttleMs: 0,
    clearScreen: () => cleared.push(Date.now()),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  });
  const r = render(h(App, { controller, history: new History(options.history ?? []) }));
  let onExit!: () => void;
  const exited = new Promise<void>((resolve) => {
    onExit = resolve;
  });
  const appExit = controller.onExit;
  controller.onExit = () => {
    appExit?.();
    onExit();
  };
  await controller.start();
  await new Promise<void>((resolve) => setImmediate(resolve));
  const m: Mounted = {
    t,
    controller,
    r,
    cleared,
    exited,
    type: async (s) => {
      r.stdin.write(s);
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
    frame: () => plain(r.lastFrame()),
    prompt: () => {
      const lines = plain(r.lastFrame()).split("\n");
      const rules = lines.map((l, i) => (/^─{10,}$/.test(l) ? i : -1)).filter((i) => i >= 0);
      const [a, b] = rules.slice(-2);
      return a === undefined || b === undefined ? "" : lines.slice(a + 1, b).join("\n");
    },
    wait: (pred) => waitForFrame(r, (f) => pred(plain(f))),
    lastRequest: () => {
      const p = t.provider as { requests?: LlmRequest[] };
      const last = p.requests?.[p.requests.length - 1];
      if (!last) throw new Error("no request");
      return last;
    },
  };
  mounted.push(m);
  return m;
}

function userTexts(req: LlmRequest): string[] {
  return req.messages
    .filter((m) => m.role === "user")
    .map((m) => m.parts.map((p) => (p.type === "text" ? p.text : "")).join(""));
}

async function send(m: Mounted, text: string): Promise<void> {
  await m.type(text);
  await m.type("\r");
  await m.controller.idle();
}

describe("TUI: prompt, streaming, status bar", () => {
  it("sends a prompt, renders the streamed markdown answer and fills the status bar", async () => {
    const m = await mount([
      { text: "Hello **there**, see `x`", textChunks: 5, usage: { input: 1234, output: 10 } },
    ]);
    expect(m.frame()).toMatch(/test\/model · standard · ctx — \/ 100k · — .*\(main\)/);
    await m.type("hi there");
    expect(m.prompt()).toContain("› hi there");
    await m.type("\r");
    await m.controller.idle();
    const f = m.frame();
    expect(f).toContain("› hi there");
    expect(f).toContain("● Hello there, see x");
    // context tokens of the last response and % of the 100k window; cost at $3/$15 per Mtok
    expect(f).toMatch(/test\/model · standard · ctx 1\.2k \/ 100k \(1%\) · \$0\.0039/);
    expect(m.prompt()).toMatch(/ask anything/);
    expect(userTexts(m.lastRequest())).toEqual(["hi there"]);
  });

  it("renders a running tool card with a spinner and the activity line, then the finished card", async () => {
    const m = await mount([
      { toolCalls: [{ id: "s", name: "shell", arguments: { command: "echo begin; sleep 0.4; echo end" } }] },
      { text: "done" },
    ]);
    await m.type("go\r");
    const running = await m.wait(
      (f) => /Running shell… [\d.]+s · esc to cancel/.test(f) && f.includes("begin"),
    );
    expect(running).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Shell \$ echo begin; sleep 0\.4; echo end {2}[\d.]+s/);
    expect(running).toMatch(/type to queue a message/);
    await m.controller.idle();
    expect(m.frame()).toMatch(/● Shell \$ echo begin; sleep 0\.4; echo end {2}exit 0 · [\d.]+s/);
    expect(m.frame()).not.toMatch(/esc to cancel/);
  });
});

describe("TUI: input editing", () => {
  it("multi-line input: Alt+Enter, Ctrl+J and a trailing backslash insert newlines; Enter sends all lines", async () => {
    const m = await mount([{ text: "ok" }]);
    await m.type("one");
    await m.type("\x1b\r"); // Alt+Enter
    await m.type("two");
    await m.type("\n"); // Ctrl+J
    await m.type("three\\");
    await m.type("\r"); // trailing backslash + Enter
    await m.type("four");
    expect(m.prompt()).toBe("› one\n  two\n  three\n  four");
    await m.type("\r");
    await m.controller.idle();
    expect(userTexts(m.lastRequest())).toEqual(["one\ntwo\nthree\nfour"]);
  });

  it("history: ↑/↓ browse submitted prompts and keep the draft", async () => {
    const m = await mount([{ text: "a" }, { text: "b" }], { history: ["from last time"] });
    await send(m, "first");
    await send(m, "second");
    await m.type("draft");
    await m.type(UP);
    expect(m.prompt()).toBe("› second");
    await m.type(UP);
    expect(m.prompt()).toBe("› first");
    await m.type(UP);
    expect(m.prompt()).toBe("› from last time");
    await m.type(DOWN);
    await m.type(DOWN);
    await m.type(DOWN);
    expect(m.prompt()).toBe("› draft");
  });

  it("a large paste is shown collapsed and sent in full", async () => {
    const m = await mount([{ text: "got it" }]);
    const big = Array.from({ length: 50 }, (_, i) => `row ${i}`).join("\n");
    await m.type("look: ");
    await m.type(`\x1b[200~${big}\x1b[201~`);
    expect(m.prompt()).toBe("› look: [pasted 50 lines #1]");
    await m.type("\r");
    await m.controller.idle();
    expect(userTexts(m.lastRequest())).toEqual([`look: ${big}`]);
    // the transcript shows a long prompt shortened
    expect(m.frame()).toMatch(/… \(42 more lines\)/);
  });

  it("editing keys: ←, Ctrl+A/E, Ctrl+W, Ctrl+U, Backspace", async () => {
    const m = await mount([]);
    await m.type("hello big world");
    await m.type("\x17"); // Ctrl+W
    expect(m.prompt()).toBe("› hello big");
    await m.type("\x01"); // Ctrl+A
    await m.type(">");
    await m.type("\x05"); // Ctrl+E
    await m.type("\x7f"); // Backspace (the space Ctrl+W left)
    await m.type("\x7f");
    expect(m.prompt()).toBe("› >hello bi");
    await m.type("\x1b[D"); // ←
    await m.type("\x1b[D");
    await m.type("\x15"); // Ctrl+U
    expect(m.prompt()).toBe("› bi");
  });
});

describe("TUI: queue and cancel", () => {
  it("Enter while a turn runs queues the message; it is sent when the turn ends", async () => {
    const m = await mount([
      { toolCalls: [{ id: "s", name: "shell", arguments: { command: "sleep 0.5" } }] },
      { text: "first answer" },
      { text: "second answer" },
    ]);
    await m.type("first\r");
    await m.wait((f) => f.includes("Running shell"));
    await m.type("follow up\r");
    const queued = m.frame();
    expect(queued).toContain("⏳ queued follow up");
    expect(m.controller.getState().queue).toEqual(["follow up"]);
    await m.controller.idle();
    const f = m.frame();
    expect(f).toContain("first answer");
    expect(f).toContain("› follow up");
    expect(f).toContain("second answer");
    expect(userTexts(m.lastRequest())).toEqual(["first", "follow up"]);
    expect(m.controller.getState().queue).toEqual([]);
  });

  it.each([
    ["Esc", ESC],
    ["Ctrl+C", CTRL_C],
  ])(
    "%s cancels the running turn: finished work stays, the cut is marked, queued text returns to the prompt",
    async (_n, key) => {
      const m = await mount([
        {
          text: "Starting.",
          toolCalls: [{ id: "s", name: "shell", arguments: { command: "echo partial-output; sleep 30" } }],
        },
        { text: "never sent" },
      ]);
      await m.type("long job\r");
      await m.wait((f) => f.includes("partial-output"));
      await m.type("next thing\r");
      const t0 = Date.now();
      await m.type(key);
      await m.controller.idle();
      expect(Date.now() - t0).toBeLessThan(10_000);
      const f = m.frame();
      expect(f).toContain("● Starting.");
      expect(f).toMatch(/✗ Shell \$ echo partial-output; sleep 30 {2}cancelled/);
      expect(f).toMatch(/⊘ cancelled — the work finished before the cancel is kept/);
      expect(m.prompt()).toBe("› next thing");
      expect(f).toContain("queued messages were put back in the prompt");
      // what finished is committed: the session holds the prompt, the text and the cancelled call
      const id = m.controller.getState().sessionId!;
      const view = await m.t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.readView(id)));
      const parts = view.flatMap((msg) => msg.parts.map((p) => p.type));
      expect(parts).toEqual(expect.arrayContaining(["text", "toolCall", "toolResult"]));
      expect((m.t.provider as { requests: unknown[] }).requests.length).toBe(1);
    },
  );
});

describe("TUI: quitting", () => {
  it("Ctrl+C clears a draft; twice on an empty idle prompt quits", async () => {
    const m = await mount([]);
    await m.type("some draft");
    await m.type(CTRL_C);
    expect(m.prompt()).toMatch(/ask anything/);
    await m.type(CTRL_C);
    expect(m.frame()).toContain("press Ctrl+C again to quit");
    await m.type(CTRL_C);
    await m.exited;
  });

  it("Ctrl+D deletes forward in a draft and quits on an empty prompt", async () => {
    const m = await mount([]);
    await m.type("ab");
    await m.type("\x1b[D");
    await m.type(CTRL_D);
    expect(m.prompt()).toBe("› a");
    await m.type("\x7f");
    await m.type(CTRL_D);
    await m.exited;
  });

  it("Ctrl+C twice more while a cancel hangs leaves anyway (exit code 130)", async () => {
    const stubborn: ToolDefinition = {
      name: "stubborn",
      description: "ignores cancellation for a while",
      inputSchema: { type: "object" },
      execute: () =>
        Effect.uninterruptible(
          Effect.as(Effect.sleep("2 seconds"), { content: [{ type: "text", text: "late" }] }),
        ),
    };
    const m = await mount(
      [{ toolCalls: [{ id: "x", name: "stubborn", arguments: {} }] }, { text: "after" }],
      {
        plugins: [{ name: "stubborn", tools: [stubborn] }],
      },
    );
    await m.type("go\r");
    await m.wait((f) => f.includes("Running stubborn"));
    await m.type(CTRL_C);
    await m.wait((f) => f.includes("Cancelling…"));
    await m.type(CTRL_C);
    expect(m.frame()).toContain("still cancelling — press Ctrl+C again to leave now");
    await m.type(CTRL_C);
    await m.exited;
    expect(m.controller.forced).toBe(true);
    await m.controller.idle();
  });

  it("quitting during a turn cancels it and waits for the commit", async () => {
    const m = await mount([{ toolCalls: [{ id: "s", name: "shell", arguments: { command: "sleep 30" } }] }]);
    await m.type("work\r");
    await m.wait((f) => f.includes("Running shell"));
    await m.type("/quit\r");
    await m.exited;
    expect(m.controller.isRunning).toBe(false);
    const id = m.controller.getState().sessionId!;
    const s = await m.t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.getSession(id)));
    expect(s.turnCount).toBe(1);
  });
});

describe("TUI: slash commands", () => {
  it("/help, unknown commands with a suggestion, and commands that must wait for the turn", async () => {
    const m = await mount([
      { toolCalls: [{ id: "s", name: "shell", arguments: { command: "sleep 0.3" } }] },
      { text: "x" },
    ]);
    await send(m, "/help");
    expect(m.frame()).toMatch(/\/resume \[id\]\s+pick a session of this directory/);
    expect(m.frame()).toMatch(/Esc, Ctrl\+C\s+cancel the running turn/);
    await send(m, "/hlep");
    expect(m.frame()).toContain("unknown command /hlep — did you mean /help? (/help lists them)");
    await m.type("go\r");
    await m.wait((f) => f.includes("Running shell"));
    await m.type("/new\r");
    expect(m.frame()).toContain("/new waits for the running turn");
    await m.controller.idle();
  });

  it("/model lists models and switches; an unknown model is refused", async () => {
    const m = await mount([]);
    await send(m, "/model");
    expect(m.frame()).toMatch(/❯ test\/model ● {2}100k context/);
    expect(m.frame()).toMatch(/test\/other {2}200k context/);
    await m.type(DOWN);
    await m.type("\r");
    await m.wait((f) => f.includes("model: test/other"));
    expect(m.frame()).toMatch(/test\/other · standard · ctx — \/ 200k/);
    await send(m, "/model nope/x");
    expect(m.frame()).toContain('unknown model "nope/x"');
  });

  it("/new, /resume (picker) and resuming renders the old transcript", async () => {
    const m = await mount([{ text: "answer one" }, { text: "answer two" }]);
    await send(m, "first session");
    const first = m.controller.getState().sessionId!;
    await send(m, "/new");
    expect(m.controller.getState().sessionId).toBeUndefined();
    // the old transcript stays in the terminal, below it a separator
    expect(m.cleared.length).toBe(0);
    expect(m.frame()).toContain("● answer one");
    expect(m.frame()).toMatch(/── new session ─+/);
    await send(m, "second session");
    expect(m.controller.getState().sessionId).not.toBe(first);
    await send(m, "/resume");
    expect(m.frame()).toMatch(/Resume a session of this directory/);
    expect(m.frame()).toMatch(/❯ first session {2}\d+s ago · 1 turn · test\/model/);
    await m.type("\r");
    await m.wait((f) => f.includes("resumed first session"));
    const st = m.controller.getState();
    expect(st.sessionId).toBe(first);
    expect(m.cleared.length).toBe(0);
    // the second session stays above the separator; below it, the resumed one
    expect(st.committed.map((i) => (i.kind === "user" ? i.text : "")).filter(Boolean)).toEqual([
      "first session",
      "second session",
      "first session",
    ]);
    const texts = sinceLastRule(st.committed).map((i) =>
      i.kind === "user" || i.kind === "assistant" ? i.text : i.kind,
    );
    expect(texts).toContain("first session");
    expect(texts).toContain("answer one");
    expect(texts).not.toContain("second session");
  });

  it("a cut-off turn is announced, never resumed unasked: a prompt is refused until /abandon", async () => {
    const t = await makeContext([{ text: "after the abandon" }]);
    const run = <A, E>(e: Effect.Effect<A, E, LashRuntime>) => t.ctx.runtime.runPromise(e);
    const session = await run(Effect.flatMap(LashRuntime, (rt) => rt.createSession({ model: MODEL })));
    const store = await t.ctx.runtime.runPromise(Effect.serviceOption(SessionStore));
    if (Option.isNone(store)) throw new Error("no store");
    await t.ctx.runtime.runPromise(
      store.value.beginTurn({
        sessionId: session.id,
        turnId: "turn_cut",
        input: {
          messages: [
            {
              id: "turn_cut.in0",
              role: "user",
              parts: [{ type: "text", text: "please delete the build dir" }],
            },
          ],
        },
        expectedRevision: 0,
        startedAt: 0,
      }),
    );
    const m = await mount([], { context: t, sessionId: session.id });
    await m.wait((f) => f.includes("cut off before it finished"));
    expect(m.frame()).toContain('"please delete the build dir"');
    expect(m.frame()).toContain("/finish finishes it from its journal · /abandon drops it");
    await send(m, "what time is it");
    await m.wait((f) => f.includes("the turn failed"));
    expect(m.frame()).toContain("/abandon");
    expect((t.provider as { requests?: LlmRequest[] }).requests ?? []).toHaveLength(0);
    await send(m, "/abandon");
    await m.wait((f) => f.includes('abandoned the cut-off turn: "please delete the build dir"'));
    await send(m, "what time is it");
    await m.wait((f) => f.includes("after the abandon"));
    expect(userTexts(m.lastRequest())).toEqual(["what time is it"]);
  });

  it("/fork copies the session and switches to the copy", async () => {
    const m = await mount([{ text: "a1" }, { text: "a2" }]);
    await send(m, "base");
    const orig = m.controller.getState().sessionId!;
    await send(m, "/fork");
    const forked = m.controller.getState().sessionId!;
    expect(forked).not.toBe(orig);
    expect(m.frame()).toMatch(/forked "base" → /);
    const rec = await m.t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.getSession(forked)));
    expect(rec.origin?.sessionId).toBe(orig);
    await send(m, "only in the fork");
    const origView = await m.t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.readView(orig)));
    expect(origView.length).toBe(2);
  });

  it("/tree edits an earlier prompt into a new branch and switches between branches", async () => {
    const m = await mount([{ text: "r1" }, { text: "r2" }, { text: "r3" }]);
    await send(m, "alpha");
    await send(m, "beta");
    await send(m, "/tree");
    await m.wait((f) => f.includes("Branches of"));
    expect(m.frame()).toMatch(/alpha ●/);
    expect(m.frame()).toMatch(/❯ beta ●/);
    await m.type("\t"); // edit "beta": new branch from alpha's answer
    await m.wait((f) => f.includes("editing an earlier prompt"));
    expect(m.prompt()).toBe("› beta");
    await m.type("\x15"); // clear
    await send(m, "gamma");
    await send(m, "/tree");
    const tree = await m.wait((f) => f.includes("Branches of") && f.includes("gamma ●"));
    // drawn as a tree: the two continuations of "alpha" branch off it
    expect(tree).toMatch(/ {2}alpha ●/);
    expect(tree).toMatch(/├─ beta/);
    expect(tree).toMatch(/❯ └─ gamma ●/);
    // back to the beta branch
    await m.type(UP);
    await m.type("\r");
    await m.wait((f) => f.includes("switched branch"));
    // below the separator of the switch: the beta branch, not gamma (which stays above it)
    const texts = sinceLastRule(m.controller.getState().committed).map((i) =>
      i.kind === "user" ? i.text : "",
    );
    expect(texts).toContain("beta");
    expect(texts).not.toContain("gamma");
    expect(m.cleared.length).toBe(0);
  });

  it("/export shows the path, and a missing exporter is reported without crashing", async () => {
    const ok = await mount([{ text: "x" }]);
    await send(ok, "hello");
    await send(ok, "/export");
    expect(ok.frame()).toMatch(/✓ exported to .*\.html/);
    const bad = await mount([{ text: "x" }], { exportError: "export is not built yet" });
    await send(bad, "hello");
    await send(bad, "/export md");
    expect(bad.frame()).toContain("⚠ export is not available: export is not built yet");
  });

  it("/info and /cost report the session, paths, tools, plugins and usage", async () => {
    const m = await mount([{ text: "x", usage: { input: 1000, output: 100 } }]);
    await send(m, "hello");
    await send(m, "/info");
    const f = m.frame();
    const id = m.controller.getState().sessionId!;
    expect(f).toContain(`session   ${id}`);
    expect(f).toMatch(/model {5}test\/model \(scripted\)/);
    expect(f).toMatch(/database {2}.*lash\.db/);
    expect(f).toMatch(/tools {5}.*shell/);
    expect(f).toMatch(/plugin {4}mcp:/);
    expect(f).toMatch(/usage {5}in 1,000 · out 100 · \$0\.0045/);
    await send(m, "/cost");
    expect(m.frame()).toMatch(/total {5}in 1,000 · out 100/);
    expect(m.frame()).toMatch(/turn · test\/model: in 1,000 · out 100 · \$0\.0045/);
    expect(m.frame()).toMatch(/context {3}1,000 tokens of 100,000 \(1%\)/);
  });

  it("/clear clears the screen but keeps the session", async () => {
    const m = await mount([{ text: "x" }]);
    await send(m, "hello");
    const id = m.controller.getState().sessionId;
    await send(m, "/clear");
    expect(m.cleared.length).toBe(1);
    expect(m.controller.getState().committed).toEqual([]);
    expect(m.controller.getState().sessionId).toBe(id);
  });

  it("Ctrl+O prints the last turn again with reasoning expanded, without clearing anything", async () => {
    const m = await mount([{ reasoning: "secret plan step", text: "ok" }]);
    await send(m, "q");
    expect(m.frame()).not.toContain("secret plan step");
    await m.type("\x0f");
    expect(m.cleared.length).toBe(0);
    expect(m.frame()).toMatch(/── the last turn, expanded · ctrl\+o collapses ─+/);
    expect(m.frame()).toContain("secret plan step");
    expect(m.frame()).toContain("expanded");
    // the collapsed reasoning line is still there above the separator
    expect(m.frame().indexOf("✻ Thought")).toBeLessThan(m.frame().indexOf("the last turn, expanded"));
  });
});

describe("TUI: resume", () => {
  it("opening a session renders its transcript (with tool cards) before any input", async () => {
    const t = await makeContext([
      { toolCalls: [{ id: "r", name: "read_file", arguments: { path: "f.txt" } }] },
      { text: "the file says hi" },
    ]);
    writeFileSync(join(t.cwd, "f.txt"), "hi\n");
    const s = await t.ctx.newSession();
    await t.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.turn(s.id, { text: "read f" })));
    const m = await mount([], { context: t, sessionId: s.id });
    const f = m.frame();
    expect(f).toContain("› read f");
    expect(f).toMatch(/● Read f\.txt/);
    expect(f).toContain("● the file says hi");
    expect(m.controller.getState().live).toEqual([]);
  });
});

describe("TUI: long sessions", () => {
  it("resuming a long session replays only its newest items, behind a notice", async () => {
    const t = await makeContext((_req, i) => ({ text: `reply ${i}` }));
    const s = await t.ctx.newSession();
    // 160 turns = 320 transcript items (prompt + answer)
    for (let i = 0; i < 160; i++)
      await t.ctx.runtime.runPromise(
        Effect.flatMap(LashRuntime, (rt) => rt.turn(s.id, { text: `prompt ${i}` })),
      );
    const m = await mount([], { context: t, sessionId: s.id });
    const shown = m.controller.getState().committed;
    // the replayed items, the elision notice, the banner and the "session …" line
    expect(shown.length).toBeLessThanOrEqual(HISTORY_REPLAY_CAP + 3);
    expect(m.frame()).toMatch(
      /2\d earlier items of this session are not shown here — \/export html has all of it/,
    );
    expect(m.frame()).toContain("● reply 159");
    expect(m.frame()).toContain("› prompt 159");
    expect(m.frame()).not.toMatch(/› prompt 0\n/);
  });
});
