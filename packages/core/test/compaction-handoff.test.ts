// Handoff in standard mode (`compaction.strategy: "handoff"`): a small configured window makes a
// standard session hand off to a successor session whose first message is the summary. The mock
// wire server (the real OpenAI SDK) is the model; the store is a real SQLite file.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RecordedRequest, startMockServer } from "@lash/providers/testing";
import { afterEach, describe, expect, it } from "vitest";
import { COMPACTION_SYSTEM, type CompactionOptions, HANDOFF_PREFIX, SUMMARY_PREFIX } from "../src/index.ts";
import { compactionRuntime, MODEL, type Server } from "./compaction-support.ts";

const servers: Server[] = [];
const runtimes: { dispose(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.dispose();
  for (const s of servers.splice(0)) await s.close();
});

const WINDOW = 4_000;

interface ChatBody {
  readonly messages: readonly { readonly role: string; readonly content: unknown }[];
}
const body = (r: RecordedRequest) => r.body as ChatBody;
const isSummariser = (r: RecordedRequest) =>
  body(r).messages.some((m) => m.role === "system" && m.content === COMPACTION_SYSTEM);
const allText = (r: RecordedRequest) =>
  body(r)
    .messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");

async function mock() {
  let summaries = 0;
  let answers = 0;
  const server = await startMockServer({
    responder: (r) => {
      if (isSummariser(r)) {
        summaries++;
        return {
          text: `SUMMARY #${summaries}: goals kept, files a.ts, TODO finish.`,
          usage: { input: 900, output: 20 },
        };
      }
      answers++;
      return { text: `answer ${answers}: ${"words of the answer ".repeat(12)}` };
    },
  });
  servers.push(server);
  return server;
}

const runtime = (server: Server, db: string, compaction: CompactionOptions) =>
  compactionRuntime(server, db, compaction, runtimes);

const prompt = (i: number) =>
  `turn ${i}: please look at item ${i} and ${"keep the details in mind ".repeat(8)}`;
const handoffNodes = (nodes: readonly { kind: string; payload: unknown }[]) =>
  nodes.filter((n) => n.kind === "protocol" && (n.payload as { type?: string }).type === "handoff");

describe("compaction strategy handoff", () => {
  it("a standard session hands off to a linked successor whose first request holds the summary, not the old messages", async () => {
    const server = await mock();
    const db = join(mkdtempSync(join(tmpdir(), "lash-handoff-")), "lash.db");
    const run = runtime(server, db, { contextWindow: WINDOW, strategy: "handoff" });
    const first = await run((rt) => rt.createSession({ model: MODEL, cwd: "/project", title: "long work" }));
    const current = first.id;
    let handoff: { from: string; to: string } | undefined;
    let before = 0;
    for (let i = 1; i <= 60 && !handoff; i++) {
      before = server.requests.length;
      const r = await run((rt) => rt.turn(current, { text: prompt(i) }));
      expect(r.outcome.type).toBe("finished");
      if (r.handoff) {
        handoff = r.handoff;
        expect(r.sessionId).toBe(r.handoff.to);
        expect(r.text).toMatch(/^answer \d+:/);
      }
    }
    expect(handoff?.from).toBe(first.id);
    const to = handoff!.to;
    expect(to).not.toBe(first.id);

    // the turn's requests: the summariser's, then the successor's first model request
    const after = server.requests.slice(before);
    const summariser = after.filter(isSummariser);
    expect(summariser.length).toBeGreaterThanOrEqual(1);
    const firstRequest = after.find((r) => !isSummariser(r))!;
    const text = allText(firstRequest);
    expect(text).toContain(HANDOFF_PREFIX(first.id));
    expect(text).toContain(`SUMMARY #${summariser.length}:`);
    expect(text).not.toContain(prompt(1)); // the old messages stay behind
    expect(text).not.toContain(SUMMARY_PREFIX); // no in-place summary: a fresh window
    expect(text).toContain("turn "); // the triggering turn's input went on in the successor
    expect(body(firstRequest).messages.filter((m) => m.role === "user").length).toBe(2);

    // linked in both graphs
    const old = await run((rt) => rt.chronological(first.id));
    const toLink = handoffNodes(old);
    expect(toLink.length).toBe(1);
    expect(toLink[0]!.payload).toMatchObject({ type: "handoff", to });
    const compaction = old.find(
      (n) => n.id === (toLink[0]!.payload as { compactionNodeId: string }).compactionNodeId,
    );
    expect(compaction?.payload).toMatchObject({ type: "compaction" });
    const succ = await run((rt) => rt.chronological(to));
    expect(succ[0]!.payload).toMatchObject({ type: "handoff", from: first.id });
    expect(succ[1]!.kind).toBe("message");
    expect(JSON.stringify(succ[1]!.payload)).toContain(`SUMMARY #${summariser.length}:`);
    // the old session keeps its whole history; the triggering turn's input is in the successor only
    const oldView = await run((rt) => rt.readView(first.id));
    const succView = await run((rt) => rt.readView(to));
    const lastPrompt = succView.find(
      (m) => m.role === "user" && JSON.stringify(m).includes("please look at item"),
    );
    expect(lastPrompt).toBeDefined();
    expect(oldView.some((m) => JSON.stringify(m) === JSON.stringify(lastPrompt))).toBe(false);
    expect(oldView.some((m) => JSON.stringify(m).includes(prompt(1)))).toBe(true);

    // the successor inherits the session's settings and is the newest of the directory
    const s = await run((rt) => rt.getSession(to));
    expect(s).toMatchObject({ model: MODEL, mode: "standard", cwd: "/project", title: "long work" });
    const o = await run((rt) => rt.getSession(first.id));
    expect(s.updatedAt).toBeGreaterThanOrEqual(o.updatedAt);

    // the next turn in the successor sends its history: the summary and the turns after it
    const next = await run((rt) => rt.turn(to, { text: "and one more" }));
    expect(next.handoff).toBeUndefined();
    const last = server.requests.at(-1)!;
    expect(allText(last)).toContain(HANDOFF_PREFIX(first.id));
    expect(allText(last)).toContain("and one more");
    expect(allText(last)).not.toContain(prompt(1));
  });

  it("runtime.compact with handoff names the successor; the default strategy keeps the summary in place", async () => {
    const server = await mock();
    const db = join(mkdtempSync(join(tmpdir(), "lash-handoff-")), "lash.db");
    const run = runtime(server, db, { contextWindow: 100_000, strategy: "handoff" });
    const s = await run((rt) => rt.createSession({ model: MODEL }));
    await run((rt) => rt.turn(s.id, { text: "hello there" }));
    const r = await run((rt) => rt.compact(s.id));
    expect(r?.successor).toBeDefined();
    const succ = await run((rt) => rt.chronological(r!.successor!));
    expect(succ[0]!.payload).toMatchObject({ type: "handoff", from: s.id, compactionNodeId: r!.nodeId });
    const old = await run((rt) => rt.chronological(s.id));
    expect(handoffNodes(old).map((n) => (n.payload as { to: string }).to)).toEqual([r!.successor]);

    // the default strategy is summary: no successor
    const plain = runtime(server, db, { contextWindow: 100_000 });
    const t = await plain((rt) => rt.createSession({ model: MODEL }));
    await plain((rt) => rt.turn(t.id, { text: "hello again" }));
    const c = await plain((rt) => rt.compact(t.id));
    expect(c?.successor).toBeUndefined();
    expect(handoffNodes(await plain((rt) => rt.chronological(t.id)))).toEqual([]);
  });

  it("a turn moved into its successor is not compacted again, even when the system prompt alone is over the threshold", async () => {
    const server = await mock();
    const db = join(mkdtempSync(join(tmpdir(), "lash-handoff-")), "lash.db");
    const run = runtime(server, db, { contextWindow: WINDOW, strategy: "handoff" });
    const systemPrompt = "a very long standing instruction. ".repeat(420); // ~3,500 tokens: over 80 % of 4,000
    const s = await run((rt) => rt.createSession({ model: MODEL, systemPrompt }));
    const one = await run((rt) => rt.turn(s.id, { text: "first" }));
    expect(one.handoff).toBeUndefined(); // nothing to compact yet
    const before = server.requests.length;
    const two = await run((rt) => rt.turn(s.id, { text: "second" }));
    expect(two.handoff).toEqual({ from: s.id, to: two.sessionId });
    expect(two.outcome.type).toBe("finished");
    const requests = server.requests.slice(before);
    expect(requests.filter(isSummariser)).toHaveLength(1);
    expect(requests.filter((r) => !isSummariser(r))).toHaveLength(1);
    // one successor, carrying the system prompt
    const sessions = await run((rt) => rt.listSessions({}));
    expect(sessions.map((x) => x.id).sort()).toEqual([s.id, two.sessionId].sort());
    expect((await run((rt) => rt.getSession(two.sessionId))).systemPrompt).toBe(systemPrompt);
  });
});
