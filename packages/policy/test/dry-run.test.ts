// The dry-run plugin's hook on real tools: write/exec calls are settled with their preview,
// a failing preview gives the error the call would have given, read-only calls run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HookContext, Plugin, ToolDefinition, ToolOutput } from "@lash/core";
import { applyPatchTool, editTool, readFileTool, shellTool } from "@lash/tools";
import { Effect } from "effect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DryRunDetails, dryRunPlugin } from "../src/index.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "lash-dry-run-"));
  writeFileSync(join(root, "a.txt"), "one\ntwo\n");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const hookCtx = { session: { id: "s1" }, turnId: "t1" } as unknown as HookContext;

function before(plugin: Plugin, tool: ToolDefinition, args: unknown) {
  const hook = plugin.hooks?.beforeToolCall;
  if (!hook) throw new Error("no beforeToolCall hook");
  return Effect.runPromise(
    hook(hookCtx, { callId: "c1", name: tool.name, args, tool: tool as ToolDefinition }),
  );
}

const textOf = (o: ToolOutput) => o.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("dryRunPlugin", () => {
  it("settles an edit with its diff and the preview in details; the file is unchanged", async () => {
    const r = await before(dryRunPlugin(), editTool(root) as ToolDefinition, {
      path: "a.txt",
      edits: [{ oldText: "two", newText: "2" }],
    });
    const output = (r as { output: ToolOutput }).output;
    expect(textOf(output)).toMatch(
      /^Dry run: not run\. It would have: edit a\.txt: 1 replacement \(\+1 -1\)/,
    );
    expect(textOf(output)).toContain("-two\n+2");
    const details = output.details as DryRunDetails;
    expect(details.dryRun).toBe(true);
    expect(details.preview?.files).toEqual([{ path: "a.txt", action: "modify", added: 1, removed: 1 }]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\ntwo\n");
  });

  it("a preview that fails gives the error the tool would give, as an error result", async () => {
    const r = await before(dryRunPlugin(), applyPatchTool(root) as ToolDefinition, {
      patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+yyy\n",
    });
    const output = (r as { output: ToolOutput }).output;
    expect(output.isError).toBe(true);
    expect(textOf(output)).toMatch(/^Dry run: not run\. It would have failed: apply_patch: hunk 1 of 1 hunk/);
  });

  it("settles a shell command with its command and cwd", async () => {
    const r = await before(dryRunPlugin(), shellTool(root) as ToolDefinition, { command: "rm a.txt" });
    const text = textOf((r as { output: ToolOutput }).output);
    expect(text).toContain("command: rm a.txt");
    expect(text).toContain(`cwd: ${root}`);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\ntwo\n");
  });

  it("lets read-only tools run", async () => {
    expect(
      await before(dryRunPlugin(), readFileTool(root) as ToolDefinition, { path: "a.txt" }),
    ).toBeUndefined();
  });
});
