// A lash process for the approval crash test: runs (or resumes) one turn of a session in a
// SQLite database against the mock wire server. Governance asks about every `append` call
// (`append` writes a line to the counter file); the approver is picked by <approver>:
//   wait     announce `ASKED {request}` and never answer (the test SIGKILLs the process)
//   approve  announce `ASKED {request}` and approve every item
//   session  announce `ASKED {request}` and approve every item for the rest of the session
//   mixed    announce `ASKED {request}`; approve `append` for the session, other tools once
//   fail     fail (an ask would stop the turn with TurnError `approval`)
// With BLOCK_AFTER_APPROVAL=1 the process announces `APPROVED` once the answer is recorded
// and blocks there, before the tool runs (the test SIGKILLs it). With HANG_LABEL=<label>, the
// `append` (or `note`) of that label announces `TOOL_RUNNING` after appending and never returns.
// `note` is `append` under another name (it writes `note:<label>`), asked about too.
//   node approval-crash-worker.ts <db> <baseUrl> <counterFile> <turn|resume> <approver> [sessionId]
import { appendFileSync } from "node:fs";
import {
  ApprovalError,
  type ApproverShape,
  defineTool,
  type GovernanceShape,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  SqliteStore,
  textOutput,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { Effect, Layer } from "effect";

const [db, baseUrl, counterFile, mode, approverMode, sessionArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];
const say = (line: string) => process.stdout.write(`${line}\n`);

const appendTool = (name: string, prefix: string) =>
  defineTool<{ label: string }>({
    name,
    description: "Append the label to the counter file.",
    inputSchema: {
      type: "object",
      properties: { label: { type: "string" } },
      required: ["label"],
      additionalProperties: false,
    },
    effects: ["write"],
    preview: (args) => Effect.succeed({ summary: `${name} ${args.label} to the counter file` }),
    run: async (args) => {
      appendFileSync(counterFile, `${prefix}${args.label}\n`);
      if (process.env.HANG_LABEL === args.label) {
        say("TOOL_RUNNING");
        await new Promise(() => undefined);
      }
      return textOutput(`appended ${args.label}`);
    },
  });

const side: Plugin = { name: "side", tools: [appendTool("append", ""), appendTool("note", "note:")] };

const governance: GovernanceShape = {
  decide: (call) =>
    call.name === "append" || call.name === "note"
      ? { action: "ask", layer: "test policy", reason: `${call.name} writes a file` }
      : { action: "allow" },
};

const approver: ApproverShape = {
  ask: (request) =>
    Effect.suspend(() => {
      say(`ASKED ${JSON.stringify(request)}`);
      if (approverMode === "wait") return Effect.never;
      if (approverMode === "fail") return Effect.fail(new ApprovalError({ message: "no approver here" }));
      return Effect.succeed({
        by: "approve-all",
        decisions: request.items.map((i) => ({
          callId: i.callId,
          decision: "approve" as const,
          scope:
            approverMode === "session" || (approverMode === "mixed" && i.tool === "append")
              ? ("session" as const)
              : ("once" as const),
        })),
      });
    }),
};

const provider = createProvider("openai-compatible/mock", { baseUrl, apiKey: "test", retry: false });
const layer = LashRuntime.layer({ plugins: [side], governance, approver }).pipe(
  Layer.provide(
    Layer.mergeAll(
      SqliteStore.layer({ filename: db }),
      LlmProviders.single(provider),
      IdGenerator.Live,
      ModelCatalog.Empty,
    ),
  ),
);

const program = Effect.gen(function* () {
  const rt = yield* LashRuntime;
  const sessionId = sessionArg ?? (yield* rt.createSession({ model: "openai-compatible/mock" })).id;
  say(`SESSION ${sessionId}`);
  const onEvent = (e: { type: string; replayed?: boolean }) => {
    if (e.type !== "approvalResolved") return;
    say(`RESOLVED ${JSON.stringify(e)}`);
    if (process.env.BLOCK_AFTER_APPROVAL === "1" && !e.replayed) {
      say("APPROVED");
      // the answer is on disk; block here, before the tool runs, until the test kills the process
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    }
  };
  const result =
    mode === "resume"
      ? yield* rt.resumePending(sessionId, { onEvent })
      : yield* rt.turn(sessionId, { text: "append a line" }, { onEvent, resumePending: false });
  const nodes = yield* rt.chronological(sessionId);
  const approvals = nodes
    .filter((n) => n.kind === "protocol" && (n.payload as { type?: string }).type === "approval")
    .map((n) => n.payload);
  say(`COMMITTED ${JSON.stringify({ text: result?.text, resumed: result?.resumed, approvals })}`);
});

Effect.runPromise(
  Effect.scoped(
    Effect.provide(
      program.pipe(
        Effect.tapError((e) =>
          Effect.sync(() => {
            if (e._tag === "TurnError")
              say(`FAILED ${JSON.stringify({ reason: e.reason, message: e.message })}`);
          }),
        ),
      ),
      layer,
    ),
  ),
).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`worker failed: ${String(e)}\n`);
    process.exit(1);
  },
);
