// The audit trail of approvals (issue 17): every decision — a policy's denial, an approver's
// approval for the session with edited arguments, a denial with a reason — is a graph node
// committed with the turn, and shows in `lash export` (JSON, HTML, Markdown) and in the trace
// (`approval` records) of a real runtime.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ApprovalRecord,
  type ApproverShape,
  defineTool,
  type GovernanceShape,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  MemoryStore,
  ModelCatalog,
  textOutput,
} from "@lash/core";
import { exportSession, parseExport } from "@lash/export";
import { ScriptedProvider } from "@lash/providers/testing";
import { createTraceRecorder, jsonlSink, parseTrace } from "@lash/trace";
import { Effect, Layer, ManagedRuntime } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const governance: GovernanceShape = {
  decide: (call) =>
    call.name === "drop_table"
      ? { action: "deny", layer: "project config", reason: "drop_table is denied in this project" }
      : call.name === "write_note"
        ? { action: "ask", layer: "global config", reason: "write_note changes files" }
        : { action: "allow" },
};

const approver: ApproverShape = {
  ask: (request) =>
    Effect.succeed({
      by: "user",
      decisions: request.items.map((i) =>
        (i.args as { text: string }).text === "draft"
          ? {
              callId: i.callId,
              decision: "approve" as const,
              scope: "session" as const,
              args: { text: "final" },
            }
          : { callId: i.callId, decision: "deny" as const, reason: "not that one" },
      ),
    }),
};

const note = (name: string) =>
  defineTool<{ text: string }>({
    name,
    description: name,
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: async ({ text }) => textOutput(`${name}: ${text}`),
  });

let json: string;
let html: string;
let md: string;
let traceText: string;
let sessionId: string;
const dispose: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "lash-approval-audit-"));
  const recorder = createTraceRecorder({ sinks: [jsonlSink(join(dir, "trace.jsonl"))], recorderId: "t" });
  const provider = new ScriptedProvider([
    {
      toolCalls: [
        { name: "write_note", arguments: { text: "draft" } },
        { name: "write_note", arguments: { text: "other" } },
        { name: "drop_table", arguments: { text: "users" } },
      ],
    },
    { text: "done" },
  ]);
  const runtime = ManagedRuntime.make(
    LashRuntime.layer({
      plugins: [{ name: "notes", tools: [note("write_note"), note("drop_table")] }],
      governance,
      approver,
    }).pipe(
      Layer.provide(
        Layer.mergeAll(MemoryStore, LlmProviders.single(provider), IdGenerator.seeded(), ModelCatalog.Empty),
      ),
    ),
  );
  dispose.push(() => runtime.dispose());
  const rt = await runtime.runPromise(LashRuntime);
  sessionId = (await runtime.runPromise(rt.createSession({ model: "scripted/model" }))).id;
  await runtime.runPromise(
    rt.turn(sessionId, { text: "take notes" }, { onEvent: (e) => recorder.record(e) }),
  );
  await recorder.close();
  json = await exportSession(rt, sessionId, "json");
  html = await exportSession(rt, sessionId, "html");
  md = await exportSession(rt, sessionId, "md");
  traceText = readFileSync(join(dir, "trace.jsonl"), "utf8");
});
afterAll(async () => {
  for (const d of dispose) await d();
});

describe("the approval audit trail", () => {
  it("JSON export: one node per decision, with request id, tool, hashes, decision, who, why, layer, time", () => {
    const nodes = parseExport(json).nodes.filter(
      (n) => n.kind === "protocol" && (n.payload as { type?: string }).type === "approval",
    );
    const payloads = nodes.map((n) => n.payload as ApprovalRecord);
    expect(payloads.map((p) => [p.tool, p.decision, p.by, p.layer, p.reason ?? null])).toEqual([
      ["drop_table", "deny", "policy", "project config", "drop_table is denied in this project"],
      ["write_note", "approve", "user", "global config", null],
      ["write_note", "deny", "user", "global config", "not that one"],
    ]);
    const approved = payloads[1]!;
    expect(approved).toMatchObject({ scope: "session", edited: true, args: { text: "final" } });
    expect(approved.argsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(approved.previewHash).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof approved.at).toBe("number");
    expect(payloads[0]!.requestId).not.toBe(approved.requestId);
    expect(approved.requestId).toBe(payloads[2]!.requestId);
  });

  it("HTML and Markdown exports show each decision", () => {
    expect(html).toContain("approved</span> write_note approved by user for the session (arguments edited)");
    expect(html).toContain(
      "drop_table denied by policy · policy: project config · drop_table is denied in this project",
    );
    expect(md).toContain(
      "> **Approval** ✅ write_note approved by user for the session (arguments edited) · policy: global config",
    );
    expect(md).toContain(
      "> **Approval** ⛔ write_note denied by user · policy: global config · not that one",
    );
  });

  it("the trace has approval records: the policy's denial, the request and the answer", () => {
    const records = parseTrace(traceText)
      .filter((l) => l.type === "record")
      .map((l) => (l.type === "record" ? l.record : undefined))
      .filter((r) => r?.kind === "approval");
    expect(records.map((r) => (r?.kind === "approval" ? [r.phase, r.by ?? null] : []))).toEqual([
      ["resolved", "policy"],
      ["requested", null],
      ["resolved", "user"],
    ]);
    const requested = records[1];
    expect(requested?.kind === "approval" && requested.items?.map((i) => [i.tool, i.layer])).toEqual([
      ["write_note", "global config"],
      ["write_note", "global config"],
    ]);
    const resolved = records[2];
    expect(
      resolved?.kind === "approval" && resolved.decisions?.map((d) => [d.decision, d.edited ?? false]),
    ).toEqual([
      ["approve", true],
      ["deny", false],
    ]);
    expect(sessionId).toBeTruthy();
  });
});
