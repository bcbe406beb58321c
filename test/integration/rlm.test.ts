// The RLM mode end to end: a real LashRuntime (memory store), the real Anthropic SDK against
// the mock wire server, real file tools (@lash/tools) in a temporary workspace.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, type Plugin, type TurnActivity } from "@lash/core";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { toolsPlugin } from "@lash/tools";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { cell, prose, wireTail, wireText, wireTools, withRuntime } from "./rlm-support.ts";

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(replies: MockReply[]): Promise<MockLlmServer> {
  const server = await startMockServer({ replies });
  servers.push(server);
  return server;
}

function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), "lash-rlm-"));
  writeFileSync(join(root, "notes.md"), "- buy milk\n- call Ada\n- ship rlm\n");
  writeFileSync(join(root, "data.json"), JSON.stringify({ items: ["red", "green", "blue"] }));
  return root;
}

describe("rlm end to end (mock wire server, real tools)", () => {
  it("a multi-iteration task: cells read files, print, keep variables across iterations and finish", async () => {
    const server = await serve([
      cell(
        'notes = (await files.read({ path: "notes.md" })?).content\ncount = len(split(trim(notes), "\\n"))\nprint count',
        "I'll read the notes first.",
      ),
      cell('data = json_parse((await files.read({ path: "data.json" })?).content)\nprint data.items[1]'),
      cell('finish format("{} notes; second item {}", count, data.items[1])'),
    ]);
    const events: TurnActivity[] = [];
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "anthropic/claude-haiku-4-5", mode: "rlm" });
          const t = yield* rt.turn(
            s.id,
            { text: "Summarize my notes and data." },
            { onEvent: (e) => events.push(e) },
          );
          expect(t.outcome).toEqual({
            type: "finished",
            finish: { kind: "finalValue", value: "3 notes; second item green" },
          });
          const [r1, r2, r3] = server.requests;
          expect(server.requests).toHaveLength(3);
          // the catalog renders the real tools as module operations; no native tools are sent
          expect(wireTools(r1!)).toEqual([]);
          expect(wireText(r1!)).toContain(
            "### files.read({ path: str, offset?: int, limit?: int }) -> {path, content",
          );
          expect(wireText(r1!)).toContain("### shell.exec(");
          // observations reach the next prompt in emission format; variables are listed in the tail
          expect(wireText(r2!)).toContain(
            "I'll read the notes first.\n<lashlang>\nnotes = (await files.read",
          );
          expect(wireText(r2!)).toContain("history[1].output[0] (1 chars):\n3");
          expect(wireTail(r2!)).toContain("=== CURRENT ITERATION: 2 ===");
          expect(wireTail(r2!)).toContain("- `count` = 3");
          expect(wireText(r3!)).toContain("history[2].output[0] (5 chars):\ngreen");
          expect(wireTail(r3!)).toMatch(/- `data` = \{"items":\["red","green","blue"\]\}/);
          // the reads went through the tool dispatch (events) and are recorded in the graph
          const started = events.filter((e) => e.type === "toolStarted");
          expect(started.map((e) => (e as { name: string }).name)).toEqual(["read_file", "read_file"]);
          const view = yield* rt.readView(s.id);
          expect(view.map((m) => m.role)).toEqual([
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
          ]);
          expect(view[1]!.parts).toEqual([
            { type: "text", text: "I'll read the notes first." },
            { type: "code", language: "lashlang", source: expect.stringContaining("notes.md") },
          ]);
          expect(view[2]!.parts.map((p) => p.type)).toEqual(["toolResult", "output"]);
          const trajectory = events.filter((e) => e.type === "plugin" && e.name === "rlm.trajectory");
          expect(trajectory).toHaveLength(3);
          // state survives into the next turn (and is in the session record)
          server.enqueue(cell("finish count * 10"));
          const t2 = yield* rt.turn(s.id, { text: "times ten?" });
          expect(t2.finalValue).toBe(30);
          const usage = yield* rt.usage(s.id);
          expect(usage.total.input).toBe(2000);
        }),
      { plugins: [toolsPlugin({ root: workspace() })] },
    );
  });

  it("an aggregate await runs three slow tools concurrently (in-flight counting, no timing)", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let release: () => void = () => {};
    const allThere = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: Plugin = {
      name: "slow",
      tools: [
        defineTool<{ id: string }>({
          name: "slow_op",
          description: "A slow operation: waits until three are running at once (or gives up after 5 s).",
          inputSchema: {
            type: "object",
            properties: { id: { type: "string" } },
            required: ["id"],
            additionalProperties: false,
          },
          binding: { module: "slow", operation: "wait", returns: "{id, peers}" },
          run: async ({ id }) => {
            inFlight++;
            maxInFlight = Math.max(maxInFlight, inFlight);
            if (inFlight === 3) release();
            let timer: NodeJS.Timeout | undefined;
            const gaveUp = await Promise.race([
              allThere.then(() => false),
              new Promise<boolean>((resolve) => {
                timer = setTimeout(() => resolve(true), 5000);
              }),
            ]);
            clearTimeout(timer);
            const peers = inFlight;
            inFlight--;
            return { content: [{ type: "text", text: id }], value: { id, peers, gaveUp } };
          },
        }),
      ],
    };
    const server = await serve([
      cell(
        'r = await [slow.wait({ id: "a" })?, slow.wait({ id: "b" })?, slow.wait({ id: "c" })?]\nfinish [x.id for x in r]',
      ),
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "anthropic/claude-haiku-4-5", mode: "rlm" });
          const t = yield* rt.turn(s.id, { text: "run three" });
          expect(t.finalValue).toEqual(["a", "b", "c"]);
          expect(maxInFlight).toBe(3);
          const view = yield* rt.readView(s.id);
          const records = view[2]!.parts.filter((p) => p.type === "toolResult" && p.name === "slow_op");
          expect(records.map((p) => (p as { value: { gaveUp: boolean } }).value.gaveUp)).toEqual([
            false,
            false,
            false,
          ]);
        }),
      { plugins: [slow] },
    );
  });

  it("llm.query: a tool-less, typed one-shot sub-call whose usage is recorded under the turn", async () => {
    const server = await serve([
      cell(
        'notes = (await files.read({ path: "notes.md" })?).content\nfacts = await llm.query({ task: "List the tasks in these notes.", inputs: { notes: notes }, output: { tasks: "list[str]", urgent: "bool" } })?\nfinish { n: len(facts.tasks), urgent: facts.urgent, first: facts.tasks[0] }',
      ),
      {
        text: 'Here you go: {"kind": "value", "value": {"tasks": ["buy milk", "call Ada", "ship rlm"], "urgent": false}, "error": null}',
        usage: { input: 120, output: 30 },
      },
      cell(
        'bad = await llm.query({ task: "Score it", output: { score: "float" } })\nprint bad.ok\nprint bad.error',
      ),
      {
        text: '{"kind": "value", "value": {"score": "high"}, "error": null}',
        usage: { input: 50, output: 10 },
      },
      // the provider's structured-output check asks once more, with the problem; still wrong
      {
        text: '{"kind": "value", "value": {"score": "very high"}, "error": null}',
        usage: { input: 60, output: 10 },
      },
      prose("The score could not be computed."),
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "anthropic/claude-haiku-4-5", mode: "rlm" });
          const t = yield* rt.turn(s.id, { text: "What are my tasks?" });
          expect(t.finalValue).toEqual({ n: 3, urgent: false, first: "buy milk" });
          const sub = server.requests[1]!;
          expect(wireTools(sub)).toEqual([]);
          const subText = wireText(sub);
          expect(subText).toContain("Task:\nList the tasks in these notes.");
          expect(subText).toContain('"notes": "- buy milk\\n- call Ada\\n- ship rlm"');
          expect(subText).toContain(
            '"tasks": {\n      "type": "array",\n      "items": {\n        "type": "string"',
          );
          expect(subText).toContain('"required": [\n    "tasks",\n    "urgent"\n  ]');
          expect(subText).not.toContain("# Execution");
          const usage = yield* rt.usage(s.id);
          const bySource = Object.fromEntries(usage.bySource.map((b) => [b.source, b.usage.input]));
          expect(bySource["llm.query"]).toBe(120);
          expect(bySource.turn).toBe(500);
          // the sub-call asks for its reply as structured output ({kind, value, error} around the type)
          expect(
            (sub.body as { output_config?: { format?: { type?: string } } }).output_config?.format?.type,
          ).toBe("json_schema");
          // a value of the wrong type: the provider asks once more with the problem, then the cell
          // gets an error result it can inspect
          const t2 = yield* rt.turn(s.id, { text: "Score it." });
          expect(t2.text).toBe("The score could not be computed.");
          expect(wireText(server.requests[4]!)).toContain("does not match the required output schema");
          const obs = wireText(server.requests[5]!);
          expect(obs).toMatch(/history\[\d+\]\.output\[0\] \(5 chars\):\nfalse/);
          expect(obs).toContain("llm.query: the model call failed:");
          expect(obs).toContain("does not match the required output schema");
        }),
      { plugins: [toolsPlugin({ root: workspace() })] },
    );
  });

  it("control.continue_as: a new agent frame with the seed as globals, checked in the graph and the next prompt", async () => {
    const server = await serve([
      cell(
        'scratch = "a lot of exploration"\nnums = [4, 5, 6]\nawait control.continue_as({ task: "Add up the seeded numbers.", seed: { nums: nums, label: "sum" } })?',
        "Switching to a fresh frame.",
      ),
      cell('total = 0\nfor n in nums { total = total + n }\nfinish format("{}={}", label, total)'),
    ]);
    await withRuntime(server, (rt) =>
      Effect.gen(function* () {
        const s = yield* rt.createSession({ model: "anthropic/claude-haiku-4-5", mode: "rlm" });
        const first = yield* rt.getSession(s.id);
        const t = yield* rt.turn(s.id, { text: "Explore, then sum." });
        expect(t.finalValue).toBe("sum=15");
        // the follow-up turn's prompt: only the task as history, the seed as bound variables
        const follow = server.requests[1]!;
        expect(wireText(follow)).not.toContain("a lot of exploration");
        expect(wireText(follow)).not.toContain("Explore, then sum.");
        expect(wireText(follow)).toContain("Add up the seeded numbers.");
        expect(wireTail(follow)).toContain("- `nums` = [4,5,6]");
        expect(wireTail(follow)).toContain('- `label` = "sum"');
        expect(wireTail(follow)).not.toContain("`scratch`");
        // the graph: two frames, linked by a frame node that carries the task and seed
        const after = yield* rt.getSession(s.id);
        expect(after.frameId).not.toBe(first.frameId);
        const nodes = yield* rt.chronological(s.id);
        const frames = [...new Set(nodes.map((n) => n.frameId))];
        expect(frames).toEqual([first.frameId, after.frameId]);
        const frameNode = nodes.find((n) => n.kind === "frame")!;
        expect(frameNode.payload).toMatchObject({
          frameId: after.frameId,
          previous: first.frameId,
          task: "Add up the seeded numbers.",
          seed: { nums: [4, 5, 6], label: "sum" },
          reason: "continue_as",
        });
        expect(nodes.filter((n) => n.frameId === after.frameId && n.kind === "message")).toHaveLength(3);
        // both frames' states are kept in the session record; the old one still has `scratch`
        const state = after.state.rlm as { frames: Record<string, { globals: Record<string, unknown> }> };
        expect(state.frames[first.frameId]!.globals.scratch).toBe("a lot of exploration");
        expect(state.frames[after.frameId]!.globals).toMatchObject({
          nums: [4, 5, 6],
          label: "sum",
          total: 15,
        });
        expect(state.frames[after.frameId]!.globals.scratch).toBeUndefined();
      }),
    );
  });
});
