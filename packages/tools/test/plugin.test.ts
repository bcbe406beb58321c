import { isIdempotent } from "@lash/core/internal";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PlanValue, TOOL_NAMES, toolsPlugin, updatePlanTool } from "../src/index.ts";
import { makeDirs, run, runFailure, setup, type TempDirs, text } from "./helpers.ts";

let dirs: TempDirs;
beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, { "a.txt": "a\n" });
});
afterEach(() => dirs.cleanup());

describe("update_plan", () => {
  it("summarises the checklist and exposes the items for UIs", async () => {
    const items = [
      { text: "Read the code", status: "completed" },
      { text: "Write the fix", status: "in_progress" },
      { text: "Run the tests", status: "pending" },
    ] as const;
    const out = await run(updatePlanTool(), { items });
    expect(text(out)).toBe(
      "Plan updated: 1/3 completed; in progress: Write the fix.\n[x] Read the code\n[~] Write the fix\n[ ] Run the tests",
    );
    expect(out.details).toEqual({ items: [...items], completed: 1, total: 3 } satisfies PlanValue);
    expect(out.value).toEqual(out.details);
  });

  it("refuses unknown statuses", async () => {
    const failure = await runFailure(updatePlanTool(), { items: [{ text: "x", status: "done" }] });
    expect(failure.message).toContain("pending, in_progress, completed");
  });
});

describe("toolsPlugin", () => {
  it("offers every tool with a closed schema, a family and a Lashlang binding", () => {
    const plugin = toolsPlugin({ root: dirs.root });
    expect(plugin.name).toBe("tools");
    expect(plugin.tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    const bindings = Object.fromEntries(
      plugin.tools.map((t) => [t.name, `${t.binding?.module}.${t.binding?.operation}`]),
    );
    expect(bindings).toEqual({
      read_file: "files.read",
      write_file: "files.write",
      edit: "files.edit",
      apply_patch: "files.patch",
      glob: "files.glob",
      grep: "files.grep",
      shell: "shell.exec",
      update_plan: "plan.update",
      read_artifact: "artifacts.read",
    });
    for (const tool of plugin.tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(Array.isArray(tool.inputSchema.required)).toBe(true);
      expect(tool.description.length).toBeGreaterThan(100);
      expect(tool.family).toBeTruthy();
      expect(tool.binding?.returns).toBeTruthy();
      if (tool.readOnly === true) expect(isIdempotent(tool)).toBe(true);
    }
    const readOnly = plugin.tools.filter((t) => t.readOnly === true).map((t) => t.name);
    expect(readOnly).toEqual(["read_file", "glob", "grep", "read_artifact"]);
  });

  it("selects a subset and rejects unknown names", () => {
    expect(toolsPlugin({ root: dirs.root, tools: ["grep", "read_file"] }).tools.map((t) => t.name)).toEqual([
      "read_file",
      "grep",
    ]);
    expect(() => toolsPlugin({ root: dirs.root, tools: ["read"] })).toThrow(/unknown tool name/);
  });

  it("applies deny patterns and shell options to its tools", async () => {
    await setup(dirs, { "secrets/key": "k\n" });
    const plugin = toolsPlugin({
      root: dirs.root,
      deny: ["secrets/"],
      shell: { env: { FROM_PLUGIN: "yes" } },
    });
    const byName = (n: string) => {
      const tool = plugin.tools.find((t) => t.name === n);
      if (tool === undefined) throw new Error(n);
      return tool;
    };
    expect((await runFailure(byName("read_file"), { path: "secrets/key" })).class).toBe("permissionDenied");
    const out = await run(byName("shell"), { command: "echo $FROM_PLUGIN" });
    expect((out.value as { stdout: string }).stdout).toBe("yes\n");
  });
});
