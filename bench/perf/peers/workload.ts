// The peer workload, shared by the parent (mock server + checks) and the
// workers (one framework each, in a fresh process).
//
// Tool loop: every session sends one user message ("session <k>"); the model
// calls the `add` tool once per round for ROUNDS rounds (round r: add(r, 1)),
// then answers "done". That is ROUNDS + 1 model round trips per session.
// Streaming: every session gets one text reply of CHUNKS chunks.
import type { MockReply, RecordedRequest } from "@lash/providers/testing";

export const FRAMEWORKS = ["lash-memory", "lash-sqlite", "ai-sdk", "pi", "openai-agents", "mastra"] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export const MODEL = "mock-model";
export const SYSTEM = "You are a benchmark agent. Call the add tool when asked.";
export const TOOL_NAME = "add";
export const TOOL_DESCRIPTION = "Add two integers and return the sum.";
export const FINAL_TEXT = "done";

export interface WorkloadSpec {
  readonly variant: "tools" | "stream";
  readonly sessions: number;
  /** Tool rounds per session (tools variant). */
  readonly rounds: number;
  /** Text chunks per reply (stream variant). */
  readonly chunks: number;
  /** Sessions in flight at once. */
  readonly concurrency: number;
}

/** The user message that opens tool-loop session k (the server identifies sessions by it). */
export const prompt = (k: number) => `session ${k}: call add once per round until told otherwise`;
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
  variant: WorkloadSpec["variant"] | undefined;
  session: number;
  round: number;
  lastTool: string;
} {
  const messages = messagesOf(req);
  const user = messages.find((m) => m.role === "user");
  const m = /^(session|stream) (\d+):/.exec(textOf(user?.content));
  const tools = messages.filter((m) => m.role === "tool");
  return {
    variant: m ? (m[1] === "stream" ? "stream" : "tools") : undefined,
    session: m ? Number(m[2]) : -1,
    round: tools.length,
    lastTool: textOf(tools.at(-1)?.content),
  };
}

/** The mock model: a function of the request body only (both variants, told apart by the prompt). */
export function responder(specs: {
  readonly tools: WorkloadSpec;
  readonly stream: WorkloadSpec;
}): (req: RecordedRequest) => MockReply {
  const usage = { input: 20, output: 5 };
  const text = streamText(specs.stream.chunks);
  return (req) => {
    const { variant, session, round } = classify(req);
    if (variant === "stream") return { text, textChunks: specs.stream.chunks, usage };
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
  spec.variant === "tools" ? spec.sessions * (spec.rounds + 1) : spec.sessions;

/**
 * Check the requests one run made: the right number, every session complete
 * (tools: rounds 0..R each exactly once, and every tool result carried back).
 * Returns the problems found (empty when the run really completed).
 */
export function verifyRequests(spec: WorkloadSpec, all: readonly RecordedRequest[]): string[] {
  const problems: string[] = [];
  const requests = all.filter((r) => classify(r).variant === spec.variant);
  const stray = all.filter((r) => classify(r).variant === undefined).length;
  if (stray > 0) problems.push(`${stray} request(s) carry no session prompt`);
  const expected = expectedRequests(spec);
  if (requests.length !== expected)
    problems.push(`the mock server saw ${requests.length} requests, expected ${expected}`);
  if (spec.variant === "stream") {
    const sessions = new Set(requests.map((r) => classify(r).session));
    if (sessions.size !== spec.sessions)
      problems.push(`requests came from ${sessions.size} sessions, expected ${spec.sessions}`);
    return problems;
  }
  const seen = new Map<number, number[]>();
  for (const r of requests) {
    const { session, round, lastTool } = classify(r);
    if (round > 0 && !lastTool.includes(add(round - 1, 1)))
      problems.push(`session ${session} round ${round}: the last tool result is ${JSON.stringify(lastTool)}`);
    const rounds = seen.get(session) ?? [];
    rounds.push(round);
    seen.set(session, rounds);
  }
  for (let k = 0; k < spec.sessions; k++) {
    const rounds = (seen.get(k) ?? []).sort((a, b) => a - b);
    const ok = rounds.length === spec.rounds + 1 && rounds.every((r, i) => r === i);
    if (!ok) problems.push(`session ${k} made rounds [${rounds.join(",")}], expected 0..${spec.rounds}`);
  }
  return problems.slice(0, 10);
}

/** What a worker reports back to the parent. */
export interface WorkerResult {
  readonly framework: string;
  readonly variant: WorkloadSpec["variant"];
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

/** One session's contract for every framework adapter. */
export interface FrameworkAdapter {
  /** Run one session of the tool loop; resolve with the final assistant text. */
  toolSession(k: number): Promise<string>;
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
