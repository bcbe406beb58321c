// @lash/export on a real session: JSON round trip through import, the Markdown
// transcript (file snapshot), and the CLI functions `lash export` / `lash import` mount.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeMemoryStore, openMemoryStore } from "@lash/core";
import {
  type ExportedSession,
  exportSession,
  ImportError,
  importSession,
  loadSession,
  parseExport,
  runExportCli,
} from "@lash/export";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSample, type Sample } from "../../packages/export/test/fixture.ts";

let sample: Sample;
beforeAll(async () => {
  sample = await buildSample();
});
afterAll(() => sample.close());

/** Replace every id by its original through the import's id map (ids documented to change). */
function unmap(text: string, idMap: ReadonlyMap<string, string>): string {
  let out = text;
  const back = [...idMap].filter(([a, b]) => a !== b).sort((x, y) => y[1].length - x[1].length);
  for (const [original, minted] of back) out = out.split(`"${minted}"`).join(`"${original}"`);
  return out;
}

describe("JSON export", () => {
  it("is schema-versioned and holds every branch and the subagent session", async () => {
    const json = await exportSession(sample.store, sample.sessionId, "json");
    const parsed = parseExport(json);
    expect(parsed).toMatchObject({ format: "lash-session", version: 1 });
    expect(parsed.nodes.length).toBe(14);
    expect(parsed.children.map((c) => c.session.id)).toEqual([sample.childSessionId]);
    expect(parsed.children[0]!.session.parentLink).toMatchObject({ callId: "call_agent_1" });
    expect(parsed.usage.length).toBeGreaterThan(0);
  });

  it("round trips: export → import into another store → export is identical (ids kept)", async () => {
    const a = await exportSession(sample.store, sample.sessionId, "json");
    const target = await Effect.runPromise(makeMemoryStore());
    const r = await importSession(target, a);
    expect(r).toMatchObject({ sessionId: sample.sessionId, keptIds: true, sessions: 2, nodes: 14 + 4 });
    const b = await exportSession(target, sample.sessionId, "json");
    expect(b).toBe(a);
    // and the other formats agree too
    expect(await exportSession(target, sample.sessionId, "md")).toBe(
      await exportSession(sample.store, sample.sessionId, "md"),
    );
  });

  it("round trips into the same store with new session and node ids (the documented difference)", async () => {
    const a = await exportSession(sample.store, sample.sessionId, "json");
    const r = await importSession(sample.store, a);
    expect(r.keptIds).toBe(false);
    expect(r.sessionId).not.toBe(sample.sessionId);
    const b = await exportSession(sample.store, r.sessionId, "json");
    expect(b).not.toBe(a);
    expect(unmap(b, r.idMap)).toBe(a);
    // the imported copy is a working session: its active path is the same transcript
    const view = await sample.run(sample.runtime.readView(r.sessionId));
    const original = await sample.run(sample.runtime.readView(sample.sessionId));
    expect(view.map((m) => m.parts)).toEqual(original.map((m) => m.parts));
  });

  it("refuses what it cannot read, with a reason", async () => {
    const store = await Effect.runPromise(makeMemoryStore());
    await expect(importSession(store, "{nope")).rejects.toThrow(ImportError);
    await expect(importSession(store, { format: "lash-session", version: 99 })).rejects.toThrow(/version 99/);
    await expect(importSession(store, { format: "lash-session", version: 1, nodes: [] })).rejects.toThrow(
      /invalid session export/,
    );
    const json = JSON.parse(await exportSession(sample.store, sample.sessionId, "json")) as ExportedSession;
    await expect(importSession(sample.store, json, { ids: "keep" })).rejects.toThrow(/already exists/);
  });

  it("exports a fork with its inherited prefix, imported as a standalone session", async () => {
    const fork = await sample.run(sample.runtime.fork(sample.sessionId, { title: "forked" }));
    const exported = await loadSession(sample.store, fork.id);
    expect(exported.nodes.length).toBeGreaterThan(0);
    expect(exported.nodes.every((n) => n.inherited)).toBe(true);
    const store = await Effect.runPromise(makeMemoryStore());
    const r = await importSession(store, exported);
    const again = await loadSession(store, r.sessionId);
    expect(again.nodes.map((n) => n.payload)).toEqual(exported.nodes.map((n) => n.payload));
    expect(again.session.origin).toBeUndefined();
  });

  it("reads the active path through a runtime (no store at hand)", async () => {
    const viaRuntime = await loadSession(sample.runtime, sample.sessionId);
    const viaStore = await loadSession(sample.store, sample.sessionId);
    expect(viaRuntime.nodes.length).toBeLessThan(viaStore.nodes.length);
    expect(viaRuntime.children.map((c) => c.session.id)).toContain(sample.childSessionId);
  });
});

describe("Markdown transcript", () => {
  it("matches the snapshot", async () => {
    const md = await exportSession(sample.store, sample.sessionId, "md");
    const stable = md
      .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/g, "<time>")
      .split(sample.workspace)
      .join("<workspace>");
    await expect(stable).toMatchFileSnapshot("../../packages/export/test/snapshots/transcript.md");
  });

  it("renders an RLM cell and its output as fenced blocks", async () => {
    const md = await exportSession(sample.store, sample.rlmSessionId, "md");
    expect(md).toContain("```lashlang\nlet text = await files.read");
    expect(md).toContain("```text\nwords: 42\n```");
  });
});

describe("CLI functions", () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) } };
  };

  it("lash export <prefix> --format md prints the transcript", async () => {
    const c = io();
    const code = await runExportCli(["export", "ses_sample_1", "--format", "md"], c.io, {
      store: sample.store,
    });
    expect(code).toBe(0);
    expect(c.out.join("")).toContain("# Fix the greeting");
  });

  it("lash export -o file.html writes the page; lash import reads a JSON export back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lash-export-cli-"));
    const c = io();
    expect(
      await runExportCli(
        ["export", sample.sessionId, "-o", "s.html"],
        { ...c.io, cwd: dir },
        { store: sample.store },
      ),
    ).toBe(0);
    expect(readFileSync(join(dir, "s.html"), "utf8")).toMatch(/^<!doctype html>/);
    expect(
      await runExportCli(
        ["export", sample.sessionId, "-o", "s.json"],
        { ...c.io, cwd: dir },
        { store: sample.store },
      ),
    ).toBe(0);
    const opened = await openMemoryStore();
    const d = io();
    expect(await runExportCli(["import", "s.json"], { ...d.io, cwd: dir }, { store: opened.store })).toBe(0);
    expect(d.out.join("")).toContain(sample.sessionId);
    expect((await opened.store.getSession(sample.sessionId)).title).toBe("Fix the greeting");
  });

  it("reports usage errors and unknown sessions", async () => {
    const c = io();
    expect(
      await runExportCli(["export", "ses_sample_1", "--format", "pdf"], c.io, { store: sample.store }),
    ).toBe(2);
    expect(await runExportCli(["export", "nope"], c.io, { store: sample.store })).toBe(1);
    expect(c.err.join("")).toContain('no session "nope"');
    expect(await runExportCli(["export"], c.io, { store: sample.store })).toBe(2);
    expect(await runExportCli(["import"], c.io, { store: sample.store })).toBe(2);
  });
});
