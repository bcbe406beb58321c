// The web console in a real browser against a real daemon: a sandbox whose model is the mock
// wire server (scripted replies, or a responder that may hold a reply until the test lets it
// go), `lash serve` as a child process (with or without tokens), and headless Chromium from
// packages/export/test/browser.ts loading the console from the daemon over loopback.
// Screenshots go to a temporary directory; with LASH_UPDATE_SCREENSHOTS=1 to
// packages/console/screenshots/ (committed; the package README links them), so that an ordinary
// test run leaves the working tree as it found it.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockLlmServer, type MockReply, type Responder, startMockServer } from "@lash/providers/testing";
import type { Browser, Page } from "playwright-core";
import { capturePng, launch } from "../../packages/export/test/browser.ts";
import { MODEL, type Sandbox, sandboxOffWhereBwrapCannotRun } from "./cli-support.ts";
import { type Daemon, startDaemon } from "./serve-support.ts";

export const SCREENSHOT_DIR =
  process.env.LASH_UPDATE_SCREENSHOTS === "1"
    ? join(import.meta.dirname, "..", "..", "packages", "console", "screenshots")
    : join(tmpdir(), "lash-console-screenshots");

/** A sandbox like cli-support's `sandbox()`, whose mock model may also be a `responder`. */
export async function consoleSandbox(
  options: { readonly replies?: MockReply[]; readonly responder?: Responder } = {},
): Promise<Sandbox> {
  const root = mkdtempSync(join(tmpdir(), "lash-console-test-"));
  const home = join(root, "lash-home");
  const cwd = join(root, "work");
  mkdirSync(cwd);
  sandboxOffWhereBwrapCannotRun(home);
  const server: MockLlmServer = await startMockServer({
    ...(options.replies ? { replies: options.replies } : {}),
    ...(options.responder ? { responder: options.responder } : {}),
  });
  return {
    home,
    cwd,
    server,
    env: {
      PATH: process.env.PATH,
      HOME: root,
      LASH_HOME: home,
      LASH_MODEL: MODEL,
      OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
    },
    async cleanup() {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A reply the test releases when it wants: `hold()` for the responder, `release()` to answer. */
export function gate<T>(): { readonly wait: Promise<T>; readonly release: (value: T) => void } {
  let release!: (value: T) => void;
  const wait = new Promise<T>((resolve) => {
    release = resolve;
  });
  return { wait, release };
}

export interface ConsoleRig {
  readonly sb: Sandbox;
  readonly daemon: Daemon;
  readonly browser: Browser;
  /** Stops the daemon, the browser and the mock server, and removes the sandbox. */
  close(): Promise<void>;
}

/** Sandbox + `lash serve` (`--no-auth` unless `auth`) + Chromium. */
export async function startConsole(
  options: {
    readonly replies?: MockReply[];
    readonly responder?: Responder;
    readonly auth?: boolean;
    /** Runs in the sandbox before the daemon starts (e.g. `lash init` + `lash build`, tokens). */
    readonly prepare?: (sb: Sandbox) => Promise<void>;
    readonly daemonArgs?: readonly string[];
  } = {},
): Promise<ConsoleRig> {
  const sb = await consoleSandbox(options);
  let daemon: Daemon | undefined;
  let browser: Browser | undefined;
  try {
    await options.prepare?.(sb);
    daemon = options.auth
      ? await startDaemon(sb, options.daemonArgs ?? [], { auth: true })
      : await startDaemon(sb, options.daemonArgs ?? []);
    browser = await launch();
  } catch (e) {
    await stop(daemon);
    await browser?.close();
    await sb.cleanup();
    throw e;
  }
  const d = daemon;
  const b = browser;
  return {
    sb,
    daemon: d,
    browser: b,
    async close() {
      await b.close().catch(() => undefined);
      await stop(d);
      await sb.cleanup();
    },
  };
}

async function stop(daemon: Daemon | undefined): Promise<void> {
  if (daemon && daemon.proc.child.exitCode === null) {
    daemon.proc.child.kill("SIGKILL");
    await daemon.proc.done;
  }
}

export interface ConsolePage {
  readonly page: Page;
  /** Uncaught page errors and console errors. */
  readonly errors: string[];
  /** Requests to any origin other than the daemon's (there should be none). */
  readonly foreign: string[];
}

/** A new browser tab on the console at `#<hash>` (default the home page). */
export async function openConsole(rig: ConsoleRig, hash = "/"): Promise<ConsolePage> {
  const context = await rig.browser.newContext({ viewport: { width: 1200, height: 860 } });
  const page = await context.newPage();
  // a wait that fails names its locator (before the test's own timeout hides it)
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  const foreign: string[] = [];
  const origin = new URL(rig.daemon.url).origin;
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("request", (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith("data:")) foreign.push(u);
  });
  await page.goto(`${rig.daemon.url}/#${hash}`, { waitUntil: "load" });
  return { page, errors, foreign };
}

/** A full-page PNG `<name>.png` in SCREENSHOT_DIR (undefined when Chromium had no frame: see capturePng). */
export async function consoleScreenshot(page: Page, name: string): Promise<string | undefined> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  return (await capturePng(page, path, { animations: "disabled" })) ? path : undefined;
}

// ---- accessibility basics (string-evaluated: the tests' tsconfig has no DOM types)

/** Controls (buttons, inputs, links) without an accessible name, as `tag#id.class` strings. */
export async function unnamedControls(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const out = [];
    for (const el of document.querySelectorAll("button, input, textarea, select, a[href], [role=button]")) {
      const labelled =
        (el.labels && [...el.labels].some((l) => l.textContent.trim() !== "")) ||
        (el.getAttribute("aria-label") || "").trim() !== "" ||
        (el.getAttribute("aria-labelledby") &&
          el.getAttribute("aria-labelledby").split(" ").some((id) => (document.getElementById(id)?.textContent || "").trim() !== "")) ||
        ((el.tagName === "BUTTON" || el.tagName === "A") && el.textContent.trim() !== "");
      if (!labelled) out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + el.className : ""));
    }
    return out;
  })()`)) as string[];
}

/** Press Tab `n` times from the top of the page; the focused element after each, and whether it shows an outline. */
export async function tabOrder(page: Page, n: number): Promise<{ name: string; ring: boolean }[]> {
  await page.evaluate("document.activeElement && document.activeElement.blur()");
  const out: { name: string; ring: boolean }[] = [];
  for (let i = 0; i < n; i++) {
    await page.keyboard.press("Tab");
    out.push(
      (await page.evaluate(`(() => {
        const el = document.activeElement;
        const label = (el.labels && el.labels[0] ? el.labels[0].textContent : "") || el.getAttribute("aria-label") || el.textContent;
        const style = getComputedStyle(el);
        return { name: el.tagName.toLowerCase() + ":" + label.trim(), ring: style.outlineStyle !== "none" && style.outlineWidth !== "0px" };
      })()`)) as { name: string; ring: boolean },
    );
  }
  return out;
}
