// Compaction between the model rounds of one turn: a single turn of 60 tool rounds against a
// small window (the mock wire server through the real OpenAI SDK, a real SQLite file).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider } from "@lash/providers";
import { type RecordedRequest, startMockServer } from "@lash/providers/testing";
import { Effect, Layer, ManagedRuntime } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import {
  COMPACTION_SYSTEM,
  type CompactionPayload,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  SqliteStore,
  SUMMARY_PREFIX,
  type ToolDefinition,
} from "../src/index.ts";
import { MODEL, type Server } from "./compaction-support.ts";

const servers: Server[] = [];
const runtimes: { dispose(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.dispose();
  for (const s of servers.splice(0)) await s.close();
});

const WINDOW = 4_000;
const ROUNDS = 60;

interface ChatMessage {
  readonly role: string;
  readonly content: unknown;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly { readonly id: string }[];
}
const messages = (r: RecordedRequest) => (r.body as { messages: readonly ChatMessage[] }).messages;
const isSummariser = (r: RecordedRequest) =>
  messages(r).some((m) => m.role === "system" && m.content === COMPACTION_SYSTEM);
const text = (r: RecordedRequest) => JSON.stringify(messages(r));

/** What the tool returns in round `i`: about 100 tokens, recognisable. */
const output = (i: number) => `OUTPUT-${i}: ${"a line of the tool's long output ".repeat(12)}`;
const work: ToolDefinition = {
  name: "work",
  description: "Do one step of the work.",
  inputSchema: { type: "object", properties: { step: { type: "number" } } },
  readOnly: true,
  execute: (args) => {
    const i = (args as { step: number }).step;
    return Effect.succeed({ content: [{ type: "text", text: output(i) }], value: i });
  },
};

describe("compaction between the model rounds of a turn", () => {
  it("a turn of 60 tool rounds never sends a request over the window, keeps tool calls paired, and commits once", async () => {
    let summaries = 0;
    let calls = 0;
    const server = await startMockServer({
      responder: (r) => {
        if (isSummariser(r)) {
          summaries++;
          return { text: `SUMMARY #${summaries}: steps done so far, files a.ts, TODO the rest.` };
        }
        calls++;
        // the provider's count of the request (what calibrates the host's estimate): its JSON over 4
        const usage = { input: Math.ceil(r.rawBody.length / 4), output: 10 };
        return calls <= ROUNDS
          ? { toolCalls: [{ name: "work", arguments: { step: calls } }], usage }
          : { text: "all steps done", usage };
      },
    });
    servers.push(server);
    const db = join(mkdtempSync(join(tmpdir(), "lash-compact-mid-")), "lash.db");
    const provider = createProvider(MODEL, {
      baseUrl: server.baseUrl("openai-chat"),
      apiKey: "test",
      retry: false,
    });
    const rt = ManagedRuntime.make(
      LashRuntime.layer({
        compaction: { contextWindow: WINDOW },
        plugins: [{ name: "tools", tools: [work] }],
        maxTurns: 200,
      }).pipe(
        Layer.provide(
          Layer.mergeAll(
            SqliteStore.layer({ filename: db }),
            LlmProviders.single(provider),
            IdGenerator.Live,
            ModelCatalog.Empty,
          ),
        ),
      ),
    );
    runtimes.push(rt);
    const run = <A, E>(f: (rt: LashRuntime["Type"]) => Effect.Effect<A, E>) =>
      rt.runPromise(Effect.flatMap(LashRuntime, f));

    const session = await run((l) => l.createSession({ model: MODEL }));
    const result = await run((l) => l.turn(session.id, { text: "do all the steps" }));
    expect(result.outcome.type).toBe("finished");
    expect(result.text).toBe("all steps done");
    expect(result.toolCalls).toBe(ROUNDS);

    const model = server.requests.filter((r) => !isSummariser(r));
    expect(model).toHaveLength(ROUNDS + 1);
    // 1. no request over the window (the raw JSON body over 4 is stricter than the host's estimate)
    for (const r of server.requests) expect(r.rawBody.length / 4).toBeLessThanOrEqual(WINDOW);
    // without compaction the last request would hold every output: it would not fit
    expect(ROUNDS * output(1).length).toBeGreaterThan(WINDOW * 4);
    // 2. compacted several times within the turn, each summary merged into the next
    const summariser = server.requests.filter(isSummariser);
    expect(summariser.length).toBeGreaterThanOrEqual(2);
    for (let k = 1; k < summariser.length; k++) expect(text(summariser[k]!)).toContain(`SUMMARY #${k}:`);
    const last = model.at(-1)!;
    expect(text(last)).toContain(SUMMARY_PREFIX.slice(0, 20));
    expect(text(last)).not.toContain("OUTPUT-1:");
    expect(text(last)).toContain(`OUTPUT-${ROUNDS}:`);
    // 3. every request the model got pairs each tool result with a call before it
    for (const r of model) {
      const called = new Set<string>();
      for (const m of messages(r)) {
        for (const c of m.tool_calls ?? []) called.add(c.id);
        if (m.role === "tool") expect(called.has(m.tool_call_id!)).toBe(true);
      }
    }
    // 4. committed once: one turn, all its messages and the compaction nodes in the graph
    const after = await run((l) => l.getSession(session.id));
    expect(after.turnCount).toBe(1);
    const path = await run((l) => l.chronological(session.id));
    const compactions = path.filter(
      (n) => n.kind === "protocol" && (n.payload as { type?: string }).type === "compaction",
    );
    expect(compactions.reduce((n, c) => n + (c.payload as CompactionPayload).stages, 0)).toBe(
      summariser.length,
    );
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    expect(
      compactions.slice(1).every((n, i) => (n.payload as CompactionPayload).previous === compactions[i]!.id),
    ).toBe(true);
    const view = await run((l) => l.readView(session.id));
    expect(view.filter((m) => m.role === "tool")).toHaveLength(ROUNDS);

    // 5. the next turn starts from the last summary
    const before = server.requests.length;
    await run((l) => l.turn(session.id, { text: "and now?" }));
    const next = server.requests.slice(before).filter((r) => !isSummariser(r))[0]!;
    expect(text(next)).toContain((compactions.at(-1)!.payload as CompactionPayload).summary);
    expect(text(next)).not.toContain("OUTPUT-1:");
    expect(next.rawBody.length / 4).toBeLessThanOrEqual(WINDOW);
  }, 120_000);
});
