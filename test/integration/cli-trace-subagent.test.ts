// `lash -p --trace` with a real subagent: the child's own records are in the
// trace file, nested under the parent's spawn_agent call.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jsonLines, lash, type Sandbox, sandbox } from "./cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

describe("lash -p --trace with a subagent", () => {
  it("records the child's turn and tool calls under the parent's spawn_agent span", async () => {
    box = await sandbox([
      // parent: spawn an explore child
      {
        toolCalls: [
          {
            id: "spawn1",
            name: "spawn_agent",
            arguments: { task: "List the files.", capability: "explore" },
          },
        ],
      },
      // child: one glob, then its answer
      { toolCalls: [{ id: "g1", name: "glob", arguments: { pattern: "*" } }] },
      { text: "There are no files." },
      // parent: the final answer
      { text: "The child found no files." },
    ]);
    const r = await lash(["-p", "how many files?", "--trace", "t.jsonl"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("The child found no files.");
    const records = jsonLines(readFileSync(join(box.cwd, "t.jsonl"), "utf8")) as Record<string, unknown>[];
    const started = records.find((x) => x.kind === "subagent_started");
    expect(started).toBeDefined();
    const parentSession = started!.sessionId as string;
    const childRecords = records.filter((x) => x.sessionId !== parentSession);
    const childTool = childRecords.find((x) => x.kind === "tool_started" && x.name === "glob");
    expect(childTool).toBeDefined();
    const childSession = childTool!.sessionId as string;
    expect(childRecords.filter((x) => x.sessionId === childSession).map((x) => x.kind)).toEqual(
      expect.arrayContaining([
        "turn_started",
        "llm_request",
        "llm_response",
        "tool_started",
        "tool_completed",
        "turn_finished",
      ]),
    );
    // nesting: child tool → child turn → child session → the parent's spawn_agent tool span
    const spans = new Map(records.map((x) => [x.spanId as string, x.parentSpanId as string | undefined]));
    const chain: string[] = [];
    for (let s: string | undefined = childTool!.spanId as string; s && chain.length < 10; s = spans.get(s))
      chain.push(s);
    const spawnSpan = records.find((x) => x.kind === "tool_started" && x.name === "spawn_agent")!
      .spanId as string;
    expect(chain).toContain(spawnSpan);
    expect(chain.indexOf(spawnSpan)).toBeGreaterThan(0);
  });
});
