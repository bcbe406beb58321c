// The console against a daemon with tokens (issue 24: "the same auth; token entered once, kept
// in the browser's session storage") and its accessibility basics (acceptance 4): a wrong token
// gets the daemon's 401 with what to do; the right one is kept for the tab (a reload stays
// signed in) and sent as a bearer header on every call; every control has an accessible name;
// Tab reaches the controls in order and the focused one shows a focus ring.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleRig,
  consoleScreenshot,
  openConsole,
  startConsole,
  tabOrder,
  unnamedControls,
} from "./console-support.ts";
import { createToken } from "./serve-auth-support.ts";

let rig: ConsoleRig;
let token = "";

beforeAll(async () => {
  rig = await startConsole({
    auth: true,
    prepare: async (sb) => {
      token = await createToken(sb, "alice");
    },
  });
}, 180_000);

afterAll(async () => {
  await rig?.close();
});

describe("the console with tokens", () => {
  it("asks for a token, shows the daemon's 401 for a wrong one, keeps the right one for the tab", async () => {
    const { page, errors, foreign } = await openConsole(rig);
    const authHeaders: (string | undefined)[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/v1/")) authHeaders.push(r.headers().authorization);
    });
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Main" }).count()).toBe(0);
    expect(await unnamedControls(page)).toEqual([]);
    // keyboard: the skip button, the brand link, the token field, the submit button — each with a ring
    const order = await tabOrder(page, 4);
    expect(order.map((o) => o.name)).toEqual([
      "button:Skip to content",
      "a:lash",
      "input:Bearer token",
      "button:Sign in",
    ]);
    expect(order.every((o) => o.ring)).toBe(true);

    await page.getByLabel("Bearer token").fill("lash_not-a-real-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("The daemon refused this token");
    expect(await alert.textContent()).toContain("invalid_token");
    expect(await alert.textContent()).toContain("lash serve token create");
    expect(await page.getByLabel("Bearer token").getAttribute("aria-invalid")).toBe("true");
    expect(authHeaders.at(-1)).toBe("Bearer lash_not-a-real-token");
    expect(await page.evaluate("sessionStorage.getItem('lash.console.token')")).toBeNull();
    await consoleScreenshot(page, "login-401");

    await page.getByLabel("Bearer token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('lash.console.token')")).toBe(token);
    expect(await unnamedControls(page)).toEqual([]);
    const nav = await tabOrder(page, 8);
    expect(nav.map((o) => o.name)).toEqual([
      "button:Skip to content",
      "a:lash",
      "a:Agents",
      "a:Runs & sessions",
      "a:Approvals",
      "a:Loops",
      "a:Metrics",
      "button:Sign out",
    ]);
    expect(nav.every((o) => o.ring)).toBe(true);
    // Enter on a focused navigation link navigates; focus moves to the page
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "Metrics" }).waitFor();
    await expect.poll(() => page.evaluate("document.activeElement.id")).toBe("main");

    // a reload keeps the tab signed in; every call carried the token
    authHeaders.length = 0;
    await page.reload({ waitUntil: "load" });
    await page.getByRole("heading", { level: 1, name: "Metrics" }).waitFor();
    expect(authHeaders.length).toBeGreaterThan(0);
    expect(authHeaders.every((h) => h === `Bearer ${token}`)).toBe(true);

    // a new tab (a new browser context: its own session storage) asks again
    const other = await openConsole(rig);
    await other.page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    expect(await other.page.getByRole("alert").count()).toBe(0);
    await other.page.context().close();

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('lash.console.token')")).toBeNull();

    // the only console errors are the browser's own lines for the refused (401) requests
    expect(errors.filter((e) => !e.includes("401"))).toEqual([]);
    expect(foreign).toEqual([]);
    await page.context().close();
  });
});
