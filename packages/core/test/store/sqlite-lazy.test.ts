// Issue 16: `import("@lash/core")` does not load the SQLite store (better-sqlite3's native
// binding, @effect/sql, store/sqlite.ts) — it is loaded on the first SqliteStore open, and
// the store opened that way works. A real, fresh `node` process imports core's entry point
// with a module-loader hook that records every file it loads.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const entry = pathToFileURL(join(import.meta.dirname, "..", "..", "src", "index.ts")).href;
const dir = mkdtempSync(join(tmpdir(), "lash-sqlite-lazy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files a fresh process loaded: after `import(core)`, and after opening + using a SqliteStore. */
function loaded(): { atImport: string[]; afterOpen: string[]; sessionId: string } {
  const program = `
    const { registerHooks } = await import("node:module");
    const urls = [];
    registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } });
    const core = await import(${JSON.stringify(entry)});
    const atImport = [...urls];
    const store = await core.openSqliteStore({ filename: ${JSON.stringify(join(dir, "lash.db"))} });
    const session = await store.store.createSession({ id: "s-lazy", model: "mock/m", mode: "standard", createdAt: 1, updatedAt: 1, leafId: null, headRevision: 0, turnCount: 0, frameId: "f0", state: {} });
    const again = await store.store.getSession(session.id);
    await store.close();
    // better-sqlite3 is CommonJS: required, not through the ESM load hook; ask the require cache.
    const { createRequire } = await import("node:module");
    const cjs = Object.keys(createRequire(import.meta.url).cache ?? {});
    process.stdout.write(JSON.stringify({ atImport, afterOpen: [...urls, ...cjs], sessionId: again.id === session.id ? session.id : "" }));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ["--input-type=module", "-e", program], { cwd: dir, encoding: "utf8" }),
  ) as { atImport: string[]; afterOpen: string[]; sessionId: string };
}

describe("the SQLite store is loaded on first use", () => {
  it("import of @lash/core loads no SQLite driver; the first open loads it and the store works", () => {
    const { atImport, afterOpen, sessionId } = loaded();
    const sqliteParts = (urls: readonly string[]) =>
      urls.filter((u) => /better-sqlite3|@effect\/sql\/|\/store\/sqlite(-client)?\.ts$/.test(u));
    // The import itself loaded core (many files) but nothing of the SQLite store.
    expect(atImport.some((u) => u.endsWith("/core/src/index.ts"))).toBe(true);
    expect(sqliteParts(atImport)).toEqual([]);
    // Opening a store loaded it, and the store read back the session it wrote.
    expect(sqliteParts(afterOpen).some((u) => u.endsWith("/store/sqlite.ts"))).toBe(true);
    expect(sqliteParts(afterOpen).some((u) => u.includes("@effect/sql"))).toBe(true);
    expect(sessionId).not.toBe("");
  });
});
