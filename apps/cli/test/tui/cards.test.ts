// Transcript items rendered from REAL activity sequences (LashRuntime +
// ScriptedProvider + the built-in tools), one card family at a time.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Plugin, ToolDefinition, TurnActivity } from "@lash/core";
import { withRetry } from "@lash/providers";
import { ScriptedProvider } from "@lash/providers/testing";
import { subagentsPlugin } from "@lash/subagents";
import { Effect } from "effect";
import { Box } from "ink";
import { render } from "ink-testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { type Item, Transcript } from "../../src/tui/model.ts";
import { ItemView } from "../../src/tui/view/items.ts";
import { h } from "../../src/tui/view/text.ts";
import { makeContext, plain, type TestContext, turnEvents } from "./support.ts";

let t: TestContext | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

function transcriptOf(events: readonly TurnActivity[]): Transcript {
  const tr = new Transcript();
  for (const e of events) tr.apply(e);
  return tr;
}

function show(items: readonly Item[], expanded = false, width = 100): string {
  const r = render(
    h(
      Box,
      { flexDirection: "column" },
      ...items.map((item) => h(ItemView, { key: item.id, item, width, expanded })),
    ),
  );
  const out = plain(r.lastFrame());
  r.unmount();
  return out;
}

describe("tool cards from real turns", () => {
  it("read, grep, glob, edit (diff) and shell (output, exit code) cards, then the markdown answer", async () => {
    t = await makeContext([
      {
        toolCalls: [
          { id: "r1", name: "read_file", arguments: { path: "notes.txt" } },
          { id: "g1", name: "grep", arguments: { pattern: "two" } },
          { id: "b1", name: "glob", arguments: { pattern: "*.txt" } },
        ],
      },
      {
        toolCalls: [
          {
            id: "e1",
            name: "edit",
            arguments: { path: "notes.txt", edits: [{ oldText: "two", newText: "TWO" }] },
          },
        ],
      },
      { toolCalls: [{ id: "s1", name: "shell", arguments: { command: "echo out-1; echo out-2; exit 3" } }] },
      { text: "## Done\n\nChanged **one** line in `notes.txt`.", usage: { input: 2000, output: 30 } },
    ]);
    writeFileSync(join(t.cwd, "notes.txt"), "one\ntwo\nthree\n");
    writeFileSync(join(t.cwd, "other.txt"), "x\n");
    const events = await turnEvents(t, "fix the notes");
    const tr = transcriptOf(events);
    expect(tr.live).toEqual([]);
    const items = tr.committed;
    const out = show(items);
    // read: path and line count
    expect(out).toMatch(/● Read notes\.txt {2}3 lines/);
    // grep: pattern and match count; glob: pattern and file count
    expect(out).toMatch(/● Grep "two" {2}1 match/);
    expect(out).toMatch(/● Glob \*\.txt {2}2 files/);
    // edit: path, +/- counts and the unified diff
    expect(out).toMatch(/● Edit notes\.txt {2}\+1 −1/);
    // numbered diff lines (old number for a removed line, new for an added one)
    expect(out).toMatch(/^\s+2 - two$/m);
    expect(out).toMatch(/^\s+2 \+ TWO$/m);
    // shell: command, output lines, non-zero exit code (a failure: ✗, not the success bullet)
    expect(out).toMatch(/✗ Shell \$ echo out-1; echo out-2; exit 3 {2}exit 3/);
    expect(out).toMatch(/⎿ out-1\n\s+out-2/);
    expect(out).not.toContain("[exit code: 3]");
    // the answer as markdown (heading text without #, bold/code markers gone)
    expect(out).toContain("● Done");
    expect(out).toContain("Changed one line in notes.txt.");
    // turn footer: 5 tool calls
    expect(out).toMatch(/⎯ [\d.]+s · 5 tool calls/);
    // the order of items follows the turn
    const kinds = items.map((i) => (i.kind === "tool" ? i.name : i.kind));
    expect(kinds).toEqual(["read_file", "grep", "glob", "edit", "shell", "assistant", "turnEnd"]);
  });

  it("streams shell output into the running card before the tool completes", async () => {
    t = await makeContext([
      {
        toolCalls: [
          { id: "s1", name: "shell", arguments: { command: "printf 'a\\nb\\n'; sleep 0.2; echo c" } },
        ],
      },
      { text: "ok" },
    ]);
    const events = await turnEvents(t, "run");
    const tr = new Transcript();
    let runningFrame = "";
    for (const e of events) {
      tr.apply(e);
      if (e.type === "toolProgress" && !runningFrame) {
        const card = tr.live.find((i) => i.kind === "tool");
        if (card) runningFrame = show([card]);
      }
    }
    expect(events.some((e) => e.type === "toolProgress")).toBe(true);
    // while running: a spinner, the command, the streamed output, elapsed time, no exit code yet
    expect(runningFrame).toMatch(/^\s*⠋ Shell \$ printf/m);
    expect(runningFrame).toContain("a");
    expect(runningFrame).toMatch(/\d+\.\ds/);
    expect(runningFrame).not.toContain("exit 0");
    const done = show(tr.committed.filter((i) => i.kind === "tool"));
    expect(done).toMatch(/exit 0/);
    expect(done).toMatch(/a\n\s+b\n\s+c/);
  });

  it("shows MCP tools as server › tool with their arguments and result", async () => {
    const mcpTool: ToolDefinition = {
      name: "mcp__github__create_issue",
      description: "create an issue",
      inputSchema: { type: "object", properties: { title: { type: "string" } } },
      execute: () => Effect.succeed({ content: [{ type: "text", text: "created issue #42" }] }),
    };
    const plugin: Plugin = { name: "mcp-test", tools: [mcpTool] };
    t = await makeContext(
      [
        { toolCalls: [{ id: "m1", name: "mcp__github__create_issue", arguments: { title: "Bug" } }] },
        { text: "filed" },
      ],
      { plugins: [plugin] },
    );
    const out = show(transcriptOf(await turnEvents(t, "file it")).committed);
    expect(out).toMatch(/● github › create_issue title: "Bug"/);
    expect(out).toContain("⎿ created issue #42");
  });

  it("shows a spawn_agent call as a subagent card with its capability, model and result", async () => {
    t = await makeContext(
      [
        {
          toolCalls: [
            { id: "sp", name: "spawn_agent", arguments: { task: "count the files", capability: "explore" } },
          ],
        },
        { text: "there are 2 files" },
        { text: "The subagent counted 2 files." },
      ],
      { plugins: [subagentsPlugin()] },
    );
    const events = await turnEvents(t, "delegate");
    expect(events.some((e) => e.type === "plugin" && e.name === "childStarted")).toBe(true);
    const tr = new Transcript();
    let running = "";
    for (const e of events) {
      tr.apply(e);
      if (e.type === "plugin" && e.name === "childStarted") running = show([...tr.live]);
    }
    expect(running).toMatch(/⠋ Subagent count the files {2}explore · test\/model/);
    expect(running).toMatch(/working in ses_/);
    const out = show(tr.committed);
    expect(out).toMatch(/● Subagent count the files {2}explore · test\/model/);
    expect(out).toContain("there are 2 files");
    // one card, not a card plus a separate subagent line
    expect(tr.committed.filter((i) => i.kind === "agent")).toEqual([]);
  });

  it("shows tool errors in the card", async () => {
    t = await makeContext([
      { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "missing.txt" } }] },
      { text: "it is missing" },
    ]);
    const out = show(transcriptOf(await turnEvents(t, "read")).committed);
    expect(out).toMatch(/✗ Read missing\.txt/);
    expect(out).toMatch(/⎿ .*missing\.txt/);
  });

  it("collapses reasoning to one line and expands it on demand", async () => {
    t = await makeContext([{ reasoning: "first I think about it\nthen I answer", text: "answer" }]);
    const tr = transcriptOf(await turnEvents(t, "q"));
    const collapsed = show(tr.committed);
    expect(collapsed).toMatch(/✻ Thought .*\(8 words\) {2}ctrl\+o to expand/);
    expect(collapsed).not.toContain("then I answer");
    const expanded = show(tr.committed, true);
    expect(expanded).toContain("then I answer");
  });

  it("renders a retry inline and drops the failed attempt's partial text", async () => {
    const scripted = new ScriptedProvider([
      {
        events: [{ type: "textDelta", text: "partial answer that will be retracted" }],
        error: {
          kind: "rateLimited",
          message: "slow down",
          status: 429,
          retryable: true,
          retryAfterMs: 1000,
        },
      },
      { text: "final answer" },
    ]);
    const provider = withRetry(scripted, {
      maxAttempts: 3,
      baseDelayMs: 1,
      maxDelayMs: 1,
      jitter: 0,
      retryAfterCapMs: 1,
    });
    t = await makeContext([], { provider });
    const events = await turnEvents(t, "q");
    expect(events.map((e) => e.type)).toContain("attemptReset");
    const out = show(transcriptOf(events).committed);
    // a 429 is not counted against maxAttempts, so there is no "of n" (as in `lash -p`)
    expect(out).toMatch(/⚠ retry: attempt 2 in [\d.]+s · 429 rate limited · slow down/);
    expect(out).toContain("final answer");
    expect(out).not.toContain("partial answer");
  });

  it("shows provider errors and the stop", async () => {
    t = await makeContext([{ error: { code: "auth", message: "bad key" } }]);
    const out = show(transcriptOf(await turnEvents(t, "q")).committed);
    expect(out).toContain("bad key");
    expect(out).toMatch(/■ stopped \(providerError\)/);
  });
});

describe("cards without a built-in tool", () => {
  const base = { sessionId: "s", turnId: "t", seq: 0, at: 1_000 };
  it("renders Lashlang code cells with their printed output (RLM messages)", () => {
    const tr = new Transcript();
    tr.apply({ ...base, type: "llmRequest", iteration: 1, messageCount: 1, tools: [] });
    tr.apply({
      ...base,
      type: "messages",
      messages: [
        {
          id: "m1",
          role: "assistant",
          parts: [{ type: "code", language: "lashlang", source: 'let x = 1 + 2\nprint("x is {x}")' }],
        },
      ],
    });
    expect(show([...tr.live], false)).toMatch(/⠋ Code lashlang/);
    tr.apply({
      ...base,
      type: "messages",
      messages: [{ id: "m2", role: "user", parts: [{ type: "output", text: "x is 3\n" }] }],
    });
    const out = show(tr.committed);
    expect(out).toMatch(/● Code lashlang/);
    expect(out).toMatch(/^\s+let x = 1 \+ 2$/m);
    expect(out).not.toContain("│"); // no gutter in the copied rows
    expect(out).toMatch(/⎿ output\n\s+x is 3/);
  });

  it("renders Lashlang operations inside a cell as tool cards of their family (value as JSON)", () => {
    const tr = new Transcript();
    tr.apply({
      ...base,
      type: "toolStarted",
      callId: "op1",
      name: "shell.exec",
      args: { command: "ls" },
      family: "lashlang",
    });
    tr.apply({
      ...base,
      at: 1_300,
      type: "toolCompleted",
      callId: "op1",
      name: "shell.exec",
      isError: false,
      content: [
        {
          type: "text",
          text: JSON.stringify({
            exitCode: 0,
            signal: null,
            stdout: "a.ts\nb.ts\n",
            stderr: "",
            timedOut: false,
            truncated: false,
          }),
        },
      ],
      durationMs: 0,
      replayed: false,
    });
    const out = show(tr.committed);
    expect(out).toMatch(/● Shell \$ ls {2}exit 0 · 0\.3s/);
    expect(out).toMatch(/⎿ a\.ts\n\s+b\.ts/);
    expect(out).not.toContain("exitCode");
  });

  it("renders subagents with their task and status", () => {
    const tr = new Transcript();
    tr.apply({
      ...base,
      type: "plugin",
      plugin: "subagents",
      name: "childStarted",
      data: { childSessionId: "c1", task: "explore the repo" },
    });
    expect(show([...tr.live])).toMatch(/Subagent explore the repo {2}running/);
    tr.apply({
      ...base,
      at: 3_500,
      type: "plugin",
      plugin: "subagents",
      name: "childFinished",
      data: { childSessionId: "c1", outcome: { type: "finished" }, summary: "found 3 packages" },
    });
    const out = show(tr.committed);
    expect(out).toMatch(/● Subagent explore the repo {2}ok · 2\.5s/);
    expect(out).toContain("found 3 packages");
  });

  it("keeps a running tool in the live tail while finished items before it are committed in order", () => {
    const tr = new Transcript();
    tr.apply({ ...base, type: "toolStarted", callId: "a", name: "shell", args: { command: "slow" } });
    tr.apply({ ...base, type: "toolStarted", callId: "b", name: "read_file", args: { path: "x" } });
    tr.apply({
      ...base,
      type: "toolCompleted",
      callId: "b",
      name: "read_file",
      isError: false,
      content: [],
      durationMs: 1,
      replayed: false,
    });
    // b finished but a (before it) still runs: both stay live, order kept
    expect(tr.committed).toEqual([]);
    expect(tr.live.map((i) => (i.kind === "tool" ? i.callId : ""))).toEqual(["a", "b"]);
    tr.apply({
      ...base,
      type: "toolCompleted",
      callId: "a",
      name: "shell",
      isError: false,
      content: [],
      durationMs: 1,
      replayed: false,
    });
    expect(tr.committed.map((i) => (i.kind === "tool" ? i.callId : ""))).toEqual(["a", "b"]);
    expect(tr.live).toEqual([]);
  });

  it("moves the finished paragraphs of a long streaming message to the static area", () => {
    const tr = new Transcript({ maxLiveLines: 4 });
    tr.apply({ ...base, type: "llmRequest", iteration: 1, messageCount: 1, tools: [] });
    const paras = Array.from({ length: 6 }, (_, i) => `paragraph ${i}`).join("\n\n");
    tr.apply({ ...base, type: "textDelta", text: `${paras}\n\nstill stre` });
    expect(tr.committed.length).toBe(1);
    expect(tr.committed[0]?.kind === "assistant" && tr.committed[0].text).toContain("paragraph 5");
    const rest = tr.live[0];
    expect(rest?.kind === "assistant" && rest.text).toBe("still stre");
    expect(rest?.kind === "assistant" && rest.cont).toBe(true);
  });
});
