// A session whose provider reuses one tool-call id in every turn (local OpenAI-compatible
// servers do): the mock wire server answers each turn with a call `call_1` to the `note`
// tool, then a text reply. Each call gets a distinct result (every fourth one an error),
// so a consumer that pairs results by the provider's id shows the wrong result on
// every card but one. Used by the export, trace-viewer and TUI tests.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  defineTool,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  SessionStore,
  type SessionStoreShape,
  SqliteStore,
  ToolFailure,
  type TurnActivity,
  textOutput,
} from "@lash/core";
import { type MockLlmServer, type MockReply, mockProvider, startMockServer } from "@lash/providers/testing";
import type { LlmProvider, ModelInfo } from "@lash/sansio";
import { Effect, Layer, ManagedRuntime } from "effect";

export const REPEATED_ID = "call_1";
export const TURNS = 40;

/** What the k-th call (1-based) returns, and whether it fails. */
export const noteResult = (k: number) => (k % 4 === 0 ? `note ${k} failed: disk full` : `note ${k} saved`);
export const noteFails = (k: number) => k % 4 === 0;
export const prompt = (k: number) => `Write note ${k}.`;

/** The replies of `turns` turns, every call with the same id. */
export function repeatedIdReplies(turns = TURNS): MockReply[] {
  const out: MockReply[] = [];
  for (let k = 1; k <= turns; k++) {
    out.push({ toolCalls: [{ id: REPEATED_ID, name: "note", arguments: { n: k } }] });
    out.push({ text: `Done with note ${k}.` });
  }
  return out;
}

export const notePlugin: Plugin = {
  name: "notes",
  tools: [
    defineTool<{ n: number }>({
      name: "note",
      description: "Save note n.",
      inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      run: async ({ n }) => {
        if (noteFails(n)) throw new ToolFailure({ class: "execution", message: noteResult(n) });
        return textOutput(noteResult(n));
      },
    }),
  ],
};

export const modelInfo: ModelInfo = {
  id: "openai-compatible/mock-model",
  contextWindow: 100_000,
  maxOutput: 8000,
  reasoning: false,
  images: false,
  caching: false,
};

/** The mock wire server (OpenAI Chat Completions, the format local servers speak) with the replies queued. */
export async function startRepeatedIdServer(
  turns = TURNS,
): Promise<{ server: MockLlmServer; provider: LlmProvider }> {
  const server = await startMockServer({ replies: repeatedIdReplies(turns) });
  return { server, provider: mockProvider(server, "openai-chat", { info: modelInfo }) };
}

export interface RepeatedIdSession {
  readonly sessionId: string;
  readonly store: SessionStoreShape;
  readonly server: MockLlmServer;
  readonly close: () => Promise<void>;
}

/** Run the whole session on a real SQLite store over real HTTP; `onEvent` sees every activity event. */
export async function runRepeatedIdSession(
  onEvent?: (e: TurnActivity) => void,
  turns = TURNS,
): Promise<RepeatedIdSession> {
  const dir = mkdtempSync(join(tmpdir(), "lash-repeated-ids-"));
  const { server, provider } = await startRepeatedIdServer(turns);
  const layer = LashRuntime.layer({ plugins: [notePlugin] }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SqliteStore.layer({ filename: join(dir, "lash.db") }),
        LlmProviders.single(provider),
        IdGenerator.Live,
        ModelCatalog.fromEntries([modelInfo]),
      ),
    ),
  );
  const runtime = ManagedRuntime.make(layer);
  const [rt, store] = await runtime.runPromise(Effect.all([LashRuntime, SessionStore]));
  const session = await runtime.runPromise(rt.createSession({ model: modelInfo.id, title: "Forty notes" }));
  for (let k = 1; k <= turns; k++)
    await runtime.runPromise(rt.turn(session.id, { text: prompt(k) }, onEvent ? { onEvent } : {}));
  return {
    sessionId: session.id,
    store,
    server,
    close: async () => {
      await runtime.dispose();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
