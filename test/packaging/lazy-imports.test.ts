// What `import "@lash/core"` and `import "@lash/providers"` load, in a fresh Node process: a
// standard-mode host must not pay for the Lashlang evaluator (chevrotain), for a vendor SDK it
// never calls, or for the SQLite store when it keeps sessions elsewhere. Each is loaded on first
// use (core's RLM mode: `rlm/lashlang.ts`; providers: `createProvider`'s lazy adapter; the
// SQLite store: `store/sqlite-lazy.ts`, at the first open). Effect is imported by submodule
// (`effect/Effect`), never through its barrel, which loads every Effect module
// (bench/perf/import/effect-submodules.ts rewrites barrel imports). bench/perf/import measures
// what the import costs.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const scratch = mkdtempSync(join(tmpdir(), "lash-lazy-imports-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The file URLs a fresh process loads while it evaluates `script` (an ES module, run from `cwd`). */
function loadedBy(cwd: string, script: string): string[] {
  const program = `
    import { registerHooks } from "node:module";
    const urls = [];
    registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } });
    ${script}
    process.stdout.write(JSON.stringify(urls));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", program], {
    cwd,
    encoding: "utf8",
  });
  return JSON.parse(out) as string[];
}

const lashlang = (urls: readonly string[]) =>
  urls.filter((u) => u.includes("/chevrotain") || u.includes("/packages/lashlang/"));
const sqliteStore = (urls: readonly string[]) =>
  urls.filter((u) => /\/better-sqlite3\/|\/@effect\/sql\/|\/core\/src\/store\/sqlite(-client)?\.ts$/.test(u));
const sdks = (urls: readonly string[]) =>
  urls.filter((u) => /\/node_modules\/(openai|@anthropic-ai\/sdk|@google\/genai)\//.test(u));

describe("lazy imports", () => {
  it("importing @lash/core loads neither @lash/lashlang nor chevrotain; an RLM session's first use does", () => {
    const cwd = join(root, "packages", "core");
    const plain = loadedBy(
      cwd,
      `const core = await import("@lash/core"); if (!core.createLash) throw new Error("no createLash");`,
    );
    expect(plain.some((u) => u.includes("/packages/core/src/index.ts"))).toBe(true);
    expect(lashlang(plain)).toEqual([]);

    // The rlm plugin's restore (what every RLM turn runs first) loads the evaluator.
    const rlm = loadedBy(
      cwd,
      `const { rlmMode } = await import("@lash/core");
       const { Effect } = await import("effect");
       const mode = rlmMode();
       const session = { id: "s1", mode: "rlm", frameId: "f1" };
       await Effect.runPromise(mode.plugin.restore({ session, turnId: "t1" }, undefined));
       const state = mode.session("s1");
       state.frame().state.set("x", 1);
       if (state.snapshot().frames.f1.globals.x !== 1) throw new Error("no state");`,
    );
    expect(lashlang(rlm).some((u) => u.includes("/packages/lashlang/src/index.ts"))).toBe(true);
  });

  it("importing @lash/providers loads no vendor SDK", () => {
    const urls = loadedBy(
      join(root, "packages", "providers"),
      `const p = await import("@lash/providers"); if (!p.createProvider) throw new Error("no createProvider");`,
    );
    expect(urls.some((u) => u.includes("/packages/providers/src/index.ts"))).toBe(true);
    expect(sdks(urls)).toEqual([]);
  });

  it("importing @lash/core or @lash/providers loads effect's submodules, not its barrel (all ~180 modules)", () => {
    const barrel = (urls: readonly string[]) => urls.filter((u) => /\/effect\/dist\/esm\/index\.js$/.test(u));
    for (const [dir, specifier] of [
      ["core", "@lash/core"],
      ["providers", "@lash/providers"],
    ] as const) {
      const urls = loadedBy(
        join(root, "packages", dir),
        `const m = await import(${JSON.stringify(specifier)}); if (Object.keys(m).length === 0) throw new Error("no exports");`,
      );
      expect(urls.some((u) => u.includes("/effect/dist/esm/Effect.js"))).toBe(true);
      expect(barrel(urls)).toEqual([]);
    }
  });

  it("importing @lash/core loads no SQLite store (driver, @effect/sql, store code); the first open does, and the store works", () => {
    const cwd = join(root, "packages", "core");
    const plain = loadedBy(
      cwd,
      `const core = await import("@lash/core"); if (!core.SqliteStore.layer) throw new Error("no SqliteStore");`,
    );
    expect(plain.some((u) => u.includes("/packages/core/src/index.ts"))).toBe(true);
    expect(sqliteStore(plain)).toEqual([]);

    // The first open loads it; the store writes a session and reads it back (else the script throws).
    const filename = join(scratch, "lash.db");
    const opened = loadedBy(
      cwd,
      `const { openSqliteStore } = await import("@lash/core");
       const { store, close } = await openSqliteStore({ filename: ${JSON.stringify(filename)} });
       const record = { id: "s-lazy", model: "mock/m", mode: "standard", createdAt: 1, updatedAt: 1,
         leafId: null, headRevision: 0, turnCount: 0, frameId: "f0", state: {} };
       await store.createSession(record);
       const again = await store.getSession("s-lazy");
       await close();
       if (again.id !== "s-lazy" || again.model !== "mock/m") throw new Error("the store did not read back its session");`,
    );
    const loaded = sqliteStore(opened);
    expect(loaded.some((u) => u.endsWith("/packages/core/src/store/sqlite.ts"))).toBe(true);
    expect(loaded.some((u) => u.includes("/better-sqlite3/"))).toBe(true);
    expect(loaded.some((u) => u.includes("/@effect/sql/"))).toBe(true);

    // Opening that (now current) file again, reading the session, its path, the listing and the
    // usage, and committing a turn run on plain better-sqlite3 statements: @effect/sql is loaded
    // only by the first method written with it (updateSession), which then works.
    const reopened = loadedBy(
      cwd,
      `const { openSqliteStore } = await import("@lash/core");
       const { store, close } = await openSqliteStore({ filename: ${JSON.stringify(filename)} });
       const session = await store.getSession("s-lazy");
       const node = { id: "n1", sessionId: "s-lazy", parentId: null, frameId: "f0", kind: "message",
         turnId: "t1", payload: { id: "n1", role: "user", parts: [{ type: "text", text: "hi" }] }, createdAt: 2 };
       await store.commit({ sessionId: "s-lazy", turnId: "t1", hash: "h1", expectedRevision: session.headRevision,
         nodes: [node], leafId: "n1", usage: [], updatedAt: 2 });
       const path = await store.activePath("s-lazy");
       if (path.length !== 1 || path[0].payload.parts[0].text !== "hi") throw new Error("the path did not read back");
       const listed = await store.listSessions({ limit: 5 });
       if (listed.length !== 1 || listed[0].leafId !== "n1") throw new Error("listSessions did not list the session");
       if ((await store.usage("s-lazy")).length !== 0) throw new Error("unexpected usage rows");
       urls.push("marker:updateSession");
       await store.updateSession("s-lazy", { title: "renamed", updatedAt: 3 });
       const renamed = await store.getSession("s-lazy");
       await close();
       if (renamed.title !== "renamed") throw new Error("updateSession did not write the title");`,
    );
    const marker = reopened.indexOf("marker:updateSession");
    expect(marker).toBeGreaterThan(0);
    expect(reopened.slice(0, marker).some((u) => u.includes("/better-sqlite3/"))).toBe(true);
    expect(reopened.slice(0, marker).filter((u) => u.includes("/@effect/sql/"))).toEqual([]);
    expect(reopened.slice(marker).some((u) => u.includes("/@effect/sql/"))).toBe(true);
  });
});
