// `lash remote`: the `-p` surface against a `lash serve` daemon, through @lash/client.
//   lash remote --server URL [--token T] -p "prompt" [--continue <session>] [--output-format …]
//     creates (or continues) a session, starts the turn, follows the run's events (the client
//     reconnects by itself across a dropped connection or a daemon restart), answers the
//     approvals the run waits on per --approval-mode, prints like -p, exits by outcome.
//   lash remote approvals | approve <id> | deny <id> [--reason R]
//     the pending approvals, and deciding one.
import { parseArgs } from "node:util";
import {
  type Approval,
  createClient,
  type LashClientPromise,
  type Run,
  type ServerEvent,
} from "@lash/client";
import { CliError, ExitCode, errorMessage, usageError } from "./errors.ts";
import type { MainIO } from "./io.ts";

const STREAM_VERSION = 1;
const FORMATS = ["text", "json", "stream-json"] as const;
const APPROVAL_MODES = ["approve-all", "reject-all", "fail"] as const;
type Format = (typeof FORMATS)[number];
type ApprovalMode = (typeof APPROVAL_MODES)[number];

const OPTIONS = {
  server: { type: "string" },
  token: { type: "string" },
  print: { type: "boolean", short: "p" },
  continue: { type: "string", short: "c" },
  model: { type: "string", short: "m" },
  "output-format": { type: "string" },
  "approval-mode": { type: "string" },
  reason: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function runRemote(argv: readonly string[], io: MainIO): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw usageError(`lash remote: ${errorMessage(e)} (see lash help remote)`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("remote"));
    return ExitCode.ok;
  }
  const server = values.server ?? io.env.LASH_SERVER_URL;
  if (server === undefined || server === "")
    throw usageError(
      "lash remote: no daemon: pass --server http://127.0.0.1:<port> (or set LASH_SERVER_URL) — the URL `lash serve` prints",
    );
  const token = values.token ?? io.env.LASH_SERVER_TOKEN;
  const client = createClient({ baseUrl: server, ...(token ? { token } : {}) });
  const [verb, ...rest] = positionals;
  try {
    if (!values.print && verb === "approvals") return await listApprovals(client, io);
    if (!values.print && (verb === "approve" || verb === "deny")) {
      const id = rest[0];
      if (id === undefined) throw usageError(`lash remote ${verb}: which approval? lash remote ${verb} <id>`);
      const approval = await client.approvals.decide(id, {
        decision: verb === "approve" ? "approve" : "deny",
        ...(values.reason !== undefined ? { reason: values.reason } : {}),
      });
      io.stdout.write(`approval ${approval.id}: ${approval.state}\n`);
      return ExitCode.ok;
    }
    const format = oneOf(values["output-format"] ?? "text", FORMATS, "--output-format");
    const mode = oneOf(values["approval-mode"] ?? "fail", APPROVAL_MODES, "--approval-mode");
    let prompt: string | undefined = positionals.join(" ");
    if (prompt.trim() === "" && io.stdin.isTTY !== true) prompt = await readAll(io.stdin);
    if (prompt.trim() === "")
      throw usageError('lash remote: no prompt: lash remote --server URL -p "…" (or the prompt on stdin)');
    return await runTurn(client, io, {
      prompt: prompt.replace(/\s+$/, ""),
      format,
      mode,
      ...(values.continue !== undefined ? { continue: values.continue } : {}),
      ...(values.model !== undefined ? { model: values.model } : {}),
    });
  } catch (e) {
    if (e instanceof CliError) throw e;
    // the daemon's answer (`{ _tag, code, message }`) or the client's (unreachable, gave up)
    const tag = (e as { _tag?: unknown })._tag;
    const code = (e as { code?: unknown }).code;
    throw new CliError(
      `lash remote: ${errorMessage(e)}${typeof tag === "string" && typeof code === "string" ? ` [${tag} ${code}]` : ""}`,
      tag === "Unauthorized" || tag === "BadRequest" ? ExitCode.usage : ExitCode.failed,
    );
  }
}

interface TurnOptions {
  readonly prompt: string;
  readonly format: Format;
  readonly mode: ApprovalMode;
  readonly continue?: string;
  readonly model?: string;
}

async function runTurn(client: LashClientPromise, io: MainIO, o: TurnOptions): Promise<number> {
  const jsonl = (obj: object) => io.stdout.write(`${JSON.stringify({ v: STREAM_VERSION, ...obj })}\n`);
  const session =
    o.continue !== undefined
      ? await client.sessions.get(o.continue)
      : await client.sessions.create(o.model !== undefined ? { model: o.model } : {});
  if (o.format === "stream-json")
    jsonl({
      type: "session",
      sessionId: session.id,
      how: o.continue !== undefined ? "continued" : "new",
      model: session.model,
      mode: session.mode,
      server: client.baseUrl,
    });
  else if (o.format === "text" && o.continue !== undefined)
    io.stderr.write(`[lash] continued session ${session.id} on ${client.baseUrl}\n`);

  const started = await client.turns.start(session.id, o.prompt);
  const runId = started.id;
  // SIGINT/SIGTERM: the first cancels the run on the daemon (its events still end it), a second quits
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(ExitCode.interrupted);
    interrupted = true;
    if (o.format === "text") io.stderr.write(`\n[lash] cancelling run ${runId} (again to quit now)\n`);
    client.runs.cancel(runId).catch(() => undefined);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  let printed = "";
  // a daemon restart takes a few seconds: retry for about a minute before giving up
  const stream = client.events(
    { runId },
    {
      maxRetries: 30,
      onReconnect: ({ attempt, after, cause }) => {
        if (attempt === 1 && o.format === "text")
          io.stderr.write(`[lash] lost the daemon (${cause}); reconnecting after event ${after ?? 0}\n`);
      },
    },
  );
  try {
    for await (const event of stream) {
      if (o.format === "stream-json") jsonl(eventLine(event));
      const data = (event.data ?? {}) as Record<string, unknown>;
      if (o.format === "text") {
        if (event.type === "textDelta" && typeof data.text === "string") {
          io.stdout.write(data.text);
          printed += data.text;
        } else progress(io.stderr, event, data);
      }
      if (event.type === "approvalRequested") {
        const id = String(data.requestId ?? "");
        const answered = await answerApproval(client, io, o, id, data);
        if (answered !== undefined) return answered;
      }
    }
  } finally {
    stream.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }

  const run = await client.runs.get(runId);
  const outcome = outcomeOf(run, interrupted);
  if (o.format === "text") {
    // the final text when no delta carried it (a typed agent's value, an RLM finish)
    const text = printed === "" ? (run.text ?? valueText(run.value)) : "";
    const out = printed + text;
    if (text !== "") io.stdout.write(text);
    if (out !== "" && !out.endsWith("\n")) io.stdout.write("\n");
    if (run.error) io.stderr.write(`lash remote: the run failed: ${run.error.message}\n`);
    else if (outcome === "stopped") io.stderr.write(`[lash] stopped (${stopReason(run)})\n`);
    else if (outcome === "interrupted") io.stderr.write(`[lash] run ${run.id} cancelled\n`);
  } else {
    const result = {
      type: "result",
      outcome,
      text: run.text ?? valueText(run.value),
      ...(run.value !== undefined ? { finalValue: run.value } : {}),
      ...(run.error ? { error: run.error.message, code: run.error.code } : {}),
      ...(outcome === "stopped" ? { reason: stopReason(run) } : {}),
      sessionId: run.sessionId,
      runId: run.id,
      ...(run.turnId !== undefined ? { turnId: run.turnId } : {}),
      state: run.state,
      server: client.baseUrl,
    };
    if (o.format === "json") io.stdout.write(`${JSON.stringify(result)}\n`);
    else jsonl(result);
  }
  return outcome === "finished"
    ? ExitCode.ok
    : outcome === "interrupted"
      ? ExitCode.interrupted
      : ExitCode.failed;
}

/** One stream-json line: the event's fields as `-p` prints a TurnActivity, plus its run. */
function eventLine(event: ServerEvent): object {
  const data = typeof event.data === "object" && event.data !== null ? event.data : { data: event.data };
  return {
    ...data,
    type: event.type,
    seq: event.seq,
    sessionId: event.sessionId,
    runId: event.runId,
    at: event.at,
  };
}

/**
 * Answers an approval the run waits on per --approval-mode; an exit code when the command
 * ends here (`fail`, or a decision the daemon refused).
 */
async function answerApproval(
  client: LashClientPromise,
  io: MainIO,
  o: TurnOptions,
  id: string,
  data: Record<string, unknown>,
): Promise<number | undefined> {
  const tools = Array.isArray(data.items)
    ? data.items.map((i) => String((i as { tool?: unknown }).tool ?? "?")).join(", ")
    : "?";
  if (o.mode === "fail") {
    const message =
      `lash remote: the run waits on approval ${id} (${tools}); it stays pending on the daemon. Decide it with\n` +
      `  lash remote approve ${id} --server ${client.baseUrl}    (or: lash remote deny ${id} --reason "…")\n` +
      `  curl -X POST ${client.baseUrl}/v1/approvals/${id} -H "Authorization: Bearer $LASH_SERVER_TOKEN" -H 'content-type: application/json' -d '{"decision":"approve"}'\n` +
      `or run with --approval-mode approve-all|reject-all.`;
    if (o.format === "text") io.stderr.write(`${message}\n`);
    else
      io.stdout.write(
        `${JSON.stringify({ v: STREAM_VERSION, type: "result", outcome: "failed", code: "approval_pending", approvalId: id, error: message })}\n`,
      );
    return ExitCode.failed;
  }
  const decision = o.mode === "approve-all" ? "approve" : "deny";
  let approval: Approval;
  try {
    approval = await client.approvals.decide(id, {
      decision,
      ...(decision === "deny" ? { reason: "denied by lash remote --approval-mode reject-all" } : {}),
    });
  } catch (e) {
    // another client answered it first: the run goes on with that answer
    if ((e as { _tag?: unknown })._tag !== "Conflict") throw e;
    if (o.format === "text") io.stderr.write(`[approval] ${tools} · already decided (${errorMessage(e)})\n`);
    return undefined;
  }
  if (o.format === "text")
    io.stderr.write(`[approval] ${tools} · ${approval.state} (--approval-mode ${o.mode})\n`);
  return undefined;
}

async function listApprovals(client: LashClientPromise, io: MainIO): Promise<number> {
  const approvals = await client.approvals.list({ state: "pending" });
  if (approvals.length === 0) io.stdout.write("no pending approvals\n");
  for (const a of approvals) {
    const tools = a.items.map((i) => String((i as { tool?: unknown }).tool ?? "?")).join(", ");
    io.stdout.write(`${a.id}  ${tools}  session ${a.sessionId}  run ${a.runId}  by ${a.requestedBy}\n`);
  }
  return ExitCode.ok;
}

/** Progress lines on stderr for text output, as `-p` prints them. */
function progress(stderr: NodeJS.WritableStream, event: ServerEvent, data: Record<string, unknown>): void {
  switch (event.type) {
    case "toolCompleted":
      stderr.write(
        `[tool] ${String(data.name)} · ${data.isError ? "error" : "ok"} · ${Math.round(Number(data.durationMs ?? 0))}ms${data.replayed ? " · from journal" : ""}\n`,
      );
      break;
    case "runResumed":
      stderr.write("[resume] the daemon restarted and resumed this run from its journal\n");
      break;
    case "error":
      stderr.write(`error: ${String(data.message)}\n`);
      break;
  }
}

type Outcome = "finished" | "stopped" | "interrupted" | "failed";

function outcomeOf(run: Run, interrupted: boolean): Outcome {
  if (run.state === "cancelled") return interrupted ? "interrupted" : "stopped";
  if (run.state === "failed") return "failed";
  const outcome = run.outcome as { type?: string } | undefined;
  return outcome?.type === "stopped" ? "stopped" : run.state === "completed" ? "finished" : "failed";
}

const stopReason = (run: Run): string => {
  const outcome = run.outcome as { reason?: string; message?: string } | undefined;
  return [outcome?.reason ?? run.state, outcome?.message].filter(Boolean).join(": ");
};

const valueText = (v: unknown): string =>
  v === undefined ? "" : typeof v === "string" ? v : (JSON.stringify(v, null, 2) ?? String(v));

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw usageError(`lash remote: ${flag} ${value}: use one of ${allowed.join(", ")}`);
}

async function readAll(stdin: NodeJS.ReadableStream): Promise<string> {
  let out = "";
  for await (const chunk of stdin)
    out += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
  return out;
}
