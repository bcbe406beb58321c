import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LlmRequest, Message } from "@lash/sansio";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ApprovalAnswer,
  ApprovalError,
  type ApprovalRequest,
  type ApproverShape,
  type GovernanceShape,
  type Plugin,
  SqliteStore,
  type ToolDefinition,
  type TurnActivity,
  TurnError,
} from "../src/index.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

/** A tool that counts its runs and echoes its text. */
function echoTool(name: string, runs: string[]): ToolDefinition {
  return {
    name,
    description: `${name} echoes`,
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    },
    execute: (args) =>
      Effect.sync(() => {
        const text = (args as { text: string }).text;
        runs.push(`${name}:${text}`);
        return { content: [{ type: "text", text: `${name} said ${text}` }] };
      }),
  };
}

/** Asks about `asked`, denies `denied`, allows the rest. */
const governance = (asked: readonly string[], denied: readonly string[] = []): GovernanceShape => ({
  decide: (call) =>
    denied.includes(call.name)
      ? { action: "deny", layer: "project config", reason: `${call.name} is not allowed here` }
      : asked.includes(call.name)
        ? { action: "ask", layer: "global config", reason: `${call.name} changes files` }
        : { action: "allow" },
});

/** An approver that records each request and answers with `answer`. */
function recording(answer: (r: ApprovalRequest) => ApprovalAnswer): ApproverShape & {
  readonly requests: ApprovalRequest[];
} {
  const requests: ApprovalRequest[] = [];
  return {
    requests,
    ask: (request) =>
      Effect.sync(() => {
        requests.push(request);
        return answer(request);
      }),
  };
}

const toolResultTexts = (req: LlmRequest | undefined): string[] =>
  (req?.messages ?? []).flatMap((m: Message) =>
    m.parts.flatMap((p) =>
      p.type === "toolResult" ? p.content.flatMap((c) => (c.type === "text" ? [c.text] : [])) : [],
    ),
  );

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
const dbFile = () => {
  const dir = mkdtempSync(join(tmpdir(), "lash-approval-"));
  dirs.push(dir);
  return join(dir, "lash.db");
};

describe("the approval step", () => {
  it("a denial reaches the model's next request: denied, by whom, why, not to retry unchanged", async () => {
    const runs: string[] = [];
    const provider = scriptedProvider([
      callTools(
        { id: "c1", name: "write", args: { text: "a" } },
        { id: "c2", name: "rm", args: { text: "b" } },
      ),
      say("ok"),
    ]);
    const approver = recording((r) => ({
      by: "user",
      decisions: r.items.map((i) => ({ callId: i.callId, decision: "deny", reason: "not today" })),
    }));
    const events: TurnActivity[] = [];
    const plugin: Plugin = { name: "t", tools: [echoTool("write", runs), echoTool("rm", runs)] };
    const result = await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            const r = yield* rt.turn(s.id, { text: "go" }, { onEvent: (e) => events.push(e) });
            return { r, nodes: yield* rt.chronological(s.id) };
          }),
        { plugins: [plugin], governance: governance(["write"], ["rm"]), approver },
      ),
    );
    expect(result.r.text).toBe("ok");
    expect(runs).toEqual([]);
    const texts = toolResultTexts(provider.requests[1]);
    expect(texts).toEqual([
      "Denied: write was not run; the user denied it: not today. Do not retry the same call unchanged: change the arguments or the approach, or ask the user.",
      "Denied: rm was not run; the policy (project config) denied it: rm is not allowed here. Do not retry the same call unchanged: change the arguments or the approach, or ask the user.",
    ]);
    // the policy's denial asks nobody; the user was asked about `write` only
    expect(approver.requests.map((r) => r.items.map((i) => i.tool))).toEqual([["write"]]);
    // both decisions are graph nodes, after the assistant message that made the calls
    const approvals = result.nodes.filter(
      (n) => n.kind === "protocol" && (n.payload as { type?: string }).type === "approval",
    );
    expect(approvals.map((n) => n.payload)).toEqual([
      expect.objectContaining({ tool: "rm", decision: "deny", by: "policy", layer: "project config" }),
      expect.objectContaining({
        tool: "write",
        decision: "deny",
        by: "user",
        reason: "not today",
        layer: "global config",
        previewHash: approver.requests[0]!.items[0]!.previewHash,
      }),
    ]);
    const kinds = result.nodes.map((n) =>
      n.kind === "message" ? (n.payload as Message).role : (n.payload as { type: string }).type,
    );
    expect(kinds).toEqual(["user", "assistant", "approval", "approval", "tool", "assistant"]);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t.startsWith("approval"))).toEqual([
      "approvalResolved",
      "approvalRequested",
      "approvalResolved",
    ]);
  });

  it("several calls in one response are asked about in one request, each with its preview", async () => {
    const runs: string[] = [];
    const provider = scriptedProvider([
      callTools(
        { id: "c1", name: "write", args: { text: "one" } },
        { id: "c2", name: "read", args: { text: "two" } },
        { id: "c3", name: "write", args: { text: "three" } },
      ),
      say("done"),
    ]);
    const previewed: ToolDefinition = {
      ...echoTool("write", runs),
      preview: (args) => Effect.succeed({ summary: `write ${(args as { text: string }).text}` }),
    };
    const approver = recording((r) => ({
      by: "user",
      decisions: r.items.map((i) => ({ callId: i.callId, decision: "approve" })),
    }));
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.flatMap(rt.createSession({ model: "test/model" }), (s) => rt.turn(s.id, { text: "go" })),
        {
          plugins: [{ name: "t", tools: [previewed, echoTool("read", runs)] }],
          governance: governance(["write"]),
          approver,
        },
      ),
    );
    expect(approver.requests).toHaveLength(1);
    const [req] = approver.requests;
    expect(req!.items.map((i) => [i.callId, i.tool, i.preview?.summary])).toEqual([
      ["c1", "write", "write one"],
      ["c3", "write", "write three"],
    ]);
    expect(req!.items[0]!.reason).toBe("write changes files");
    expect(req!.items[0]!.effects).toEqual(["write"]);
    expect(req!.items[0]!.previewHash).toMatch(/^[0-9a-f]{64}$/);
    expect(req!.items[0]!.previewHash).not.toBe(req!.items[1]!.previewHash);
    expect(runs.sort()).toEqual(["read:two", "write:one", "write:three"]);
  });

  it("a tool approved for the session is not asked about again, also in a new process (from the graph)", async () => {
    const filename = dbFile();
    const runs: string[] = [];
    const approver = recording((r) => ({
      by: "user",
      decisions: r.items.map((i) => ({ callId: i.callId, decision: "approve", scope: "session" })),
    }));
    const plugin: Plugin = { name: "t", tools: [echoTool("write", runs)] };
    const options = {
      plugins: [plugin],
      governance: governance(["write"]),
      approver,
      store: SqliteStore.layer({ filename }),
    };
    const first = scriptedProvider([
      callTools({ id: "a", name: "write", args: { text: "1" } }),
      callTools({ id: "b", name: "write", args: { text: "2" } }),
      say("one"),
      callTools({ id: "c", name: "write", args: { text: "3" } }),
      say("two"),
    ]);
    const sessionId = await Effect.runPromise(
      withRuntime(
        first,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            yield* rt.turn(s.id, { text: "first" });
            yield* rt.turn(s.id, { text: "second" });
            return s.id;
          }),
        options,
      ),
    );
    expect(approver.requests).toHaveLength(1);
    expect(runs).toEqual(["write:1", "write:2", "write:3"]);
    // a new runtime over the same file: the grant comes back from the graph
    const second = scriptedProvider([
      callTools({ id: "d", name: "write", args: { text: "4" } }),
      say("three"),
    ]);
    await Effect.runPromise(withRuntime(second, (rt) => rt.turn(sessionId, { text: "third" }), options));
    expect(approver.requests).toHaveLength(1);
    expect(runs).toEqual(["write:1", "write:2", "write:3", "write:4"]);
    // a fresh session is asked again
    const third = scriptedProvider([callTools({ id: "e", name: "write", args: { text: "5" } }), say("four")]);
    await Effect.runPromise(
      withRuntime(
        third,
        (rt) =>
          Effect.flatMap(rt.createSession({ model: "test/model" }), (s) => rt.turn(s.id, { text: "x" })),
        { ...options, store: SqliteStore.layer({ filename: dbFile() }) },
      ),
    );
    expect(approver.requests).toHaveLength(2);
  });

  it("a session grant holds up to the risk it was given for, also when rebuilt from the graph in a new process", async () => {
    const filename = dbFile();
    const runs: string[] = [];
    const approver = recording((r) => ({
      by: "user",
      decisions: r.items.map((i) => ({ callId: i.callId, decision: "approve", scope: "session" })),
    }));
    // the text names the risk: `m…` medium, `h…` high, anything else unrated
    const rated: GovernanceShape = {
      decide: (call) => {
        const text = (call.args as { text: string }).text;
        const level = text.startsWith("h") ? "high" : text.startsWith("m") ? "medium" : undefined;
        return {
          action: "ask",
          layer: "global config",
          reason: "write changes files",
          ...(level ? { risk: { level, category: "write", reasons: [] } } : {}),
        };
      },
    };
    const options = {
      plugins: [{ name: "t", tools: [echoTool("write", runs)] }],
      governance: rated,
      approver,
      store: SqliteStore.layer({ filename }),
    };
    const sessionId = await Effect.runPromise(
      withRuntime(
        scriptedProvider([callTools({ id: "a", name: "write", args: { text: "m1" } }), say("one")]),
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            yield* rt.turn(s.id, { text: "first" });
            return s.id;
          }),
        options,
      ),
    );
    // a new runtime over the same file: the medium grant comes back from the graph with its level
    const second = scriptedProvider([
      callTools({ id: "b", name: "write", args: { text: "m2" } }),
      callTools({ id: "c", name: "write", args: { text: "h1" } }),
      callTools({ id: "d", name: "write", args: { text: "x1" } }),
      callTools({ id: "e", name: "write", args: { text: "x2" } }),
      say("two"),
    ]);
    await Effect.runPromise(withRuntime(second, (rt) => rt.turn(sessionId, { text: "second" }), options));
    // m2 ran on the grant; h1 was asked (and widened the grant to high), so x1 (unrated = high)
    // and x2 ran without asking
    expect(approver.requests.map((r) => r.items.map((i) => (i.args as { text: string }).text))).toEqual([
      ["m1"],
      ["h1"],
    ]);
    expect(runs).toEqual(["write:m1", "write:m2", "write:h1", "write:x1", "write:x2"]);
  });

  it("edited arguments are used, and validated again (an invalid edit is an error result naming the problem)", async () => {
    const runs: string[] = [];
    const provider = scriptedProvider([
      callTools(
        { id: "c1", name: "write", args: { text: "draft" } },
        { id: "c2", name: "write", args: { text: "x" } },
      ),
      say("done"),
    ]);
    const approver = recording(() => ({
      by: "user",
      decisions: [
        { callId: "c1", decision: "approve", args: { text: "final" } },
        { callId: "c2", decision: "approve", args: { text: 42 } },
      ],
    }));
    const events: TurnActivity[] = [];
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.flatMap(rt.createSession({ model: "test/model" }), (s) =>
            rt.turn(s.id, { text: "go" }, { onEvent: (e) => events.push(e) }),
          ),
        {
          plugins: [{ name: "t", tools: [echoTool("write", runs)] }],
          governance: governance(["write"]),
          approver,
        },
      ),
    );
    expect(runs).toEqual(["write:final"]);
    const texts = toolResultTexts(provider.requests[1]);
    expect(texts[0]).toBe("write said final");
    expect(texts[1]).toContain(
      "The approver edited the arguments of write, and the edited arguments are invalid",
    );
    expect(texts[1]).toContain("text");
    // the call that ran shows the arguments it ran with
    const started = events.filter((e) => e.type === "toolStarted");
    expect(started.map((e) => (e.type === "toolStarted" ? e.args : undefined))[0]).toEqual({ text: "final" });
    const resolved = events.find((e) => e.type === "approvalResolved");
    expect(resolved?.type === "approvalResolved" && resolved.decisions.map((d) => d.args)).toEqual([
      { text: "final" },
      { text: 42 },
    ]);
  });

  it("no answer to be had: the turn stops with a typed error naming the tool; resuming with an answer asks the same request once", async () => {
    const filename = dbFile();
    const runs: string[] = [];
    const plugin: Plugin = { name: "t", tools: [echoTool("write", runs)] };
    const failing: ApproverShape = {
      ask: () =>
        Effect.fail(new ApprovalError({ message: "run with --approval-mode approve-all|reject-all" })),
    };
    const first = scriptedProvider([callTools({ id: "c1", name: "write", args: { text: "a" } })]);
    const { error, sessionId } = await Effect.runPromise(
      withRuntime(
        first,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            const error = yield* Effect.flip(rt.turn(s.id, { text: "go" }));
            return { error, sessionId: s.id };
          }),
        {
          plugins: [plugin],
          governance: governance(["write"]),
          approver: failing,
          store: SqliteStore.layer({ filename }),
        },
      ),
    );
    expect(error).toBeInstanceOf(TurnError);
    expect(error._tag === "TurnError" && error.reason).toBe("approval");
    expect(error.message).toContain("write needs an approval, and none could be had");
    expect(error.message).toContain("--approval-mode approve-all|reject-all");
    const pendingRequest = (error as TurnError).approvalRequest;
    expect(pendingRequest?.items.map((i) => i.tool)).toEqual(["write"]);
    expect(runs).toEqual([]);

    // the resume asks again with the recorded request; the answer is journaled and used once
    const approver = recording((r) => ({
      by: "approve-all",
      decisions: r.items.map((i) => ({ callId: i.callId, decision: "approve" })),
    }));
    const second = scriptedProvider([say("resumed")]);
    const resumed = await Effect.runPromise(
      withRuntime(second, (rt) => rt.resumePending(sessionId), {
        plugins: [plugin],
        governance: governance(["write"]),
        approver,
        store: SqliteStore.layer({ filename }),
      }),
    );
    expect(resumed?.text).toBe("resumed");
    expect(approver.requests).toEqual([pendingRequest]);
    expect(runs).toEqual(["write:a"]);
  });

  it("cancelling the turn while an approval waits: nothing runs, the calls are reported cancelled, the turn commits", async () => {
    const runs: string[] = [];
    const provider = scriptedProvider([callTools({ id: "c1", name: "write", args: { text: "a" } })]);
    let askedSignal: AbortSignal | undefined;
    let markAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      markAsked = resolve;
    });
    const waiting: ApproverShape = {
      ask: (_request, signal) =>
        Effect.suspend(() => {
          askedSignal = signal;
          markAsked();
          return Effect.never;
        }),
    };
    const result = await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            const handle = yield* rt.startTurn(s.id, { text: "go" });
            yield* Effect.promise(() => asked);
            yield* handle.cancel;
            return yield* handle.result;
          }),
        {
          plugins: [{ name: "t", tools: [echoTool("write", runs)] }],
          governance: governance(["write"]),
          approver: waiting,
        },
      ),
    );
    expect(askedSignal?.aborted).toBe(true);
    expect(result.outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
    expect(runs).toEqual([]);
    const results = result.messages.flatMap((m) => m.parts.filter((p) => p.type === "toolResult"));
    expect(results).toEqual([
      expect.objectContaining({
        name: "write",
        isError: true,
        content: [{ type: "text", text: "Cancelled: the turn was stopped before write finished." }],
      }),
    ]);
  });
});
