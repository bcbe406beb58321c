// read_artifact over a real MemoryStore's artifacts (what the runtime lends tools).
import { Artifacts, makeMemoryStore, type ToolHost } from "@lash/core";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { readArtifactTool } from "../src/index.ts";
import { context, run, runFailure, text } from "./helpers.ts";

const hostOver = async (body: string) => {
  const store = await Effect.runPromise(makeMemoryStore());
  const info = await Effect.runPromise(
    store.putArtifact({
      bytes: new TextEncoder().encode(body),
      mediaType: "text/plain; charset=utf-8",
      createdAt: 1,
    }),
  );
  // only `artifacts` is used by read_artifact: the other capabilities are not reached
  const host = { artifacts: Artifacts.fromStore(store) } as Partial<ToolHost> as ToolHost;
  return { store, id: info.id, ctx: context({ host }) };
};

const body = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n");

describe("read_artifact", () => {
  it("pages by lines: numbered, 1-based, with the offset to continue from and the end marked", async () => {
    const { id, ctx } = await hostOver(body);
    const tool = readArtifactTool();
    const first = text(await run(tool, { id }, ctx));
    expect(first.split("\n")[0]).toBe(`     1\tline 1`);
    expect(first).toContain("   200\tline 200");
    expect(first).not.toContain("line 201");
    expect(first).toContain("(lines 1–200 of 1000; continue with offset 201)");
    const page = text(await run(tool, { id: `artifact:${id}`, offset: 990, limit: 50 }, ctx));
    expect(page.split("\n")[0]).toBe("   990\tline 990");
    expect(page).toContain("  1000\tline 1000");
    expect(page).toContain("(lines 990–1000 of 1000: the end)");
  });

  it("stops a page at its byte size and says where to go on", async () => {
    const { id, ctx } = await hostOver(body);
    const page = text(await run(readArtifactTool({ maxBytes: 100 }), { id, limit: 500 }, ctx));
    const shown = page.split("\n\n")[0]!.split("\n");
    expect(shown.length).toBeLessThan(10);
    expect(page).toContain(`continue with offset ${shown.length + 1})`);
  });

  it("names the problem and the fix: malformed id, unknown id, offset past the end, no store", async () => {
    const { id, ctx } = await hostOver(body);
    const tool = readArtifactTool();
    expect((await runFailure(tool, { id: "abc" }, ctx)).message).toMatch(
      /"abc" is not an artifact id.*64 hex digits/,
    );
    const unknown = await runFailure(tool, { id: "a".repeat(64) }, ctx);
    expect(unknown.message).toContain(`no artifact ${"a".repeat(64)} is stored`);
    expect(unknown.message).toContain("Copy the id exactly");
    const past = await runFailure(tool, { id, offset: 1001 }, ctx);
    expect(past.message).toContain("offset 1001 is past the end");
    expect(past.message).toContain("has 1000 lines. Use an offset from 1 to 1000");
    expect((await runFailure(tool, { id }, context())).message).toContain("keeps no artifacts");
  });
});
