// A real session for export and trace tests: the runtime, the scripted provider
// (through the providers' retry layer), the built-in tools on a temp workspace,
// a simulated subagent tool (a real child session, linked to the parent's tool
// call, announced with the `subagents` plugin events the real package will
// emit), two branches, a failing tool call, and an RLM session whose code-cell
// turn is committed directly to the store (the RLM driver is not built yet).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  defineTool,
  IdGenerator,
  LashRuntime,
  type LashRuntimeShape,
  LlmProviders,
  ModelCatalog,
  makeMemoryStore,
  type Plugin,
  SessionStore,
  type SessionStoreShape,
  type TurnActivity,
  textOutput,
} from "@lash/core";
import { withRetry } from "@lash/providers";
import { ScriptedProvider, type ScriptStep } from "@lash/providers/testing";
import type { Message, ModelInfo } from "@lash/sansio";
import { toolsPlugin } from "@lash/tools";
import { Effect, Layer, ManagedRuntime } from "effect";

export const MODEL = "anthropic/claude-sonnet-4-5";

export const modelInfo: ModelInfo = {
  id: MODEL,
  contextWindow: 200_000,
  maxOutput: 64_000,
  reasoning: true,
  images: true,
  caching: true,
  pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
};

export interface Sample {
  readonly store: SessionStoreShape;
  readonly runtime: LashRuntimeShape;
  readonly run: <A, E>(e: Effect.Effect<A, E>) => Promise<A>;
  readonly sessionId: string;
  readonly childSessionId: string;
  readonly rlmSessionId: string;
  /** Leaf of the first branch (the one that is not active at the end). */
  readonly otherLeaf: string;
  readonly workspace: string;
  readonly close: () => Promise<void>;
}

const script = (): ScriptStep[] => [
  // turn 1: a server error first (retried by the retry layer)
  { error: { code: "server", message: "upstream hiccup" } },
  {
    reasoning: "The user wants the greeting fixed. I should look at hello.txt first.",
    text: "I'll read the file first.",
    toolCalls: [{ id: "call_read_1", name: "read_file", arguments: { path: "hello.txt" } }],
    usage: { input: 1200, output: 60, reasoning: 20 },
  },
  {
    toolCalls: [
      {
        id: "call_edit_1",
        name: "edit",
        arguments: { path: "hello.txt", edits: [{ oldText: "Helo, world", newText: "Hello, world" }] },
      },
    ],
    usage: { input: 1400, output: 40, cacheRead: 1000 },
  },
  {
    text: "Fixed the typo in `hello.txt`:\n\n- **Helo** → **Hello**\n\nThe file now reads:\n\n```text\nHello, world!\n```",
    usage: { input: 1600, output: 50, cacheRead: 1200 },
  },
  // turn 2: a subagent, then a failing read
  {
    text: "Let me ask a helper to double-check.",
    toolCalls: [
      { id: "call_agent_1", name: "spawn_agent", arguments: { task: "Check the spelling in hello.txt" } },
    ],
    usage: { input: 1800, output: 30 },
  },
  // … the child's two calls
  {
    toolCalls: [{ id: "call_child_read", name: "read_file", arguments: { path: "hello.txt" } }],
    usage: { input: 300, output: 20 },
  },
  {
    text: "The file reads **Hello, world!** and the spelling is correct.",
    usage: { input: 400, output: 25 },
  },
  // … back in the parent
  {
    toolCalls: [{ id: "call_read_missing", name: "read_file", arguments: { path: "missing.txt" } }],
    usage: { input: 2000, output: 20 },
  },
  {
    text: "The helper confirmed the spelling. (There is no `missing.txt`.)",
    usage: { input: 2100, output: 30 },
  },
  // turn 3, on a branch from the end of turn 1
  { text: "Done — added an exclamation mark as well. ✅", usage: { input: 1700, output: 15 } },
];

/** Build the sample; `onEvent` receives every activity event of every turn (parent and child). */
export async function buildSample(
  onEvent?: (e: TurnActivity) => void,
  plugins: readonly Plugin[] = [],
): Promise<Sample> {
  const workspace = mkdtempSync(join(tmpdir(), "lash-export-ws-"));
  writeFileSync(join(workspace, "hello.txt"), "Helo, world!\n");
  const store = await Effect.runPromise(makeMemoryStore());
  const provider = withRetry(new ScriptedProvider(script(), { name: "anthropic" }), {
    baseDelayMs: 1,
    maxDelayMs: 1,
    jitter: 0,
  });
  let childId = "";
  // the child's turn runs on the runtime built below (with `onEvent`, which the host's
  // `children` capability does not take); the session is created through the capability
  let rt: LashRuntimeShape | undefined;
  const spawnAgent = defineTool<{ task: string }>({
    name: "spawn_agent",
    description: "Run a helper agent on a task (simulated subagent for tests).",
    inputSchema: {
      type: "object",
      properties: { task: { type: "string" } },
      required: ["task"],
      additionalProperties: false,
    },
    family: "agent",
    run: async ({ task }, ctx) => {
      const child = await Effect.runPromise(
        ctx.host!.sessions.create({
          model: MODEL,
          title: task,
          parentLink: { sessionId: ctx.sessionId, callId: ctx.callId, depth: 1 },
        }),
      );
      childId = child.id;
      ctx.host!.emit({
        type: "plugin",
        plugin: "subagents",
        name: "childStarted",
        data: { childSessionId: child.id, callId: ctx.callId, task },
      });
      const result = await Effect.runPromise(rt!.turn(child.id, { text: task }, onEvent ? { onEvent } : {}));
      ctx.host!.emit({
        type: "plugin",
        plugin: "subagents",
        name: "childFinished",
        data: { childSessionId: child.id, callId: ctx.callId, outcome: result.outcome.type },
      });
      return textOutput(result.text, { details: { childSessionId: child.id } });
    },
  });
  const layer = LashRuntime.layer({
    plugins: [toolsPlugin({ root: workspace }), { name: "agents", tools: [spawnAgent] }, ...plugins],
  }).pipe(
    Layer.provide(
      Layer.mergeAll(
        Layer.succeed(SessionStore, store),
        LlmProviders.single(provider),
        IdGenerator.seeded("sample"),
        ModelCatalog.fromEntries([modelInfo]),
      ),
    ),
  );
  const managed = ManagedRuntime.make(layer);
  const runtime = await managed.runPromise(LashRuntime);
  rt = runtime;
  const run = <A, E>(e: Effect.Effect<A, E>) => managed.runPromise(e);
  const opts = onEvent ? { onEvent } : {};

  const session = await run(
    runtime.createSession({ model: MODEL, title: "Fix the greeting", cwd: workspace }),
  );
  await run(runtime.turn(session.id, { text: "Please fix the greeting in hello.txt." }, opts));
  const afterTurn1 = (await run(runtime.getSession(session.id))).leafId!;
  await run(runtime.turn(session.id, { text: "Ask a helper to double-check the file." }, opts));
  const otherLeaf = (await run(runtime.getSession(session.id))).leafId!;
  await run(runtime.branch(session.id, afterTurn1));
  await run(runtime.turn(session.id, { text: "Also add an exclamation mark, please." }, opts));

  // An RLM session: a code cell and its printed output, committed as the RLM mode will store them.
  const rlmId = "ses_sample_rlm";
  await Effect.runPromise(
    store.createSession({
      id: rlmId,
      title: "Count the words",
      model: MODEL,
      mode: "rlm",
      createdAt: 1_700_000_000_000,
      updatedAt: 1_700_000_000_000,
      leafId: null,
      headRevision: 0,
      turnCount: 0,
      frameId: "frame_rlm",
      state: {},
    }),
  );
  const msgs: Message[] = [
    { id: "rlm.u1", role: "user", parts: [{ type: "text", text: "How many words are in notes.md?" }] },
    {
      id: "rlm.a1",
      role: "assistant",
      parts: [
        {
          type: "code",
          language: "lashlang",
          source:
            'let text = await files.read({ path: "notes.md" })?\nlet words = split(text.content, " ")\nprint("words: " + str(len(words)))\nfinish(len(words))',
        },
      ],
    },
    { id: "rlm.o1", role: "user", parts: [{ type: "output", text: "words: 42" }] },
    { id: "rlm.a2", role: "assistant", parts: [{ type: "text", text: "There are **42** words." }] },
  ];
  let parent: string | null = null;
  const nodes = msgs.map((m, i) => {
    const n = {
      id: m.id,
      sessionId: rlmId,
      parentId: parent,
      frameId: "frame_rlm",
      kind: "message" as const,
      turnId: "turn_rlm_1",
      payload: m,
      createdAt: 1_700_000_000_000 + i * 1000,
    };
    parent = m.id;
    return n;
  });
  await Effect.runPromise(
    store.commit({
      sessionId: rlmId,
      turnId: "turn_rlm_1",
      hash: "h-rlm-1",
      expectedRevision: 0,
      nodes,
      leafId: parent,
      usage: [
        {
          turnId: "turn_rlm_1",
          source: "turn",
          model: MODEL,
          usage: { input: 900, output: 80 },
          costUsd: 0.0039,
        },
      ],
      updatedAt: 1_700_000_004_000,
    }),
  );

  return {
    store,
    runtime,
    run,
    sessionId: session.id,
    childSessionId: childId,
    rlmSessionId: rlmId,
    otherLeaf,
    workspace,
    close: () => managed.dispose(),
  };
}
