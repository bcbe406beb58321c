// biome-ignore-all lint/performance/useDomNodeTextContent: Playwright Locator.innerText() (rendered text), not the DOM property
// An HTML export worth reviewing (issue 26, item 4), in a real headless Chromium: failed
// calls marked as failures (a shell that exited 3, a tool error), each result's first line
// inline under its call, expand/collapse all, a searchable message index, the RLM header
// and cell counting the cell's tool operations, and the Lashlang error box keeping its line
// breaks so the caret points at the column. Real runtime, real tools, the mock wire server.
// A screenshot of the long session is written to test/artifacts/ (gitignored).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeMemoryStore, SessionStore, type SessionStoreShape } from "@lash/core";
import { exportSession } from "@lash/export";
import { type MockReply, startMockServer } from "@lash/providers/testing";
import { toolsPlugin } from "@lash/tools";
import { Effect, Layer } from "effect";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, openHtml } from "../../packages/export/test/browser.ts";
import { noteFails, notePlugin } from "../../packages/export/test/repeated-ids.ts";
import { cell, MODEL, withRuntime } from "./rlm-support.ts";

const ARTIFACTS = join(import.meta.dirname, "..", "artifacts");
const LONG_TURNS = 30;

const call = (name: string, args: Record<string, unknown>, id = `call_${name}`): MockReply => ({
  toolCalls: [{ id, name, arguments: args }],
  usage: { input: 400, output: 20 },
});
const say = (text: string): MockReply => ({ text, usage: { input: 500, output: 30 } });

function replies(): MockReply[] {
  const out: MockReply[] = [
    call("shell", { command: "printf 'building the site\\n'; exit 3" }),
    say("The build failed with exit code 3."),
    call("note", { n: 4 }),
    say("Could not save note 4."),
    call("note", { n: 1 }),
    say("Saved note 1."),
  ];
  for (let k = 5; k < 5 + LONG_TURNS; k++) {
    out.push(call("note", { n: k }));
    out.push(say(k === 20 ? "Saved note 20 — filed under the zebra protocol." : `Saved note ${k}.`));
  }
  // the RLM session: a cell with four tool operations, a cell that does not parse, a finish
  out.push(
    cell(
      'a = await files.read({ path: "a.txt" })?\nb = await files.read({ path: "a.txt" })?\nc = await files.read({ path: "a.txt" })?\nd = await files.read({ path: "a.txt" })?\nprint len(a.content)',
    ),
    cell("x = 1\ny = x + * 2\nprint y"),
    cell('finish "done"'),
  );
  return out;
}

describe("HTML export worth reviewing, in Chromium", () => {
  let browser: Browser;
  let store: SessionStoreShape;
  let html: string;
  let rlmHtml: string;
  let md: string;

  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), "lash-export-review-"));
    writeFileSync(join(root, "a.txt"), "alpha\n");
    mkdirSync(ARTIFACTS, { recursive: true });
    const server = await startMockServer({ replies: replies() });
    store = await Effect.runPromise(makeMemoryStore());
    const [b] = await Promise.all([
      launch(),
      withRuntime(
        server,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: MODEL, title: "Notes and a failing build" });
            yield* rt.turn(s.id, { text: "Build the site." });
            yield* rt.turn(s.id, { text: "Save note 4." });
            yield* rt.turn(s.id, { text: "Save note 1." });
            for (let k = 5; k < 5 + LONG_TURNS; k++) yield* rt.turn(s.id, { text: `Save note ${k}.` });
            const r = yield* rt.createSession({ model: MODEL, mode: "rlm", title: "Count the letters" });
            yield* rt.turn(r.id, { text: "How long is a.txt?" });
            html = yield* Effect.promise(() => exportSession(store, s.id, "html"));
            md = yield* Effect.promise(() => exportSession(store, s.id, "md"));
            rlmHtml = yield* Effect.promise(() => exportSession(store, r.id, "html"));
          }),
        { plugins: [toolsPlugin({ root }), notePlugin], store: Layer.succeed(SessionStore, store) },
      ),
    ]);
    browser = b;
    await server.close();
  }, 180_000);
  afterAll(() => browser?.close());

  const card = (page: Page, args: string) => page.locator("details.tool").filter({ hasText: args }).first();

  it("marks failed calls as failures — a shell's exit code, a tool error — with the result inline", async () => {
    const { page, external, errors } = await openHtml(browser, html, "review.html");
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    const shell = page.locator("details.tool").first();
    expect(await shell.locator(".tool-name").innerText()).toBe("shell");
    expect(await shell.getAttribute("class")).toContain("err");
    expect(await shell.locator(".tool-icon").innerText()).toBe("✗");
    expect(await shell.locator(".pill.status-err").innerText()).toBe("exit 3");
    // the result's first line, under the call, without expanding
    expect(await shell.locator(".tool-preview").isVisible()).toBe(true);
    expect(await shell.locator(".tool-preview").innerText()).toContain("building the site");
    const failedNote = card(page, "n: 4");
    expect(await failedNote.locator(".tool-icon").innerText()).toBe("✗");
    expect(await failedNote.locator(".pill.status-err").innerText()).toBe("error");
    expect(await failedNote.locator(".tool-preview").innerText()).toContain("note 4 failed: disk full");
    const okNote = card(page, "n: 1");
    expect(await okNote.locator(".tool-icon").innerText()).toBe("✓");
    expect(await okNote.locator(".pill.status-err").count()).toBe(0);
    expect(await okNote.locator(".tool-preview").innerText()).toContain("note 1 saved");
    // the red is red
    const color = await shell
      .locator(".tool-icon")
      .evaluate(
        (e) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(e)
            .color,
      );
    expect(color).toBe("rgb(220, 38, 38)");
    // the shell, note 4, and every fourth note of the long run (the note tool fails those)
    let failed = 2;
    for (let k = 5; k < 5 + LONG_TURNS; k++) if (noteFails(k)) failed++;
    expect(await page.locator("header.top").innerText()).toMatch(new RegExp(`failed\\s*${failed}\\b`));
    await page.context().close();
  });

  it("Markdown marks the same failures", () => {
    expect(md).toContain("**Tool call** `shell` — ❌ failed (exit 3)");
    expect(md).toContain("**Tool call** `note` — ❌ failed (error)");
    expect(md).not.toMatch(/`shell` — ✅/);
  });

  it("expands and collapses every card at once", async () => {
    const { page } = await openHtml(browser, html, "review.html");
    const cards = page.locator("main details.tool");
    const total = await cards.count();
    expect(total).toBe(3 + LONG_TURNS);
    expect(await page.locator("main details.tool[open]").count()).toBe(0);
    await page.locator("#expand-all").click();
    expect(await page.locator("main details.tool[open]").count()).toBe(total);
    expect(await cards.last().locator(".tool-body").isVisible()).toBe(true);
    expect(await cards.last().locator(".tool-preview").isVisible()).toBe(false);
    await page.locator("#collapse-all").click();
    expect(await page.locator("main details[open]").count()).toBe(0);
    expect(await cards.last().locator(".tool-body").isVisible()).toBe(false);
    await page.context().close();
  });

  it("searches a message index client-side and jumps to the match; a long session's screenshot is written", async () => {
    const { page, external } = await openHtml(browser, html, "review.html");
    const entries = page.locator("#msg-index li");
    const all = await entries.count();
    // every prompt and answer of the long session has an entry
    expect(all).toBeGreaterThanOrEqual(2 * (3 + LONG_TURNS));
    expect(await page.locator("#search-count").innerText()).toBe(`${all} messages`);
    await page.fill("#search", "zebra");
    expect(await page.locator("#msg-index li:not([hidden])").count()).toBe(1);
    expect(await page.locator("#search-count").innerText()).toBe(`1 of ${all} messages match`);
    await page.locator("#msg-index li:not([hidden]) button").click();
    const target = page.locator("section.node.match");
    expect(await target.count()).toBe(1);
    expect(await target.innerText()).toContain("zebra protocol");
    expect(await target.isVisible()).toBe(true);
    const inView = await target.evaluate((e) => {
      const r = (
        e as unknown as { getBoundingClientRect(): { top: number; bottom: number } }
      ).getBoundingClientRect();
      return r.top >= 0 && r.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
    });
    expect(inView).toBe(true);
    // a result's text finds the call that produced it, and Enter opens that card
    await page.fill("#search", "note 17 saved");
    expect(await page.locator("#msg-index li:not([hidden])").count()).toBe(1);
    await page.press("#search", "Enter");
    const opened = page.locator("main details.tool[open]");
    expect(await opened.count()).toBe(1);
    expect(await opened.locator("pre.result").innerText()).toContain("note 17 saved");
    await page.fill("#search", "no such words anywhere");
    expect(await page.locator("#msg-index li:not([hidden])").count()).toBe(0);
    await page.fill("#search", "");
    expect(await page.locator("#msg-index li:not([hidden])").count()).toBe(all);
    expect(external).toEqual([]);
    // the long session, as a reviewer sees it: failures marked, one card open
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: join(ARTIFACTS, "export-long-session.png"), fullPage: false });
    process.stdout.write(`screenshot: ${join(ARTIFACTS, "export-long-session.png")}\n`);
    await page.context().close();
  });

  it("RLM: the header and the cell count the cell's tool operations; the error box keeps the caret's column", async () => {
    const { page, external, errors } = await openHtml(browser, rlmHtml, "rlm.html");
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    expect(await page.locator("header.top").innerText()).toMatch(/tool calls\s*4/);
    const heads = await page.locator(".cell-head").allInnerTexts();
    expect(heads[0]).toMatch(/4 tool operations/);
    const box = page.locator(".error-box pre.error-text").first();
    const whiteSpace = await box.evaluate(
      (e) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { whiteSpace: string } }).getComputedStyle(
          e,
        ).whiteSpace,
    );
    expect(whiteSpace).toBe("pre");
    const lines = (await box.innerText()).split("\n");
    const caret = lines.findIndex((l) => /^\s*\^~*\s*$/.test(l));
    expect(caret).toBeGreaterThan(0);
    // the caret is drawn under the column it names: same x as that character of the line above
    const col = lines[caret]!.indexOf("^");
    const xs = await box.evaluate(
      (pre, a) => {
        type Rect = { left: number };
        type Doc = {
          createRange(): {
            setStart(n: unknown, o: number): void;
            setEnd(n: unknown, o: number): void;
            getBoundingClientRect(): Rect;
          };
        };
        const text = (pre as { firstChild: { data: string } }).firstChild;
        const doc = (globalThis as unknown as { document: Doc }).document;
        const at = (offset: number) => {
          const r = doc.createRange();
          r.setStart(text, offset);
          r.setEnd(text, offset + 1);
          return r.getBoundingClientRect().left;
        };
        const lines = text.data.split("\n");
        let start = 0;
        for (let i = 0; i < a.caret - 1; i++) start += lines[i]!.length + 1;
        return [at(start + a.col), at(start + lines[a.caret - 1]!.length + 1 + a.col)] as const;
      },
      { caret, col },
    );
    expect(Math.abs(xs[0] - xs[1])).toBeLessThan(1);
    await page.context().close();
  });
});
