// Context compaction end to end: a long scripted session against the mock wire server
// (the real OpenAI SDK), a small configured window, a real SQLite file.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RecordedRequest, startMockServer } from "@lash/providers/testing";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import {
  COMPACTION_SYSTEM,
  type CompactionOptions,
  type CompactionPayload,
  SUMMARY_PREFIX,
} from "../src/index.ts";
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
const userText = (r: RecordedRequest) =>
  body(r)
    .messages.filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");

/** The mock: a numbered summary for a summariser request, a ~60-token answer otherwise. */
async function mock() {
  let summaries = 0;
  let answers = 0;
  const server = await startMockServer({
    responder: (r) => {
      if (isSummariser(r)) {
        summaries++;
        return {
          text: `SUMMARY #${summaries}: goals kept, decisions kept, files a.ts b.ts, TODO finish.`,
          usage: { input: 900, output: 30 },
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

describe("context compaction", () => {
  it("a 400-turn session never sends a request over the window, compacts several times, and merges the previous summary (acceptance 1, 3)", async () => {
    const server = await mock();
    const db = join(mkdtempSync(join(tmpdir(), "lash-compact-")), "lash.db");
    const run = runtime(server, db, { contextWindow: WINDOW });
    const session = await run((rt) => rt.createSession({ model: MODEL }));
    for (let i = 1; i <= 400; i++) {
      const r = await run((rt) => rt.turn(session.id, { text: prompt(i) }));
      expect(r.outcome.type).toBe("finished");
    }

    // 1. no request over the window: the raw JSON body over 4 is a stricter count than the host's estimate
    for (const r of server.requests) expect(r.rawBody.length / 4).toBeLessThanOrEqual(WINDOW);

    // 2. several compactions on the active path, in the graph; one of them in more than one stage
    const path = await run((rt) => rt.chronological(session.id));
    const compactions = path.filter(
      (n) => n.kind === "protocol" && (n.payload as { type?: string }).type === "compaction",
    );
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    const payloads = compactions.map((n) => n.payload as CompactionPayload);
    expect(payloads.some((p) => p.stages > 1)).toBe(true);
    expect(payloads.slice(1).every((p, i) => p.previous === compactions[i]!.id)).toBe(true);
    // the replaced messages stay in the graph: the settled transcript still has all 400 prompts
    const view = await run((rt) => rt.readView(session.id));
    expect(view.filter((m) => m.role === "user").length).toBe(400);

    // 3. every summariser request after the first holds the summary before it (staged merge, and across compactions)
    const summariser = server.requests.filter(isSummariser);
    expect(summariser.length).toBe(payloads.reduce((n, p) => n + p.stages, 0));
    for (let k = 1; k < summariser.length; k++) expect(userText(summariser[k]!)).toContain(`SUMMARY #${k}:`);

    // 4. after a compaction the model sees the summary, not the replaced turns
    const last = server.requests.at(-1)!;
    expect(isSummariser(last)).toBe(false);
    expect(userText(last)).toContain(SUMMARY_PREFIX);
    expect(userText(last)).toContain(payloads.at(-1)!.summary);
    expect(userText(last)).not.toContain(prompt(1));

    // acceptance 3: fork from just before the first compaction point; the fork's next request holds
    // the full original history (a runtime without automatic compaction, so nothing hides it)
    const first = compactions[0]!;
    const fork = await run((rt) => rt.fork(session.id, { atNode: first.parentId! }));
    const full = runtime(server, db, { contextWindow: WINDOW, auto: false });
    const before = server.requests.length;
    await full((rt) => rt.turn(fork.id, { text: "continue from the fork" }));
    const forkRequest = server.requests[before]!;
    expect(isSummariser(forkRequest)).toBe(false);
    const text = userText(forkRequest);
    expect(text).not.toContain(SUMMARY_PREFIX);
    const replaced = payloads[0]!.replaced;
    const firstTurns = Math.floor(replaced / 2);
    for (let i = 1; i <= firstTurns; i++) expect(text).toContain(prompt(i));
    expect(text).toContain("continue from the fork");

    // compare: the original branch holds the compaction node, the fork does not
    const forkLeaf = (await full((rt) => rt.getSession(fork.id))).leafId!;
    const cmp = await full((rt) => rt.compare(path.at(-1)!.id, forkLeaf));
    expect(cmp.ancestor).toBe(first.parentId);
    expect(cmp.onlyA.some((n) => n.id === first.id)).toBe(true);
    expect(cmp.onlyB.some((n) => n.kind === "protocol")).toBe(false);
  }, 180_000);

  it("an automatic compaction that fails is reported and the turn goes on with the full history", async () => {
    const server = await mock();
    const db = join(mkdtempSync(join(tmpdir(), "lash-compact-")), "lash.db");
    const run = runtime(server, db, { contextWindow: WINDOW });
    const session = await run((rt) => rt.createSession({ model: MODEL }));
    let i = 0;
    // turns until the next one crosses the threshold (its estimate is what the host computes)
    while (server.requests.filter(isSummariser).length === 0 && i < 40) {
      i++;
      if (i > 1)
        server.respondWith((r) =>
          isSummariser(r)
            ? { error: { status: 500, message: "summariser down" } }
            : { text: `answer ${i}: ${"words of the answer ".repeat(12)}` },
        );
      const events: { type: string; kind?: string; message?: string }[] = [];
      const r = await run((rt) =>
        rt.turn(
          session.id,
          { text: prompt(i) },
          { onEvent: (e) => events.push(e as (typeof events)[number]) },
        ),
      );
      expect(r.outcome.type).toBe("finished");
      if (server.requests.some(isSummariser)) {
        const err = events.find((e) => e.type === "error" && e.kind === "compaction");
        expect(err?.message).toContain("the turn goes on with the full history");
        expect(r.compaction).toBeUndefined();
        // the model was still asked, with every earlier prompt
        const last = server.requests.at(-1)!;
        expect(isSummariser(last)).toBe(false);
        expect(userText(last)).toContain(prompt(1).trim());
      }
    }
    expect(server.requests.some(isSummariser)).toBe(true);
    expect((await run((rt) => rt.chronological(session.id))).some((n) => n.kind === "protocol")).toBe(false);
  }, 60_000);

  it("a manual compaction whose summariser fails leaves the session unchanged and usable", async () => {
    const server = await mock();
    const db = join(mkdtempSync(join(tmpdir(), "lash-compact-")), "lash.db");
    const run = runtime(server, db, {});
    const session = await run((rt) => rt.createSession({ model: MODEL }));
    await run((rt) => rt.turn(session.id, { text: prompt(1) }));
    server.enqueue({ error: { status: 400, message: "summariser refused" } });
    const failed = await run((rt) => Effect.flip(rt.compact(session.id)));
    expect(failed._tag).toBe("TurnError");
    expect(failed.message).toContain("the compaction failed");
    expect(failed.message).toContain("summariser refused");
    const r = await run((rt) => rt.turn(session.id, { text: "still here" }, { resumePending: false }));
    expect(r.outcome.type).toBe("finished");
    expect(userText(server.requests.at(-1)!)).toContain(prompt(1).trim());
    expect((await run((rt) => rt.chronological(session.id))).some((n) => n.kind === "protocol")).toBe(false);
  }, 60_000);

  it("runtime.compact summarises on request, keeps the graph, and the next turn sends the summary", async () => {
    const server = await mock();
    const db = join(mkdtempSync(join(tmpdir(), "lash-compact-")), "lash.db");
    const run = runtime(server, db, {});
    const session = await run((rt) => rt.createSession({ model: MODEL }));
    for (let i = 1; i <= 3; i++) await run((rt) => rt.turn(session.id, { text: prompt(i) }));
    const r = await run((rt) => rt.compact(session.id, { instructions: "focus on item 2" }));
    expect(r?.payload.trigger).toBe("manual");
    expect(r?.payload.replaced).toBe(6);
    const summaryRequest = server.requests.at(-1)!;
    expect(isSummariser(summaryRequest)).toBe(true);
    expect(userText(summaryRequest)).toContain("focus on item 2");
    expect(userText(summaryRequest)).toContain(prompt(3));
    // nothing new since the summary: nothing to compact
    expect(await run((rt) => rt.compact(session.id))).toBeUndefined();
    await run((rt) => rt.turn(session.id, { text: "next" }));
    const next = userText(server.requests.at(-1)!);
    expect(next).toContain(r!.payload.summary);
    expect(next).not.toContain(prompt(1));
    const usage = await run((rt) => rt.usage(session.id));
    expect(usage.bySource.find((s) => s.source === "compaction")?.usage).toEqual({ input: 900, output: 30 });
    expect((await run((rt) => rt.readView(session.id))).length).toBe(8);
  }, 60_000);
});
