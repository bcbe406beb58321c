// The peer workload, shared by the parent (mock server + checks) and the
// workers (one framework each, in a fresh process).
//
// Tool loop: every session sends one user message ("session <k>" over SSE,
// "json <k>" non-streamed); the model calls the `add` tool once per round for
// ROUNDS rounds (round r: add(r, 1)), then answers "done". That is ROUNDS + 1
// model round trips per session. Streaming: every session gets one text reply
// of CHUNKS chunks. Before any timed run a worker runs one probe session of each
// variant (session number PROBE) and checks its result; the parent checks the
// probe's requests too.
import type { MockReply, RecordedRequest } from "@lash/providers/testing";

export const FRAMEWORKS = [
  "raw",
  "lash-memory",
  "lash-sqlite",
  "ai-sdk",
  "pi",
  "openai-agents",
  "mastra",
] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export const MODEL = "mock-model";
export const SYSTEM = "You are a benchmark agent. Call the add tool when asked.";
export const TOOL_NAME = "add";
export const TOOL_DESCRIPTION = "Add two integers and return the sum.";
export const FINAL_TEXT = "done";

/** `tools`: the tool loop over SSE; `tools-json`: the same loop with non-streamed JSON responses; `stream`: one long streamed text reply. */
export type Variant = "tools" | "tools-json" | "stream";
export const VARIANTS: readonly Variant[] = ["tools", "tools-json", "stream"];
/** The wire mode of a tool-loop session. */
export type Wire = "sse" | "json";
export const wireOf = (variant: Variant): Wire => (variant === "tools-json" ? "json" : "sse");

/** The session number of the probe session a worker runs (and checks) before it times anything. */
export const PROBE = 1_000_000;

export interface WorkloadSpec {
  readonly variant: Variant;
  readonly sessions: number;
  /** Tool rounds per session (tools variant). */
  readonly rounds: number;
  /** Text chunks per reply (stream variant). */
  readonly chunks: number;
  /** Sessions in flight at once. */
  readonly concurrency: number;
}

/** The user message that opens tool-loop session k (the server identifies sessions and their wire mode by it). */
export const prompt = (k: number, wire: Wire = "sse") =>
  `${wire === "sse" ? "session" : "json"} ${k}: call add once per round until told otherwise`;
/** The user message that opens streaming session k. */
export const streamPrompt = (k: number) => `stream ${k}: reply with the text`;

/** The streamed reply text: CHUNKS words, one per chunk. */
export const streamText = (chunks: number) => "w ".repeat(chunks);

/** What the trivial tool computes; every framework's tool calls this. */
export function add(a: number, b: number): string {
  return `sum=${a + b}`;
}

interface ChatMessage {
  readonly role?: string;
  readonly content?: unknown;
}

function messagesOf(req: RecordedRequest): readonly ChatMessage[] {
  const body = req.body as { messages?: ChatMessage[] } | undefined;
  return body?.messages ?? [];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((p) => (typeof p === "object" && p && "text" in p ? String((p as { text: unknown }).text) : ""))
      .join("");
  return "";
}

/** Variant, session number and tool-round number of a Chat Completions request. */
export function classify(req: RecordedRequest): {
  variant: Variant | undefined;
  session: number;
  round: number;
  lastTool: string;
} {
  const messages = messagesOf(req);
  const user = messages.find((m) => m.role === "user");
  const m = /^(session|json|stream) (\d+):/.exec(textOf(user?.content));
  const tools = messages.filter((m) => m.role === "tool");
  const variants: Record<string, Variant> = { session: "tools", json: "tools-json", stream: "stream" };
  return {
    variant: m ? variants[m[1]!] : undefined,
    session: m ? Number(m[2]) : -1,
    round: tools.length,
    lastTool: textOf(tools.at(-1)?.content),
  };
}

/** The mock model: a function of the request body only (the variants told apart by the prompt). */
export function responder(
  specs: Readonly<Record<Variant, WorkloadSpec>>,
): (req: RecordedRequest) => MockReply {
  const usage = { input: 20, output: 5 };
  const text = streamText(specs.stream.chunks);
  return (req) => {
    const { variant, session, round, lastTool } = classify(req);
    if (variant === "stream") return { text, textChunks: specs.stream.chunks, usage };
    // A wrong (or missing) tool result ends the session with a text that is not the
    // expected answer, so the worker's own check sees it (before timing, in the probe).
    if (round > 0 && !lastTool.includes(add(round - 1, 1)))
      return { text: `wrong tool result in round ${round - 1}: ${JSON.stringify(lastTool)}`, usage };
    if (round < specs.tools.rounds)
      return {
        toolCalls: [{ id: `call_${session}_${round}`, name: TOOL_NAME, arguments: { a: round, b: 1 } }],
        usage,
      };
    return { text: FINAL_TEXT, usage };
  };
}

/** Requests the server must see for one run. */
export const expectedRequests = (spec: WorkloadSpec) =>
  spec.variant === "stream" ? spec.sessions : spec.sessions * (spec.rounds + 1);

/**
 * Check the requests one run made: the right number, every session complete
 * (tools: rounds 0..R each exactly once, and every tool result carried back),
 * the wire mode the variant names (SSE or plain JSON), and the probe session
 * the worker ran before timing (when `probe` is set). Returns the problems
 * found (empty when the run really completed).
 */
export function verifyRequests(spec: WorkloadSpec, all: readonly RecordedRequest[], probe = false): string[] {
  const problems: string[] = [];
  const ofVariant = all.filter((r) => classify(r).variant === spec.variant);
  const requests = ofVariant.filter((r) => classify(r).session !== PROBE);
  const probes = ofVariant.length - requests.length;
  const stray = all.filter((r) => classify(r).variant === undefined).length;
  if (stray > 0) problems.push(`${stray} request(s) carry no session prompt`);
  const expected = expectedRequests(spec);
  if (requests.length !== expected)
    problems.push(`the mock server saw ${requests.length} requests, expected ${expected}`);
  const perSession = spec.variant === "stream" ? 1 : spec.rounds + 1;
  if (probe && probes !== perSession)
    problems.push(`the probe session made ${probes} requests, expected ${perSession}`);
  const wantStream = wireOf(spec.variant) === "sse";
  const wrongWire = ofVariant.filter((r) => r.stream !== wantStream).length;
  if (wrongWire > 0)
    problems.push(
      `${wrongWire} request(s) asked for ${wantStream ? "a non-streamed" : "a streamed"} response`,
    );
  if (spec.variant === "stream") {
    const sessions = new Set(requests.map((r) => classify(r).session));
    if (sessions.size !== spec.sessions)
      problems.push(`requests came from ${sessions.size} sessions, expected ${spec.sessions}`);
    return problems;
  }
  const seen = new Map<number, number[]>();
  for (const r of ofVariant) {
    const { session, round, lastTool } = classify(r);
    if (round > 0 && !lastTool.includes(add(round - 1, 1)))
      problems.push(`session ${session} round ${round}: the last tool result is ${JSON.stringify(lastTool)}`);
    const rounds = seen.get(session) ?? [];
    rounds.push(round);
    seen.set(session, rounds);
  }
  const sessions = Array.from({ length: spec.sessions }, (_, k) => k);
  for (const k of probe ? [...sessions, PROBE] : sessions) {
    const rounds = (seen.get(k) ?? []).sort((a, b) => a - b);
    const ok = rounds.length === spec.rounds + 1 && rounds.every((r, i) => r === i);
    if (!ok) problems.push(`session ${k} made rounds [${rounds.join(",")}], expected 0..${spec.rounds}`);
  }
  return problems.slice(0, 10);
}

/** What a worker reports back to the parent. */
export interface WorkerResult {
  readonly framework: string;
  readonly variant: Variant;
  readonly cpuUserMs: number;
  readonly cpuSystemMs: number;
  readonly wallMs: number;
  /** Peak resident set size of the worker process, bytes. */
  readonly maxRssBytes: number;
  /** Tool executions the framework ran (tools variant). */
  readonly toolCalls: number;
  /** Sessions whose final text was right. */
  readonly completed: number;
  readonly errors: readonly string[];
}

/** A worker's output file: the wire modes the framework offers and one result per variant it ran. */
export interface WorkerOutput {
  readonly wires: readonly Wire[];
  readonly results: readonly WorkerResult[];
}

/** One session's contract for every framework adapter. */
export interface FrameworkAdapter {
  /** The tool-loop wire modes the framework offers (a variant it lacks is reported as n/a, never emulated). */
  readonly wires: readonly Wire[];
  /** Run one session of the tool loop over `wire` (`prompt(k, wire)`); resolve with the final assistant text. */
  toolSession(k: number, wire: Wire): Promise<string>;
  /** Run one streamed session; resolve with the text as streamed (concatenated deltas). */
  streamSession(k: number): Promise<string>;
  close?(): Promise<void>;
}

export interface AdapterContext {
  /** OpenAI-style base URL, ending in /v1. */
  readonly baseUrl: string;
  /** Tool rounds per session before the model answers. */
  readonly rounds: number;
  /** The tool body every adapter calls (counts executions). */
  readonly add: (a: number, b: number) => string;
  /** A scratch directory for this worker (SQLite files). */
  readonly tmp: string;
}
