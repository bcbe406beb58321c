// The console's plain modules, without a browser: Markdown stays safe, events fold into the
// transcript the pages show, hash routes match.
import type { ServerEvent } from "@lash/client";
import { describe, expect, it } from "vitest";
import { emptyTranscript, fold, handoffTarget } from "../src/components/transcript.ts";
import { renderMarkdown } from "../src/markdown.ts";
import { href, match } from "../src/router.ts";

let seq = 0;
const ev = (type: string, data: Record<string, unknown> = {}): ServerEvent =>
  ({
    seq: ++seq,
    sessionId: "s",
    runId: "r",
    type,
    at: 0,
    data: { type, ...data },
  }) as unknown as ServerEvent;

describe("renderMarkdown", () => {
  it("renders Markdown, shows raw HTML as text, keeps only http(s)/mailto links, loads no image", () => {
    expect(renderMarkdown("**bold** and `code`")).toBe(
      "<p><strong>bold</strong> and <code>code</code></p>\n",
    );
    const html = renderMarkdown('<script>alert(1)</script>\n\nhi <img src=x onerror="alert(1)"> there');
    expect(html).not.toMatch(/<script|<img/);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(renderMarkdown("[x](javascript:alert(1))")).toBe("<p>x</p>\n");
    expect(renderMarkdown("[docs](https://example.com/a?b=1&c=2)")).toBe(
      '<p><a href="https://example.com/a?b=1&amp;c=2" rel="noreferrer noopener" target="_blank">docs</a></p>\n',
    );
    expect(renderMarkdown("![cat](https://example.com/cat.png)")).toBe(
      '<p><a href="https://example.com/cat.png" rel="noreferrer noopener" target="_blank">[image: cat]</a></p>\n',
    );
    expect(renderMarkdown("![cat](data:image/png;base64,AAAA)")).toBe("<p>[cat]</p>\n");
  });
});

describe("fold (events → transcript)", () => {
  it("joins text deltas, drops a retried attempt's partial text, fills tool cards in place, ends with the run", () => {
    const events = [
      ev("runQueued"),
      ev("turnStarted", { input: [{ id: "m", role: "user", parts: [{ type: "text", text: "hi" }] }] }),
      ev("textDelta", { text: "partial that " }),
      ev("attemptReset", { attempt: 2 }),
      ev("textDelta", { text: "Hello " }),
      ev("textDelta", { text: "there" }),
      ev("llmResponse", { iteration: 0 }),
      ev("toolStarted", { callId: "c1", name: "read_file", args: { path: "a" } }),
      ev("toolCompleted", {
        callId: "c1",
        name: "read_file",
        isError: true,
        content: [{ type: "text", text: "no such file" }],
        durationMs: 3,
      }),
      ev("runFinished", { state: "failed", error: { code: "x", message: "it failed: do y" } }),
    ];
    const t = events.reduce(fold, emptyTranscript);
    expect(t.finished).toBe("failed");
    expect(t.items).toEqual([
      { kind: "user", text: "hi" },
      { kind: "notice", text: "The model call is retried (attempt 2)." },
      { kind: "assistant", text: "Hello there", streaming: false },
      {
        kind: "tool",
        callId: "c1",
        name: "read_file",
        args: { path: "a" },
        state: "error",
        result: "no such file",
        durationMs: 3,
      },
      { kind: "notice", text: "it failed: do y", error: true },
    ]);
  });
});

describe("a handoff in the events", () => {
  it("names the successor the chat switches to, and shows it in the transcript", () => {
    const handoff = ev("plugin", {
      plugin: "compaction",
      name: "handoff",
      data: { from: "s", to: "s2", nodeId: "n" },
    });
    expect(handoffTarget(handoff)).toBe("s2");
    expect(handoffTarget(ev("plugin", { plugin: "compaction", name: "finished", data: {} }))).toBeUndefined();
    expect(handoffTarget(ev("textDelta", { text: "x" }))).toBeUndefined();
    const t = [
      ev("runQueued", { text: "hi", principal: "local", handoff: { from: "s0", to: "s" } }),
      handoff,
    ].reduce(fold, emptyTranscript);
    expect(t.items).toEqual([
      { kind: "notice", text: "Session s0 handed off: this message runs in its successor s." },
      expect.objectContaining({ kind: "notice", text: expect.stringContaining("continues in session s2") }),
    ]);
  });
});

describe("hash routes", () => {
  it("match patterns with parameters and build links", () => {
    expect(match("/runs/:id", "/runs/run_1")).toEqual({ id: "run_1" });
    expect(match("/runs/:id", "/runs")).toBeUndefined();
    expect(match("/agents", "/agents")).toEqual({});
    expect(match("/agents/:name", "/agents/a%20b")).toEqual({ name: "a b" });
    expect(href("/agents/:name", { name: "a b" })).toBe("#/agents/a%20b");
  });
});
