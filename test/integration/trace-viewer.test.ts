// biome-ignore-all lint/performance/useDomNodeTextContent: Playwright Locator.innerText() (rendered text), not the DOM property
// The trace viewer (`lash trace view`) in a real headless Chromium: a trace of a
// real session (with a simulated subagent) plus a record of a future kind.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTraceRecorder, jsonlSink, runTraceCli } from "@lash/trace";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, openHtml, screenshot } from "../../packages/export/test/browser.ts";
import { buildSample } from "../../packages/export/test/fixture.ts";

describe("trace viewer", () => {
  let browser: Browser;
  let dir: string;
  let html: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "lash-trace-view-"));
    const file = join(dir, "run.jsonl");
    const recorder = createTraceRecorder({ sinks: [jsonlSink(file)], redact: { env: {} } });
    const [b, sample] = await Promise.all([launch(), buildSample((e) => recorder.record(e))]);
    browser = b;
    await recorder.close();
    await sample.close();
    // a record of a kind a future version writes, and a damaged line
    writeFileSync(
      file,
      `${readFileSync(file, "utf8")}${JSON.stringify({ v: 2, id: "x-1", ts: Date.now(), kind: "quantum_event", sessionId: sample.sessionId, spanId: "q", detail: "from the future" })}\nnot json at all\n`,
    );
    const out: string[] = [];
    const err: string[] = [];
    const code = await runTraceCli(["view", "run.jsonl", "-o", "view.html"], {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      cwd: dir,
    });
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(out.join("")).toContain("view.html");
    html = readFileSync(join(dir, "view.html"), "utf8");
  }, 120_000); // the first run unpacks the browser
  afterAll(() => browser?.close());

  it("loads with no request leaving the page, with the totals", async () => {
    const { page, external, errors } = await openHtml(browser, html, "trace.html");
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    const stats = await page.locator("#stats").innerText();
    process.stdout.write(`viewer totals: ${stats.replace(/\n/g, " ")}\n`);
    // parent: 3 + 3 + 1 model calls (plus one retried), child: 2
    expect(stats).toMatch(/LLM calls\s*9/);
    expect(stats).toMatch(/turns\s*4/);
    expect(stats).toMatch(/failures\s*1/);
    expect(stats).toMatch(/cost\s*\$0\.\d+/);
    expect(stats).toMatch(/tokens\s*12,500 in \/ 290 out/);
    await screenshot(page, "trace-viewer");
    await page.context().close();
  });

  it("shows the timeline nested, filters by kind, and shows the raw record behind a row", async () => {
    const { page, external } = await openHtml(browser, html, "trace.html");
    const toolRows = page.locator('.row[data-category="tool"]');
    expect(await toolRows.count()).toBe(5);
    expect(await toolRows.first().isVisible()).toBe(true);
    // the subagent's row and its tool rows are indented deeper than the parent's tool
    const pad = async (sel: string) =>
      Number.parseFloat(
        /padding-left:\s*([\d.]+)px/.exec(
          (await page.locator(sel).first().locator(".head").getAttribute("style")) ?? "",
        )?.[1] ?? "NaN",
      );
    expect(await pad('.row[data-category="subagent"]')).toBeGreaterThan(
      await pad('.row[data-category="tool"]'),
    );
    await page.locator('button.chip[data-cat="tool"]').click();
    expect(await toolRows.first().isVisible()).toBe(false);
    expect(await page.locator('.row[data-category="llm"]').first().isVisible()).toBe(true);
    await page.locator('button.chip[data-cat="tool"]').click();
    const row = toolRows.filter({ hasText: "spawn_agent" }).first();
    await row.locator(".head").click();
    const raw = await row.locator("pre.raw").innerText();
    expect(raw).toContain('"kind": "tool_started"');
    expect(raw).toContain('"kind": "tool_completed"');
    await page.fill("#search", "missing.txt");
    expect(await page.locator(".row:visible").count()).toBeGreaterThan(0);
    expect(await page.locator('.row.failed:visible[data-category="tool"]').count()).toBe(1);
    await page.fill("#search", "");
    await screenshot(page, "trace-viewer-expanded");
    expect(external).toEqual([]);
    await page.context().close();
  });

  it("shows unknown record kinds raw instead of dropping them", async () => {
    const { page } = await openHtml(browser, html, "trace.html");
    const unknown = page.locator('.row[data-category="unknown"]');
    expect(await unknown.count()).toBe(2);
    await unknown.first().locator(".head").click();
    expect(await unknown.first().locator("pre.raw").innerText()).toContain("from the future");
    expect(await unknown.nth(1).innerText()).toContain("is not valid JSON — shown raw");
    await page.context().close();
  });

  it("the CLI explains its usage", async () => {
    const err: string[] = [];
    const io = { stdout: () => {}, stderr: (t: string) => err.push(t), cwd: dir };
    expect(await runTraceCli(["view"], io)).toBe(2);
    expect(await runTraceCli(["view", "missing.jsonl"], io)).toBe(1);
    expect(await runTraceCli(["frobnicate"], io)).toBe(2);
    expect(err.join("")).toContain("Usage: lash trace view");
  });
});
