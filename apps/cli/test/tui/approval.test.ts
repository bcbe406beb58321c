// The approval prompt (issue 17): the whole TUI on a real runtime whose policy asks before
// every call (@lash/policy, `approval: "always"`), the built-in tools on a temp workspace,
// keys through stdin. Each action gives the runtime the right ApprovalAnswer, and the call
// runs (or does not) accordingly.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolDefinition } from "@lash/core";
import { makeGovernance, resolvePolicy } from "@lash/policy";
import type { Script } from "@lash/providers/testing";
import type { LlmRequest } from "@lash/sansio";
import { Effect } from "effect";
import { render } from "ink-testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { TuiController } from "../../src/tui/controller.ts";
import { History } from "../../src/tui/editor.ts";
import { type DecisionItem, Transcript } from "../../src/tui/model.ts";
import { App } from "../../src/tui/view/app.ts";
import { ItemView } from "../../src/tui/view/items.ts";
import { h } from "../../src/tui/view/text.ts";
import { makeContext, plain, type TestContext, type TestContextOptions, waitForFrame } from "./support.ts";

const ESC = "\x1b";
const CTRL_U = "\x15";
const DOWN = "\x1b[B";

const askAlways = () => makeGovernance(resolvePolicy([{ name: "config", layer: { approval: "always" } }]));
/** Asks about every write or exec (no risk evaluator: unrated calls, which a session grant covers). */
const askWrites = () => makeGovernance(resolvePolicy([{ name: "config", layer: { approval: "risk" } }]));

interface Mounted {
  readonly t: TestContext;
  readonly controller: TuiController;
  readonly r: ReturnType<typeof render>;
  type(s: string): Promise<void>;
  frame(): string;
  /** Everything written to the terminal so far (the <Static> transcript included). */
  all(): string;
  wait(pred: (f: string) => boolean): Promise<string>;
  requests(): LlmRequest[];
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
  options: TestContextOptions & { sessionId?: string; context?: TestContext } = {},
): Promise<Mounted> {
  const t = options.context ?? (await makeContext(script, { governance: askAlways(), ...options }));
  const controller = new TuiController(t.ctx, {
    throttleMs: 0,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  });
  const r = render(h(App, { controller, history: new History([]) }));
  await controller.start();
  await new Promise<void>((resolve) => setImmediate(resolve));
  const m: Mounted = {
    t,
    controller,
    r,
    type: async (s) => {
      r.stdin.write(s);
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
    frame: () => plain(r.lastFrame()),
    all: () => plain(r.frames.join("\n")),
    wait: (pred) => waitForFrame(r, (f) => pred(plain(f))),
    requests: () => (t.provider as { requests: LlmRequest[] }).requests,
  };
  mounted.push(m);
  return m;
}

const write = (id: string, path: string, content: string) => ({
  id,
  name: "write_file",
  arguments: { path, content },
});

/** The text of every tool result the model was sent in a request. */
function toolResults(req: LlmRequest): string[] {
  return req.messages.flatMap((m) =>
    m.parts.flatMap((p) =>
      p.type === "toolResult" ? [p.content.map((c) => (c.type === "text" ? c.text : "")).join("")] : [],
    ),
  );
}

function decisions(m: Mounted): DecisionItem[] {
  return m.controller.getState().committed.filter((i): i is DecisionItem => i.kind === "approval");
}

describe("the approval prompt", () => {
  it("y approves once: the call runs, the answer is `approve once` by the user, a card says so", async () => {
    const m = await mount([{ toolCalls: [write("w1", "a.txt", "hello\n")] }, { text: "wrote it" }]);
    await m.type("write a.txt\r");
    const f = await m.wait((x) => x.includes("Allow this tool call?"));
    // (+1 −0 when write_file previews its diff)
    expect(f).toMatch(/Edit a\.txt\s+(\+1 −0\s+)?write_file/);
    expect(f).toContain("write_file needs approval");
    // the policy always asks about write_file: `a` gives no session grant, and the hint says so
    expect(f).toContain(
      "y approve once · a also once (write_file is always asked) · n deny with a reason · e edit arguments",
    );
    expect(f).not.toContain("for this session");
    expect(f).toContain("Waiting for your approval");
    expect(f).toMatch(/○ Write a\.txt\s+waiting for approval/);
    expect(f).toContain('why  write_file needs approval: approval = "always" in layer config\n');
    expect(existsSync(join(m.t.cwd, "a.txt"))).toBe(false);
    await m.type("y");
    await m.wait((x) => x.includes("wrote it"));
    await m.controller.idle();
    expect(readFileSync(join(m.t.cwd, "a.txt"), "utf8")).toBe("hello\n");
    expect(m.t.answers).toEqual([
      { by: "user", decisions: [{ callId: "w1", decision: "approve", scope: "once" }] },
    ]);
    expect(decisions(m).map((d) => d.decisions)).toEqual([
      [{ tool: "write_file", decision: "approve", scope: "once", layer: 'config: approval = "always"' }],
    ]);
    expect(m.all()).toContain("✓ Approved write_file once · by you");
    expect(m.frame()).not.toContain("Allow this tool call?");
  });

  it("a approves the tool for the session: a later call of it is not asked about", async () => {
    const m = await mount(
      [
        { toolCalls: [write("w1", "a.txt", "one\n")] },
        { toolCalls: [write("w2", "b.txt", "two\n")] },
        { text: "both written" },
      ],
      { governance: askWrites() },
    );
    await m.type("write two files\r");
    await m.wait((x) => x.includes("Allow this tool call?"));
    await m.type("a");
    await m.wait((x) => x.includes("both written"));
    await m.controller.idle();
    expect(readFileSync(join(m.t.cwd, "a.txt"), "utf8")).toBe("one\n");
    expect(readFileSync(join(m.t.cwd, "b.txt"), "utf8")).toBe("two\n");
    // asked once, for the first call only
    expect(m.t.answers).toEqual([
      { by: "user", decisions: [{ callId: "w1", decision: "approve", scope: "session" }] },
    ]);
    expect(m.all()).toContain("✓ Approved write_file for this session · by you");
  });

  it("a on a tool the policy always asks about: the hint says this call only, and the next call is asked again", async () => {
    const m = await mount([
      { toolCalls: [write("w1", "a.txt", "one\n")] },
      { toolCalls: [write("w2", "b.txt", "two\n")] },
      { text: "both written" },
    ]);
    await m.type("write two files\r");
    let f = await m.wait((x) => x.includes("Allow this tool call?"));
    expect(f).toContain("a also once (write_file is always asked)");
    await m.type("a");
    f = await m.wait((x) => x.includes("Allow this tool call?") && x.includes("b.txt"));
    expect(f).toContain("a also once (write_file is always asked)");
    await m.type("a");
    await m.wait((x) => x.includes("both written"));
    await m.controller.idle();
    // what the hint said happened: asked twice, each call approved on its own
    expect(m.t.answers.map((a) => a.decisions.map((d) => d.callId))).toEqual([["w1"], ["w2"]]);
    expect(readFileSync(join(m.t.cwd, "b.txt"), "utf8")).toBe("two\n");
  });

  it("n denies with a reason typed inline: the call does not run and the model reads the reason", async () => {
    const m = await mount([{ toolCalls: [write("w1", "a.txt", "x\n")] }, { text: "ok, I will not" }]);
    await m.type("write a.txt\r");
    await m.wait((x) => x.includes("Allow this tool call?"));
    await m.type("n");
    let f = await m.wait((x) => x.includes("Why deny write_file?"));
    expect(f).toContain("the reason goes to the model");
    await m.type("keep the workspace clean");
    f = await m.wait((x) => x.includes("› keep the workspace clean"));
    await m.type("\r");
    await m.wait((x) => x.includes("ok, I will not"));
    await m.controller.idle();
    expect(existsSync(join(m.t.cwd, "a.txt"))).toBe(false);
    expect(m.t.answers).toEqual([
      { by: "user", decisions: [{ callId: "w1", decision: "deny", reason: "keep the workspace clean" }] },
    ]);
    const results = toolResults(m.requests()[1]!);
    expect(results.join("\n")).toContain("the user denied it: keep the workspace clean");
    expect(m.all()).toContain("✗ Denied write_file · by you: keep the workspace clean");
  });

  it("e edits the arguments as JSON: invalid JSON is refused with the parse error and kept; valid JSON runs", async () => {
    const m = await mount([{ toolCalls: [write("w1", "a.txt", "original\n")] }, { text: "done" }]);
    await m.type("write a.txt\r");
    await m.wait((x) => x.includes("Allow this tool call?"));
    await m.type("e");
    let f = await m.wait((x) => x.includes("Arguments of write_file (JSON):"));
    expect(f).toContain('› {"path":"a.txt","content":"original\\n"}');
    await m.type(CTRL_U);
    await m.type('{"path": "b.txt", "content": "edited\\n"');
    await m.type("\r");
    f = await m.wait((x) => x.includes("invalid JSON:"));
    // nothing lost: the text is still there to fix
    expect(f).toContain('› {"path": "b.txt", "content": "edited\\n"');
    expect(m.t.answers).toEqual([]);
    await m.type("}\r");
    await m.wait((x) => x.includes("done"));
    await m.controller.idle();
    expect(existsSync(join(m.t.cwd, "a.txt"))).toBe(false);
    expect(readFileSync(join(m.t.cwd, "b.txt"), "utf8")).toBe("edited\n");
    expect(m.t.answers).toEqual([
      {
        by: "user",
        decisions: [
          { callId: "w1", decision: "approve", scope: "once", args: { path: "b.txt", content: "edited\n" } },
        ],
      },
    ]);
    expect(m.all()).toContain("✎ Approved write_file with edited arguments · by you");
  });

  it("Esc in the arguments editor goes back to the choice and keeps the draft", async () => {
    const m = await mount([{ toolCalls: [write("w1", "a.txt", "x\n")] }, { text: "done" }]);
    await m.type("go\r");
    await m.wait((x) => x.includes("Allow this tool call?"));
    await m.type("e");
    await m.wait((x) => x.includes("Arguments of write_file"));
    await m.type(CTRL_U);
    await m.type('{"path":"c.txt"');
    await m.type(ESC);
    await m.wait((x) => !x.includes("Arguments of write_file") && x.includes("y approve once"));
    await m.type("e");
    const f = await m.wait((x) => x.includes("Arguments of write_file"));
    expect(f).toContain('› {"path":"c.txt"');
    await m.type(CTRL_U);
    await m.type('{"path":"c.txt","content":"c\\n"}\r');
    await m.controller.idle();
    expect(readFileSync(join(m.t.cwd, "c.txt"), "utf8")).toBe("c\n");
  });

  it("several calls of one response are asked together: per call (y, then n) or all at once (Y)", async () => {
    const m = await mount([
      { toolCalls: [write("w1", "a.txt", "a\n"), write("w2", "b.txt", "b\n"), write("w3", "c.txt", "c\n")] },
      { toolCalls: [write("w4", "d.txt", "d\n"), write("w5", "e.txt", "e\n")] },
      { text: "all done" },
    ]);
    await m.type("write files\r");
    let f = await m.wait((x) => x.includes("Allow these 3 tool calls? (0 of 3 answered)"));
    expect(f).toMatch(/❯ 1\. Edit a\.txt/);
    expect(f).toMatch(/2\. Edit b\.txt/);
    // (every call is always asked: A gives no session approval either)
    expect(f).toContain("all calls left: Y approve · A approve each once (always asked) · N deny");
    await m.type("y"); // a.txt; the selection moves to b.txt
    f = await m.wait((x) => x.includes("(1 of 3 answered)"));
    expect(f).toMatch(/❯ 2\. Edit b\.txt/);
    expect(f).toMatch(/1\. Edit a\.txt.*✓ approve once/);
    await m.type(DOWN); // c.txt
    await m.type("n");
    await m.type("not c\r");
    f = await m.wait((x) => x.includes("(2 of 3 answered)"));
    expect(f).toMatch(/❯ 2\. Edit b\.txt/);
    await m.type("y");
    // the second response: both at once
    await m.wait((x) => x.includes("Allow these 2 tool calls?"));
    await m.type("Y");
    await m.wait((x) => x.includes("all done"));
    await m.controller.idle();
    expect(["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"].map((p) => existsSync(join(m.t.cwd, p)))).toEqual([
      true,
      true,
      false,
      true,
      true,
    ]);
    expect(m.t.answers).toEqual([
      {
        by: "user",
        decisions: [
          { callId: "w1", decision: "approve", scope: "once" },
          { callId: "w2", decision: "approve", scope: "once" },
          { callId: "w3", decision: "deny", reason: "not c" },
        ],
      },
      {
        by: "user",
        decisions: [
          { callId: "w4", decision: "approve", scope: "once" },
          { callId: "w5", decision: "approve", scope: "once" },
        ],
      },
    ]);
  });

  it("Esc while the prompt waits cancels the turn: the prompt goes away and nothing runs", async () => {
    const m = await mount([{ toolCalls: [write("w1", "a.txt", "x\n")] }, { text: "never" }]);
    await m.type("go\r");
    await m.wait((x) => x.includes("Allow this tool call?"));
    await m.type(ESC);
    await m.wait((x) => x.includes("⊘ cancelled") || m.all().includes("⊘ cancelled"));
    await m.controller.idle();
    expect(m.frame()).not.toContain("Allow this tool call?");
    expect(m.controller.getState().approval).toBeUndefined();
    expect(existsSync(join(m.t.cwd, "a.txt"))).toBe(false);
    expect(m.t.answers).toEqual([]);
    expect(m.requests()).toHaveLength(1);
    // the TUI takes prompts again
    expect(m.frame()).toContain("ask anything");
  });

  it("shows the preview: the diff with +/- counts, the command with cwd and sandbox, the risk", async () => {
    const patch: ToolDefinition = {
      name: "patch_it",
      description: "a patch with a preview",
      family: "edit",
      inputSchema: { type: "object" },
      effects: ["write"],
      preview: () =>
        Effect.succeed({
          summary: "modify src/a.ts (+2 −1)",
          diff: "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,2 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 3;\n+const c = 4;\n",
          files: [{ path: "src/a.ts", action: "modify" as const, added: 2, removed: 1 }],
        }),
      execute: () => Effect.succeed({ content: [{ type: "text" as const, text: "patched" }] }),
    };
    const run: ToolDefinition = {
      name: "run_it",
      description: "a command with a preview",
      family: "shell",
      inputSchema: { type: "object" },
      effects: ["exec"],
      preview: (args) =>
        Effect.succeed({
          summary: "run rm -rf build",
          command: {
            command: (args as { command: string }).command,
            cwd: "/work/proj",
            sandbox: "bwrap: workspace writable, network off",
          },
        }),
      execute: () => Effect.succeed({ content: [{ type: "text" as const, text: "ran" }] }),
    };
    const m = await mount(
      [
        {
          toolCalls: [
            { id: "p", name: "patch_it", arguments: {} },
            { id: "r", name: "run_it", arguments: { command: "rm -rf build" } },
          ],
        },
        { text: "fine" },
      ],
      {
        plugins: [{ name: "test-tools", tools: [patch, run] }],
        governance: {
          decide: (call) => ({
            action: "ask",
            layer: "test",
            reason: `${call.name} needs approval (test layer)`,
            ...(call.name === "run_it"
              ? { risk: { level: "high" as const, category: "destructive", reasons: ["rm -rf"] } }
              : {}),
          }),
        },
      },
    );
    await m.type("go\r");
    let f = await m.wait((x) => x.includes("Allow these 2 tool calls?"));
    expect(f).toMatch(/❯ 1\. Edit src\/a\.ts\s+\+2 −1\s+patch_it/);
    expect(f).toMatch(/1 +const a = 1;/);
    expect(f).toMatch(/2 - const b = 2;/);
    expect(f).toMatch(/2 \+ const b = 3;/);
    expect(f).toMatch(/3 \+ const c = 4;/);
    expect(f).toMatch(/2\. Shell \$ rm -rf build/);
    await m.type(DOWN);
    f = await m.wait((x) => /❯ 2\. Shell/.test(x));
    expect(f).toMatch(/risk high · destructive · rm -rf/);
    expect(f).toContain("$ rm -rf build");
    expect(f).toContain("cwd  /work/proj");
    expect(f).toContain("sandbox  bwrap: workspace writable, network off");
    expect(f).toContain("why  run_it needs approval (test layer)");
    expect(f).not.toContain("const b = 3"); // only the selected call's preview is unfolded
    await m.type("A");
    await m.wait((x) => x.includes("fine"));
    await m.controller.idle();
    expect(m.t.answers[0]?.decisions).toEqual([
      { callId: "p", decision: "approve", scope: "session" },
      { callId: "r", decision: "approve", scope: "session" },
    ]);
  });

  it("a resumed session shows its decisions as cards (from the session graph)", async () => {
    const m = await mount([
      { toolCalls: [write("w1", "a.txt", "a\n")] },
      { toolCalls: [write("w2", "b.txt", "b\n")] },
      { text: "done" },
    ]);
    await m.type("go\r");
    await m.wait((x) => x.includes("Allow this tool call?"));
    await m.type("y");
    await m.wait((x) => x.includes("Allow this tool call?") && x.includes("b.txt"));
    await m.type("n");
    await m.type("no b\r");
    await m.wait((x) => x.includes("done"));
    await m.controller.idle();
    const id = m.controller.getState().sessionId!;
    const again = await mount([], { context: m.t, sessionId: id });
    const shown = decisions(again);
    expect(shown.map((d) => [d.by, d.decisions])).toEqual([
      [
        "user",
        [{ tool: "write_file", decision: "approve", scope: "once", layer: 'config: approval = "always"' }],
      ],
      [
        "user",
        [{ tool: "write_file", decision: "deny", reason: "no b", layer: 'config: approval = "always"' }],
      ],
    ]);
    const kinds = again.controller
      .getState()
      .committed.map((i) => (i.kind === "tool" ? `tool:${(i.args as { path: string }).path}` : i.kind))
      .filter((k) => k !== "notice");
    // each card follows the call it decided
    expect(kinds).toEqual(["user", "tool:a.txt", "approval", "tool:b.txt", "approval", "assistant"]);
  });

  it("cards for a policy's denial and for an answer replayed from the journal", () => {
    const tr = new Transcript();
    tr.apply({
      type: "approvalResolved",
      sessionId: "s",
      turnId: "t",
      at: 1,
      seq: 1,
      requestId: "r1",
      by: "policy",
      decisions: [
        { callId: "c1", tool: "shell", decision: "deny", reason: "shell is denied", layer: "project" },
      ],
      replayed: false,
    });
    tr.apply({
      type: "approvalResolved",
      sessionId: "s",
      turnId: "t",
      at: 2,
      seq: 2,
      requestId: "r2",
      by: "user",
      decisions: [{ callId: "c2", tool: "write_file", decision: "approve", scope: "session" }],
      replayed: true,
    });
    const text = tr.committed
      .map((item) => {
        const r = render(h(ItemView, { item, width: 100, expanded: false }));
        const f = plain(r.lastFrame());
        r.unmount();
        return f.trim();
      })
      .join("\n");
    expect(text).toBe(
      "✗ Denied shell · by the policy (project): shell is denied\n" +
        "✓ Approved write_file for this session · by you · from the journal",
    );
  });
});
