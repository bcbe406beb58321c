// Headless Chromium (Debian `chromium`) through playwright-core, for the HTML
// tests of the export and the trace viewer. The page is served from a fake
// origin by request interception; every other request is recorded and aborted,
// so a test can assert that nothing left the page.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.LASH_CHROMIUM ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

export interface LoadedPage {
  readonly page: Page;
  /** Every request other than the page itself (each was aborted). */
  readonly external: string[];
  /** Uncaught page errors and console errors. */
  readonly errors: string[];
}

/** Open `html` as `http://lash.test/<name>`; nothing else may load. */
export async function openHtml(browser: Browser, html: string, name = "page.html"): Promise<LoadedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const url = `http://lash.test/${name}`;
  const external: string[] = [];
  const errors: string[] = [];
  await page.route("**/*", (route) => {
    const u = route.request().url();
    if (u === url) return route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html });
    external.push(u);
    return route.abort();
  });
  page.on("request", (r) => {
    const u = r.url();
    if (u !== url && !u.startsWith("data:") && !external.includes(u)) external.push(u);
  });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, external, errors };
}

const shotDir = mkdtempSync(join(tmpdir(), "lash-screenshots-"));

/** Full-page PNG under the OS temp dir; the path is printed for people to look at. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(shotDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  process.stdout.write(`screenshot: ${path}\n`);
  return path;
}
