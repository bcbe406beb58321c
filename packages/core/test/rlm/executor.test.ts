import { type LlmEvent, type LlmRequest, sha256BytesHex } from "@lash/sansio";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { defineTool, type Plugin, rlmMode, rlmSessionState, textOutput, withRlm } from "../../src/index.ts";
import { say, scriptedProvider, withRuntime } from "../support.ts";

const cell = (code: string, prose = ""): LlmEvent[] =>
  say(`${prose ? `${prose}\n` : ""}<lashlang>\n${code}\n</lashlang>`);

const files: Record<string, string> = { "a.txt": "alpha\nbeta\ngamma", "b.txt": "one\ntwo" };
const calls: string[] = [];
const tools: Plugin = {
  name: "test-tools",
  tools: [
    defineTool<{ path: string }>({
      name: "read_text",
      description: "Read a text file.",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
        additionalProperties: false,
      },
      readOnly: true,
      binding: { module: "files", operation: "read", returns: "{path, content}" },
      run: async ({ path }) => {
        calls.push(path);
        const content = files[path];
        if (content === undefined) throw new Error(`${path} does not exist`);
        return textOutput(content, { value: { path, content } });
      },
    }),
  ],
};

const tail = (r: LlmRequest) => {
  const last = r.messages[r.messages.length - 1]!;
  return last.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
};
const all = (r: LlmRequest) =>
  [r.system ?? "", ...r.messages.flatMap((m) => m.parts.map((p) => (p.type === "text" ? p.text : "")))].join(
    "\n",
  );

describe("rlm executor in a LashRuntime", () => {
  it("runs cells through tool dispatch, keeps variables across iterations and turns, binds history", async () => {
    calls.length = 0;
    const rlm = rlmMode();
    const provider = scriptedProvider([
      cell(
        'a = (await files.read({ path: "a.txt" })?).content\nlines = split(a, "\\n")\nprint len(lines)',
        "Reading.",
      ),
      cell("finish lines[1]"),
      // second turn: variables survive the commit; history[N] is readable
      cell("print history[0].content\nprint len(lines)"),
      cell('r = await files.read({ path: "missing.txt" })\nprint r.ok\nprint r.error'),
      say("Done: 3 lines."),
    ]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const t1 = yield* rt.turn(s.id, { text: "How many lines in a.txt?" });
            expect(t1.outcome).toEqual({ type: "finished", finish: { kind: "finalValue", value: "beta" } });
            expect(t1.finalValue).toBe("beta");
            expect(calls).toEqual(["a.txt"]);
            // the model saw the catalog, and the first observation
            expect(provider.requests[0]!.system).toContain(
              "### files.read({ path: str }) -> {path, content}",
            );
            expect(provider.requests[0]!.system).toContain("### llm.query(");
            expect(provider.requests[0]!.tools).toEqual([]);
            expect(all(provider.requests[1]!)).toContain("history[1].output[0] (1 chars):\n3");
            expect(tail(provider.requests[1]!)).toContain('- `a` = "alpha\\nbeta\\ngamma"');
            // the state is in the session record
            const rec = yield* rt.getSession(s.id);
            expect(rec.state.rlm).toMatchObject({
              version: 1,
              frames: { [rec.frameId]: { globals: { lines: ["alpha", "beta", "gamma"] } } },
            });

            const t2 = yield* rt.turn(s.id, { text: "And now?" });
            expect(t2.text).toBe("Done: 3 lines.");
            const obs = all(provider.requests[3]!);
            expect(obs).toContain("history[4].output[0] (24 chars):\nHow many lines in a.txt?");
            expect(obs).toContain("history[4].output[1] (1 chars):\n3");
            const last = all(provider.requests[4]!);
            expect(last).toContain("history[5].output[0] (5 chars):\nfalse");
            expect(last).toContain("missing.txt does not exist");
            // the graph holds the steps: code parts, tool records, outputs
            const view = yield* rt.readView(s.id);
            expect(view.map((m) => m.role)).toEqual([
              "user",
              "assistant",
              "tool",
              "assistant",
              "tool",
              "user",
              "assistant",
              "tool",
              "assistant",
              "tool",
              "assistant",
            ]);
            expect(view[2]!.parts.map((p) => p.type)).toEqual(["toolResult", "output"]);
            expect(view[2]!.parts[0]).toMatchObject({
              name: "read_text",
              isError: false,
              value: { path: "a.txt" },
            });
          }),
        withRlm({ plugins: [tools] }, rlm),
      ),
    );
  });

  it("deleteSession drops the session's live RLM state; another session starts empty", async () => {
    const rlm = rlmMode();
    const provider = scriptedProvider([cell("secret = 41 + 1\nfinish secret"), cell("print secret")]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const t1 = yield* rt.turn(s.id, { text: "Keep a value." });
            expect(t1.finalValue).toBe(42);
            expect(rlm.session(s.id)?.frame().state.snapshotJson().globals).toMatchObject({ secret: 42 });
            yield* rt.deleteSession(s.id);
            expect(rlm.session(s.id)).toBeUndefined();
            // a new session does not see the deleted one's variables
            const other = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            yield* rt.turn(other.id, { text: "What is secret?" }).pipe(Effect.ignore);
            const observation = provider.requests
              .slice(1)
              .flatMap((r) =>
                r.messages.flatMap((m) => m.parts.map((p) => (p.type === "text" ? p.text : ""))),
              )
              .join("\n");
            expect(observation).not.toContain("42");
            expect(rlm.session(other.id)?.frame().state.snapshotJson().globals ?? {}).not.toHaveProperty(
              "secret",
            );
          }),
        withRlm({ plugins: [tools] }, rlm),
      ),
    );
  });

  it("keeps printed output whole in the graph while the prompt shows a preview", async () => {
    const big = "x".repeat(60_000);
    const provider = scriptedProvider([cell('print join(["x" for i in range(60000)], "")'), say("ok")]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            yield* rt.turn(s.id, { text: "print a lot" });
            const view = yield* rt.readView(s.id);
            expect(view[2]!.parts[0]).toEqual({ type: "output", text: big });
            const prompt = all(provider.requests[1]!);
            expect(prompt).toContain(
              "history[1].output[0] (60000 chars — preview only, full value retained; re-print history[1].output[0] for the rest):",
            );
            expect(prompt.length).toBeLessThan(60_000);
          }),
        withRlm({ plugins: [tools] }),
      ),
    );
  });

  it("finishRequired from the session record: schema violation, repair, fixed value", async () => {
    const schema = {
      type: "object",
      properties: { n: { type: "integer" } },
      required: ["n"],
      additionalProperties: false,
    };
    const provider = scriptedProvider([cell('finish { n: "3" }'), cell("finish { n: 3 }")]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({
              model: "test/model",
              mode: "rlm",
              state: rlmSessionState({ termination: { kind: "finishRequired", schema } }),
            });
            const t = yield* rt.turn(s.id, { text: "n?" });
            expect(t.outcome).toEqual({ type: "finished", finish: { kind: "finalValue", value: { n: 3 } } });
            expect(tail(provider.requests[0]!)).toContain("=== REQUIRED OUTPUT ===");
            expect(all(provider.requests[1]!)).toContain(
              "The `finish` value didn't match the required output schema:",
            );
            expect((yield* rt.getSession(s.id)).state.rlm).toMatchObject({
              options: { termination: { kind: "finishRequired" } },
            });
          }),
        withRlm({ plugins: [tools] }),
      ),
    );
  });

  it("check errors and runtime errors are observations; assignments before a runtime error stay", async () => {
    const provider = scriptedProvider([
      cell('read_text({ path: "a.txt" })'),
      cell("x = 1\nprint nope"),
      cell("finish x"),
    ]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const t = yield* rt.turn(s.id, { text: "go" });
            expect(all(provider.requests[1]!)).toMatch(/Error:\n.*bare tool call|Error:\n.*module/);
            expect(all(provider.requests[2]!)).toContain("unknown name `nope`");
            expect(t.finalValue).toBe(1);
          }),
        withRlm({ plugins: [tools] }),
      ),
    );
  });

  it("a cell over its memory budget is an observation the model reads; its assignments are discarded", async () => {
    const provider = scriptedProvider([
      cell("x = 1"),
      // 8 MiB of budget: the second million-item range goes over it
      cell("x = 2\nxs = []\nwhile true {\n  xs = push(xs, range(1000000))\n}"),
      cell("finish { x: x, has_xs: xs != null }"),
    ]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const t = yield* rt.turn(s.id, { text: "go" });
            const obs = all(provider.requests[2]!);
            expect(obs).toContain(
              "memory budget exceeded: the cell allocated more than 8 MiB of values (budget 8 MiB)",
            );
            expect(obs).toContain("xs = push(xs, range(1000000))");
            // the third cell ran: `x` kept its value from before the failed cell, `xs` was never stored
            expect(t.outcome.type).toBe("finished");
            expect(all(provider.requests[3] ?? provider.requests[2]!)).not.toContain("FATAL");
            const rec = yield* rt.getSession(s.id);
            const globals = (rec.state.rlm as { frames: Record<string, { globals: object }> }).frames[
              rec.frameId
            ]!.globals;
            expect(globals).not.toHaveProperty("xs");
            expect(globals).toMatchObject({ x: 1 });
          }),
        withRlm({ plugins: [tools] }, rlmMode({ memoryBudget: 8 * 1024 * 1024 })),
      ),
    );
  });
});

describe("rlm images and prompt examples", () => {
  it("an image from an operation becomes an image value; printing it attaches the image to the observation", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64");
    const shot: Plugin = {
      name: "shot",
      tools: [
        defineTool<Record<string, never>>({
          name: "screenshot",
          description: "Take a screenshot.",
          inputSchema: { type: "object", properties: {}, additionalProperties: false },
          binding: { module: "screen", operation: "shot", returns: "{path, image}" },
          run: async () => ({
            content: [
              { type: "text", text: "shot.png: image/png" },
              { type: "attachment", mediaType: "image/png", data: png, name: "shot.png" },
            ],
            value: { path: "shot.png" },
          }),
        }),
      ],
    };
    const provider = scriptedProvider([
      cell("s = await screen.shot({})?\nprint s.image.mime\nprint s.image"),
      cell("print s.image.size"),
      say("A tiny PNG."),
    ]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const ses = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            yield* rt.turn(ses.id, { text: "look" });
            const view = yield* rt.readView(ses.id);
            const obs = view[2]!;
            expect(
              obs.parts.filter((p) => p.type === "output").map((p) => (p as { text: string }).text)[0],
            ).toBe("image/png");
            const attachment = obs.parts.find((p) => p.type === "attachment");
            // the graph keeps the image as an artifact reference (issue 20), its bytes stored once
            expect(attachment).toMatchObject({ type: "attachment", mediaType: "image/png" });
            expect(attachment).not.toHaveProperty("data");
            expect((attachment as { ref: string }).ref).toBe(
              `artifact:${sha256BytesHex(new Uint8Array(Buffer.from(png, "base64")))}`,
            );
            // the next request re-sends the image and lists it
            const req = provider.requests[1]!;
            const sent = req.messages.flatMap((m) => m.parts).filter((p) => p.type === "attachment");
            expect(sent).toHaveLength(1);
            expect(all(req)).toMatch(
              /Images:\n- history\[1\]\.images\[0\]: \{"id":"img:[^"]+","media_type":"image\/png"/,
            );
            expect(all(provider.requests[2]!)).toContain("history[2].output[0] (2 chars):\n16");
          }),
        withRlm({ plugins: [shot] }),
      ),
    );
  });

  it("the example cell of the execution section passes the checker against the file tools' surface", async () => {
    const { checkCell } = await import("@lash/lashlang");
    const { extractCell, renderExecutionSection } = await import("@lash/sansio/internal");
    const { hostSurface } = await import("../../src/internal.ts");
    const section = renderExecutionSection({ hasOperations: true });
    const example = extractCell(section.slice(section.indexOf("<lashlang>")));
    expect(example.kind).toBe("cell");
    const surface = hostSurface([
      {
        name: "grep",
        module: "files",
        operation: "grep",
        description: "",
        inputSchema: {
          type: "object",
          properties: { pattern: { type: "string" }, path: { type: "string" } },
        },
      },
    ]);
    expect(checkCell((example as { code: string }).code, { surface })).toMatchObject({ ok: true });
  });
});

describe("rlm cancellation", () => {
  it("cancelling during a cell's loop of operations stops the loop and the turn", async () => {
    let runs = 0;
    let started: () => void = () => {};
    const first = new Promise<void>((resolve) => {
      started = resolve;
    });
    const step: Plugin = {
      name: "step",
      tools: [
        defineTool<{ i: number }>({
          name: "step",
          description: "One step; waits until cancelled.",
          inputSchema: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
          binding: { module: "work", operation: "step" },
          run: (_args, ctx) =>
            new Promise((resolve) => {
              runs++;
              started();
              ctx.signal.addEventListener("abort", () => resolve(textOutput("aborted")));
            }),
        }),
      ],
    };
    const provider = scriptedProvider([cell("for i in range(50) { await work.step({ i: i }) }\nfinish i")]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const ses = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const handle = yield* rt.startTurn(ses.id, { text: "loop" });
            yield* Effect.promise(() => first);
            yield* handle.cancel;
            const result = yield* handle.result;
            expect(result.outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
            expect(runs).toBe(1);
            expect(provider.requests).toHaveLength(1);
          }),
        withRlm({ plugins: [step] }),
      ),
    );
  });
});

describe("rlm through the promise facade", () => {
  it("createLash(withRlm({...})) runs an rlm session in one line", async () => {
    const { createLash, MemoryStore } = await import("../../src/index.ts");
    const { testModel } = await import("../support.ts");
    const provider = scriptedProvider([cell('finish "hi from rlm"')]);
    const lash = createLash(withRlm({ store: MemoryStore, provider, catalog: [testModel] }));
    try {
      const session = await lash.createSession({ model: "test/model", mode: "rlm" });
      const result = await session.turn("hello").result;
      expect(result.finalValue).toBe("hi from rlm");
      expect(provider.requests[0]!.system).toContain("# Execution");
    } finally {
      await lash.close();
    }
  });
});

describe("llm.query asks for structured output (issue 22)", () => {
  it("the sub-call carries the {kind, value, error} reply schema with the output type, and its value comes back", async () => {
    const provider = scriptedProvider([
      cell('r = await llm.query({ task: "How many files?", output: { n: "int" } })?\nfinish r.n'),
      say('{"kind": "value", "value": {"n": 3}, "error": null}'),
    ]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const t = yield* rt.turn(s.id, { text: "count" });
            expect(t.finalValue).toBe(3);
            const sub = provider.requests[1]!;
            expect(sub.output).toEqual({
              name: "llm_query_reply",
              schema: {
                type: "object",
                properties: {
                  kind: { type: "string", enum: ["value", "error"] },
                  value: {
                    anyOf: [
                      {
                        type: "object",
                        properties: { n: { type: "integer" } },
                        required: ["n"],
                        additionalProperties: false,
                      },
                      { type: "null" },
                    ],
                  },
                  error: { anyOf: [{ type: "string" }, { type: "null" }] },
                },
                required: ["kind", "value", "error"],
                additionalProperties: false,
              },
            });
            // the session's own requests ask for no structured output
            expect(provider.requests[0]!.output).toBeUndefined();
          }),
        withRlm({}, rlmMode()),
      ),
    );
  });
});
