// The browser the HTML tests run in: it comes from the npm registry through
// `pnpm install` (no apt, no download at install time), it renders text with real
// fonts, and a missing browser is an error that says how to get one.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { CHROMIUM_ARGS, findChromium } from "./browser.ts";

describe("test browser", () => {
  it("with no LASH_CHROMIUM, is the headless Chromium from the npm package, and renders text", async () => {
    const found = await findChromium({ env: {}, systemPath: "/nonexistent/chromium" });
    expect(found.source).toMatch(/^npm @sparticuz\/chromium \d+\.\d+\.\d+$/);
    expect(found.executablePath).toContain(join("node_modules", ".cache", "lash-chromium"));
    const browser = await chromium.launch({
      executablePath: found.executablePath,
      args: CHROMIUM_ARGS,
      headless: true,
      env: { ...process.env, ...found.env },
    });
    try {
      const page = await browser.newPage();
      await page.setContent(
        `<p id="t" style="font: 24px 'Open Sans', sans-serif">Hello, lash</p><pre id="m">x = 1</pre><canvas width=400 height=60></canvas>`,
      );
      // the platform font Chromium actually drew the paragraph with: the bundled Open Sans
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("DOM.enable");
      await cdp.send("CSS.enable");
      const { root } = await cdp.send("DOM.getDocument");
      const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector: "#t" });
      const { fonts } = await cdp.send("CSS.getPlatformFontsForNode", { nodeId });
      expect(fonts.map((f) => f.familyName)).toEqual(["Open Sans"]);
      expect(fonts[0]?.glyphCount).toBe("Hello, lash".length);
      // the generic monospace (code blocks) is DejaVu Sans Mono from the npm fonts, as on Debian
      const mono = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector: "#m" });
      const monoFonts = await cdp.send("CSS.getPlatformFontsForNode", { nodeId: mono.nodeId });
      expect(monoFonts.fonts.map((f) => f.familyName)).toEqual(["DejaVu Sans Mono"]);
      // and glyphs reach the pixels
      const inked = await page.evaluate(`(() => {
        const g = document.querySelector("canvas").getContext("2d");
        g.font = "24px 'Open Sans'";
        g.fillText("Hello, lash", 10, 40);
        const pixels = g.getImageData(0, 0, 400, 60).data;
        let n = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) n++;
        return n;
      })()`);
      expect(inked).toBeGreaterThan(100);
    } finally {
      await browser.close();
    }
  }, 120_000);

  it("a LASH_CHROMIUM that is not executable is an error naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lash-browser-"));
    const notABrowser = join(dir, "chrome");
    writeFileSync(notABrowser, "not a browser", { mode: 0o644 });
    await expect(findChromium({ env: { LASH_CHROMIUM: notABrowser } })).rejects.toThrow(
      `LASH_CHROMIUM=${notABrowser} is not an executable file`,
    );
  });

  it("LASH_CHROMIUM comes first; a system Chromium is used only when the npm one is not installed", async () => {
    const npm = await findChromium({ env: {} });
    const chosen = await findChromium({ env: { LASH_CHROMIUM: npm.executablePath } });
    expect(chosen).toEqual({ executablePath: npm.executablePath, source: "LASH_CHROMIUM", env: {} });
    const system = await findChromium({ env: {}, npmPackageDir: null, systemPath: npm.executablePath });
    expect(system.source).toBe("system");
    const both = await findChromium({ env: {}, systemPath: npm.executablePath });
    expect(both.source).toMatch(/^npm /);
  }, 120_000);

  it("no browser anywhere fails loudly and says how to get one", async () => {
    const attempt = findChromium({ env: {}, npmPackageDir: null, systemPath: "/nonexistent/chromium" });
    await expect(attempt).rejects.toThrow(/No Chromium for the browser tests/);
    await expect(attempt).rejects.toThrow(/run `pnpm install`, or set LASH_CHROMIUM/);
  });
});
