// Failures you cannot miss (issue 25 item 2): a tool card's status marker and
// its exit code / reason survive any terminal width, and the retry notice says
// attempt k of n, why and how long — rendered by the real ink renderer at a
// chosen number of columns, from real turns (LashRuntime + the shell tool).
import { EventEmitter } from "node:events";
import type { TurnActivity } from "@lash/core";
import { KeyLimiter, withRateLimit, withRetry } from "@lash/providers";
import { ScriptedProvider } from "@lash/providers/testing";
import { Box, render } from "ink";
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

/** A terminal of `columns` columns that keeps the last frame ink wrote. */
class Terminal extends EventEmitter {
  last = "";
  readonly columns: number;
  constructor(columns: number) {
    super();
    this.columns = columns;
  }
  readonly rows = 40;
  write = (frame: string): boolean => {
    this.last = frame;
    return true;
  };
}

class Keyboard extends EventEmitter {
  readonly isTTY = true;
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read(): null {
    return null;
  }
}

/** Render items at `columns` columns (the last frame ink wrote). */
function showAt(items: readonly Item[], columns: number): string {
  const stdout = new Terminal(columns);
  const r = render(
    h(
      Box,
      { flexDirection: "column" },
      ...items.map((item) => h(ItemView, { key: item.id, item, width: columns, expanded: false })),
    ),
    {
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: new Terminal(columns) as unknown as NodeJS.WriteStream,
      stdin: new Keyboard() as unknown as NodeJS.ReadStream,
      debug: true,
      exitOnCtrlC: false,
      patchConsole: false,
    },
  );
  const frame = stdout.last;
  r.unmount();
  return frame;
}

function transcriptOf(events: readonly TurnActivity[]): Transcript {
  const tr = new Transcript();
  for (const e of events) tr.apply(e);
  return tr;
}

/** The header row of the card whose title is `title`. */
function headerOf(frame: string, title: string): string {
  const row = plain(frame)
    .split("\n")
    .find((l) => new RegExp(`^\\S+ ${title}\\b`).test(l));
  if (row === undefined) throw new Error(`no ${title} card in:\n${plain(frame)}`);
  return row;
}

const LONG = `echo ${"some-long-argument ".repeat(8).trim()}`;

describe("tool-card headers keep the status at every width", () => {
  it("a shell that exited 3 is ✗ with `exit 3` at 80 and 120 columns; a successful one is ● with exit 0", async () => {
    t = await makeContext([
      {
        toolCalls: [
          { id: "bad", name: "shell", arguments: { command: `${LONG}; exit 3` } },
          { id: "good", name: "shell", arguments: { command: `${LONG}-ok` } },
        ],
      },
      { text: "done" },
    ]);
    const tr = transcriptOf(await turnEvents(t, "run them"));
    const tools = tr.committed.filter((i) => i.kind === "tool");
    expect(tools.map((i) => i.kind === "tool" && i.callId)).toEqual(["bad", "good"]);
    const [bad, good] = tools;
    for (const columns of [80, 120]) {
      const failed = showAt([bad!], columns);
      const header = headerOf(failed, "Shell");
      // the command is cut to fit, the marker and the exit code are not
      expect(header).toMatch(/^✗ Shell \$ echo some-long-argument/);
      expect(header).not.toContain("●");
      expect(header).toMatch(/… {2}exit 3 · [\d.]+(ms|s)$/);
      expect(header.length).toBeLessThanOrEqual(columns);

      const okHeader = headerOf(showAt([good!], columns), "Shell");
      expect(okHeader.length).toBeLessThanOrEqual(columns);
      expect(okHeader).toMatch(/^● Shell \$ echo some-long-argument.*… {2}exit 0 · [\d.]+(ms|s)$/);
    }
  });

  it("a tool error shows ✗ and `error`, an interrupted or cancelled call its reason, whatever the arguments' length", () => {
    const tr = new Transcript();
    const base = { sessionId: "s", turnId: "t", seq: 0, at: 1_000 };
    const args = { pattern: "x".repeat(300) };
    const calls: { id: string; text: string; isError: boolean }[] = [
      { id: "e", text: "boom: the pattern is not a valid regular expression", isError: true },
      {
        id: "i",
        text: "The call was interrupted (the process stopped); it may have run in part.",
        isError: true,
      },
      { id: "c", text: "Cancelled by the user.", isError: true },
    ];
    for (const c of calls) {
      tr.apply({ ...base, type: "toolStarted", callId: c.id, name: "lookup", args });
      tr.apply({
        ...base,
        type: "toolCompleted",
        callId: c.id,
        name: "lookup",
        isError: c.isError,
        content: [{ type: "text", text: c.text }],
        durationMs: 2_500,
        replayed: false,
        at: 3_500,
      });
    }
    const items = [...tr.committed, ...tr.live].filter((i) => i.kind === "tool");
    expect(items).toHaveLength(3);
    const want = ["error", "interrupted", "cancelled"];
    for (const columns of [80, 120]) {
      items.forEach((item, k) => {
        const header = headerOf(showAt([item], columns), "lookup");
        expect(header.length).toBeLessThanOrEqual(columns);
        expect(header).toMatch(new RegExp(`^✗ lookup pattern: "x+…"?…? {2}${want[k]} · 2\\.5s$`));
      });
    }
  });
});

describe("the retry notice", () => {
  it("says attempt k of n, the wait, the reason and the message — like `lash -p`", async () => {
    const scripted = new ScriptedProvider([
      {
        events: [{ type: "textDelta", text: "partial" }],
        error: { kind: "overloaded", message: "busy, try later", status: 503, retryable: true },
      },
      { text: "final answer" },
    ]);
    const provider = withRetry(scripted, {
      maxAttempts: 4,
      baseDelayMs: 1,
      maxDelayMs: 1,
      jitter: 0,
    });
    t = await makeContext([], { provider });
    const events = await turnEvents(t, "q");
    const retry = events.find((e) => e.type === "retry");
    expect(retry).toMatchObject({ attempt: 2, maxAttempts: 4 });
    const out = plain(showAt(transcriptOf(events).committed, 120));
    expect(out).toMatch(/⚠ retry: attempt 2 of 4 in 0\.0s · 503 overloaded · busy, try later/);
    expect(out).toContain("final answer");
  });
});

describe("the rate-limit wait notice (issue 22)", () => {
  it("a request the client-side limiter holds back shows `waiting for rate limit (N s)`, then the answer", async () => {
    const scripted = new ScriptedProvider([{ text: "final answer" }]);
    // the key is paused: a 429 told every session on it to wait 300 ms
    const limiter = new KeyLimiter();
    limiter.observe(Date.now(), 429, { "retry-after-ms": "300" }, 300);
    const provider = withRetry(withRateLimit(scripted, limiter), { jitter: 0 });
    t = await makeContext([], { provider });
    const events = await turnEvents(t, "q");
    const wait = events.find((e) => e.type === "retry");
    expect(wait).toMatchObject({ attempt: 1, reason: "waiting for rate limit" });
    expect(wait?.type === "retry" ? wait.delayMs : 0).toBeGreaterThan(0);
    const out = plain(showAt(transcriptOf(events).committed, 120));
    expect(out).toMatch(/⚠ waiting for rate limit \(0\.\d s\)/);
    expect(out).not.toContain("retry: attempt");
    expect(out).toContain("final answer");
  });
});
