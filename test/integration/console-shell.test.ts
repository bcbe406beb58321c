// The console's shell against a real `lash serve --no-auth` in headless Chromium: `/` serves
// the page (one script, one stylesheet, long-cached by hash), the navigation reaches every
// page by hash route, and nothing is requested from any origin but the daemon's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleRig, consoleScreenshot, openConsole, startConsole } from "./console-support.ts";

let rig: ConsoleRig;

beforeAll(async () => {
  rig = await startConsole();
}, 120_000);

afterAll(async () => {
  await rig?.close();
});

describe("the console's shell", () => {
  it("serves / and its hashed assets with their content types and cache headers", async () => {
    const page = await fetch(`${rig.daemon.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    const script = /src="(\/console\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    const style = /href="(\/console\/main-[A-Z0-9]+\.css)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    const js = await fetch(`${rig.daemon.url}${script}`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const etag = js.headers.get("etag")!;
    await js.arrayBuffer();
    const again = await fetch(`${rig.daemon.url}${script}`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    const css = await fetch(`${rig.daemon.url}${style}`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    await css.arrayBuffer();
    const missing = await fetch(`${rig.daemon.url}/console/main-OLD.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ _tag: "NotFound", code: "console_file_not_found" });
    // the API is untouched
    const api = await fetch(`${rig.daemon.url}/v1/nothing-here`);
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: "route_not_found" });
  });

  it("opens on the agents page and navigates to every page of the navigation", async () => {
    const { page, errors, foreign } = await openConsole(rig);
    await page.getByRole("heading", { level: 1, name: "Agents" }).waitFor();
    expect(page.url()).toMatch(/#\/agents$/);
    await page.getByText("No agents yet").waitFor();
    await consoleScreenshot(page, "agents-empty");
    const nav = page.getByRole("navigation", { name: "Main" });
    for (const [label, heading] of [
      ["Runs & sessions", "Runs and sessions"],
      ["Approvals", "Approvals"],
      ["Loops", "Loops"],
      ["Metrics", "Metrics"],
      ["Agents", "Agents"],
    ] as const) {
      await nav.getByRole("link", { name: label }).click();
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      expect(await nav.getByRole("link", { name: label }).getAttribute("aria-current")).toBe("page");
    }
    await page.goto(`${rig.daemon.url}/#/no/such/page`);
    await page.getByRole("heading", { level: 1, name: "Not found" }).waitFor();
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
    await page.context().close();
  });
});
