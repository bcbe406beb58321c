// biome-ignore-all lint/performance/useDomNodeTextContent: Playwright Locator.innerText() (rendered text), not the DOM property
// The HTML export in a real headless Chromium (playwright-core; the browser comes from
// packages/export/test/browser.ts — the npm-shipped one unless LASH_CHROMIUM says otherwise):
// no request leaves the page, the transcript reads right, tool calls expand, the
// branch tree switches branches, subagents nest under their tool call.
import { exportSession } from "@lash/export";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, openHtml, screenshot } from "../../packages/export/test/browser.ts";
import { buildSample, type Sample } from "../../packages/export/test/fixture.ts";

const visible = (page: Page, text: string) =>
  page.locator("main").getByText(text, { exact: false }).first().isVisible();

describe("HTML export in Chromium", () => {
  let browser: Browser;
  let sample: Sample;
  let html: string;

  beforeAll(async () => {
    [browser, sample] = await Promise.all([launch(), buildSample()]);
    html = await exportSession(sample.store, sample.sessionId, "html");
  }, 120_000); // the first run unpacks the browser
  afterAll(async () => {
    await browser?.close();
    await sample?.close();
  });

  it("is one self-contained file", () => {
    expect(html).not.toMatch(/<link\b|<script[^>]+src=|<img[^>]+src="(?!data:)|@import|url\((?!data:)/i);
  });

  it("loads with no request leaving the page and shows the active branch", async () => {
    const { page, external, errors } = await openHtml(browser, html, "export.html");
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    await expect(page.title()).resolves.toBe("Fix the greeting");
    // the active branch: turn 1, then the branch turn (not the subagent turn)
    expect(await visible(page, "Please fix the greeting in hello.txt.")).toBe(true);
    expect(await visible(page, "Also add an exclamation mark, please.")).toBe(true);
    expect(await page.locator("main strong", { hasText: "Hello" }).first().isVisible()).toBe(true); // markdown rendered
    expect(await visible(page, "Ask a helper to double-check the file.")).toBe(false);
    // model, mode, per-turn usage and total cost
    const header = await page.locator("header.top").innerText();
    expect(header).toContain("anthropic/claude-sonnet-4-5");
    expect(header).toContain("standard");
    expect(header).toMatch(/total cost\s*\$0\.\d+/);
    expect(await page.locator(".turn-usage:visible").count()).toBe(2);
    // reasoning is collapsed
    const reasoning = page.locator("details.reasoning").first();
    expect(await reasoning.getAttribute("open")).toBeNull();
    await screenshot(page, "export-active-branch");
    await page.context().close();
  });

  it("expands a tool call to its arguments and result, with the diff coloured", async () => {
    const { page, external } = await openHtml(browser, html, "export.html");
    const read = page.locator('details.tool[data-call="call_read_1"]');
    expect(await read.locator(".tool-body").isVisible()).toBe(false);
    await read.locator("summary").click();
    expect(await read.locator(".tool-body").isVisible()).toBe(true);
    expect(await read.locator("pre.json").innerText()).toContain('"path": "hello.txt"');
    expect(await read.locator("pre.result").innerText()).toContain("Helo, world!");
    const edit = page.locator('details.tool[data-call="call_edit_1"]');
    await edit.locator("summary").click();
    expect(await edit.locator(".d-add").first().innerText()).toBe("+Hello, world!");
    expect(await edit.locator(".d-del").first().innerText()).toBe("-Helo, world!");
    const color = await edit
      .locator(".d-add")
      .first()
      .evaluate(
        (e) =>
          (
            globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
          ).getComputedStyle(e).backgroundColor,
      );
    expect(color).toMatch(/^rgb/);
    expect(color).not.toBe("rgba(0, 0, 0, 0)");
    await screenshot(page, "export-tool-expanded");
    expect(external).toEqual([]);
    await page.context().close();
  });

  it("switches branches from the tree, and nests the subagent under its tool call", async () => {
    const { page, external, errors } = await openHtml(browser, html, "export.html");
    const branches = page.locator("button.branch");
    expect(await branches.count()).toBe(3); // shared turn 1, then two branches
    await page.locator("button.branch", { hasText: "Ask a helper" }).click();
    expect(await page.getAttribute("body", "data-leaf")).toBe(sample.otherLeaf);
    expect(await visible(page, "Ask a helper to double-check the file.")).toBe(true);
    expect(await visible(page, "Also add an exclamation mark, please.")).toBe(false);
    expect(await visible(page, "The helper confirmed the spelling.")).toBe(true);
    // the failing read is an error card
    expect(await page.locator('details.tool.err[data-call="call_read_missing"]').isVisible()).toBe(true);
    const spawn = page.locator('details.tool[data-call="call_agent_1"]');
    await spawn.locator("summary").first().click();
    const sub = spawn.locator("section.subagent");
    expect(await sub.isVisible()).toBe(true);
    expect(await sub.innerText()).toContain("The file reads Hello, world! and the spelling is correct.");
    expect(await sub.innerText()).toContain(sample.childSessionId);
    await screenshot(page, "export-other-branch-subagent");
    // and back
    await page.locator("button.branch", { hasText: "Also add an exclamation mark" }).click();
    expect(await visible(page, "Also add an exclamation mark, please.")).toBe(true);
    expect(await visible(page, "The helper confirmed the spelling.")).toBe(false);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("renders an RLM code cell highlighted, with its printed output", async () => {
    const rlm = await exportSession(sample.store, sample.rlmSessionId, "html");
    const { page, external } = await openHtml(browser, rlm, "rlm.html");
    expect(external).toEqual([]);
    const cell = page.locator(".cell pre.code");
    expect(await cell.innerText()).toContain('files.read({ path: "notes.md" })');
    expect(await cell.locator(".h-kw").count()).toBeGreaterThan(0);
    expect(await cell.locator(".h-str").count()).toBeGreaterThan(0);
    expect(await page.locator(".cell-output pre").innerText()).toBe("words: 42");
    expect(await page.locator("header.top").innerText()).toContain("rlm");
    await screenshot(page, "export-rlm");
    await page.context().close();
  });

  it("never loads what model text points at", async () => {
    const { renderSessionHtml } = await import("@lash/export");
    const page = renderSessionHtml({
      format: "lash-session",
      version: 1,
      session: {
        id: "ses_x",
        model: "m/x",
        mode: "standard",
        createdAt: 0,
        updatedAt: 0,
        leafId: "a",
        frameId: "f",
        state: {},
      },
      nodes: [
        {
          id: "a",
          parentId: null,
          frameId: "f",
          kind: "message",
          turnId: "t",
          createdAt: 0,
          payload: {
            id: "a",
            role: "assistant",
            parts: [
              {
                type: "text",
                text: '<img src="http://evil.test/x.png"> ![pic](http://evil.test/y.png) <script>fetch("http://evil.test/z")</script> [ok](http://example.test/)',
              },
            ],
          },
        },
      ],
      usage: [],
      children: [],
    });
    const { page: p, external, errors } = await openHtml(browser, page, "hostile.html");
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    expect(await p.locator("main").innerText()).toContain('<img src="http://evil.test/x.png">');
    await p.context().close();
  });
});
