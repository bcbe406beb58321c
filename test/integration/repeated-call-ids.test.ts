// A provider that reuses one tool-call id in every turn (issue 26, acceptance 1): a 40-turn
// session over the mock wire server (OpenAI Chat Completions), every call `call_1`, every
// result distinct. Every surface must pair each result with its own call: the graph and the
// requests, the Markdown and HTML exports (in Chromium), the trace file and the trace viewer
// (in Chromium). The TUI's resumed transcript is checked in apps/cli/test/tui/repeated-ids.test.ts.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TurnActivity } from "@lash/core";
import { exportSession } from "@lash/export";
import type { Message } from "@lash/sansio";
import { createTraceRecorder, jsonlSink, runTraceCli } from "@lash/trace";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, openHtml } from "../../packages/export/test/browser.ts";
import {
  noteFails,
  noteResult,
  REPEATED_ID,
  type RepeatedIdSession,
  runRepeatedIdSession,
  TURNS,
} from "../../packages/export/test/repeated-ids.ts";

const ARTIFACTS = join(import.meta.dirname, "..", "artifacts");
const ks = Array.from({ length: TURNS }, (_, i) => i + 1);

describe(`a provider that repeats one tool-call id for ${TURNS} turns`, () => {
  let browser: Browser;
  let run: RepeatedIdSession;
  let traceFile: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    traceFile = join(ARTIFACTS, "repeated-ids.trace.jsonl");
    writeFileSync(traceFile, "");
    const recorder = createTraceRecorder({ sinks: [jsonlSink(traceFile)], redact: { env: {} } });
    const events: TurnActivity[] = [];
    [browser, run] = await Promise.all([
      launch(),
      runRepeatedIdSession((e) => {
        events.push(e);
        recorder.record(e);
      }),
    ]);
    await recorder.close();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await run?.close();
  });

  it("the graph keeps both ids; every request sends the provider's own id back unchanged", async () => {
    const exported = JSON.parse(await exportSession(run.store, run.sessionId, "json")) as {
      nodes: { kind: string; payload: unknown }[];
    };
    const parts = exported.nodes.flatMap((n) => (n.kind === "message" ? (n.payload as Message).parts : []));
    const calls = parts.filter((p) => p.type === "toolCall");
    const results = parts.filter((p) => p.type === "toolResult");
    expect(calls).toHaveLength(TURNS);
    expect(new Set(calls.map((c) => c.id))).toEqual(new Set([REPEATED_ID]));
    expect(new Set(calls.map((c) => c.lashCallId)).size).toBe(TURNS);
    expect(results.map((r) => r.lashCallId)).toEqual(calls.map((c) => c.lashCallId));
    // the second request of turn k answers call_1 with note k's result
    const requests = run.server.requests;
    expect(requests).toHaveLength(2 * TURNS);
    for (const k of ks) {
      const body = requests[2 * k - 1]!.body as { messages: Record<string, unknown>[] };
      const last = body.messages.at(-1)!;
      expect(last).toMatchObject({ role: "tool", tool_call_id: REPEATED_ID });
      expect(String(last.content)).toContain(noteResult(k));
      const assistant = body.messages.at(-2) as { tool_calls: { id: string }[] };
      expect(assistant.tool_calls.map((c) => c.id)).toEqual([REPEATED_ID]);
      expect(JSON.stringify(body)).not.toContain("lashCallId");
    }
  });

  it("Markdown export: each tool call shows its own result and status", async () => {
    const md = await exportSession(run.store, run.sessionId, "md");
    const sections = md.split("**Tool call** `note`").slice(1);
    expect(sections).toHaveLength(TURNS);
    for (const k of ks) {
      const s = sections[k - 1]!;
      expect(s).toContain(`"n": ${k}`);
      expect(s).toContain(noteResult(k));
      for (const j of [k - 1, k + 1]) if (j >= 1 && j <= TURNS) expect(s).not.toContain(noteResult(j));
      expect(s.startsWith(noteFails(k) ? " — ❌ failed (error)" : " — ✅")).toBe(true);
    }
  });

  it("HTML export in Chromium: every tool card shows its own result, failures marked", async () => {
    const html = await exportSession(run.store, run.sessionId, "html");
    const { page, external, errors } = await openHtml(browser, html, "repeated-ids.html");
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    const cards = (await page.evaluate(`[...document.querySelectorAll("details.tool")].map((d) => ({
      args: d.querySelector("pre.json")?.textContent ?? "",
      result: d.querySelector("pre.result")?.textContent ?? "",
      icon: d.querySelector(".tool-icon")?.className ?? "",
    }))`)) as { args: string; result: string; icon: string }[];
    expect(cards).toHaveLength(TURNS);
    for (const k of ks) {
      const c = cards[k - 1]!;
      expect(c.args).toContain(`"n": ${k}`);
      expect(c.result).toContain(noteResult(k));
      expect(c.icon).toContain(noteFails(k) ? "err" : "ok");
    }
    await page.context().close();
  });

  it("trace file and viewer in Chromium: one tool row per call, each with its own result", async () => {
    const records = readFileSync(traceFile, "utf8")
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as { kind: string; spanId: string; callId?: string; result?: { preview: string } },
      );
    const completed = records.filter((r) => r.kind === "tool_completed");
    expect(completed).toHaveLength(TURNS);
    expect(new Set(completed.map((r) => r.spanId)).size).toBe(TURNS);
    expect(completed.map((r) => r.result?.preview)).toEqual(ks.map(noteResult));
    const err: string[] = [];
    const code = await runTraceCli(["view", traceFile, "-o", "repeated-ids.trace.html"], {
      stdout: () => {},
      stderr: (t) => err.push(t),
      cwd: ARTIFACTS,
    });
    expect(err).toEqual([]);
    expect(code).toBe(0);
    const html = readFileSync(join(ARTIFACTS, "repeated-ids.trace.html"), "utf8");
    const { page, external } = await openHtml(browser, html, "trace.html");
    expect(external).toEqual([]);
    const rows = (await page.evaluate(
      `[...document.querySelectorAll('.row[data-category="tool"]')].map((r) => ({ text: r.querySelector(".head")?.textContent ?? "", failed: r.classList.contains("failed") }))`,
    )) as { text: string; failed: boolean }[];
    expect(rows).toHaveLength(TURNS);
    for (const k of ks) {
      const row = rows[k - 1]!;
      expect(row.text).toContain(`"n":${k}`);
      expect(row.text).toContain(noteResult(k));
      expect(row.failed).toBe(noteFails(k));
    }
    await page.context().close();
  });
});
