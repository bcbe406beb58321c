import type { MockError, MockErrorCode, MockFinish, MockReply, MockUsage, WireFormat } from "./reply.ts";
import { argsText, defaultStatus, errorCodeOf, finishOf, reasoningOf, splitText } from "./reply.ts";

/** The text deltas of a reply: its explicit pieces, else `text` split evenly. */
function textPiecesOf(reply: MockReply): string[] {
  return reply.textPieces ? [...reply.textPieces] : splitText(reply.text ?? "", reply.textChunks);
}

export interface SseEvent {
  readonly event?: string;
  readonly data: string;
}

/** A rendered reply: the body as SSE events, the events that close the stream, or an error. */
export interface RenderedStream {
  readonly kind: "stream";
  readonly events: SseEvent[];
  /** How many of the last `events` are terminal (left out by `truncate`). */
  readonly terminal: number;
}

export interface RenderedError {
  readonly kind: "error";
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const errorTexts: Record<MockErrorCode, string> = {
  badRequest: "mock: invalid request",
  auth: "mock: invalid x-api-key",
  permission: "mock: your API key does not have permission to use the specified resource",
  notFound: "mock: model not found",
  rateLimit: "mock: rate limit exceeded",
  quota: "You exceeded your current quota, please check your plan and billing details.",
  overloaded: "mock: Overloaded",
  server: "mock: internal server error",
  contextOverflow: "",
};

const overflowText: Record<WireFormat, string> = {
  anthropic: "prompt is too long: 215000 tokens > 200000 maximum",
  "openai-responses":
    "Your input exceeds the context window of this model. Please adjust your input and try again.",
  "openai-chat":
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 215000 tokens. Please reduce the length of the messages.",
  google: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
};

const anthropicErrorType: Record<MockErrorCode, string> = {
  badRequest: "invalid_request_error",
  auth: "authentication_error",
  permission: "permission_error",
  notFound: "not_found_error",
  rateLimit: "rate_limit_error",
  quota: "billing_error",
  overloaded: "overloaded_error",
  server: "api_error",
  contextOverflow: "invalid_request_error",
};

const openaiErrorCode: Record<MockErrorCode, string | null> = {
  badRequest: "invalid_request_error",
  auth: "invalid_api_key",
  permission: "model_not_allowed",
  notFound: "model_not_found",
  rateLimit: "rate_limit_exceeded",
  quota: "insufficient_quota",
  overloaded: "server_overloaded",
  server: "server_error",
  contextOverflow: "context_length_exceeded",
};

const googleStatus: Record<MockErrorCode, string> = {
  badRequest: "INVALID_ARGUMENT",
  auth: "UNAUTHENTICATED",
  permission: "PERMISSION_DENIED",
  notFound: "NOT_FOUND",
  rateLimit: "RESOURCE_EXHAUSTED",
  quota: "RESOURCE_EXHAUSTED",
  overloaded: "UNAVAILABLE",
  server: "INTERNAL",
  contextOverflow: "INVALID_ARGUMENT",
};

/** An HTTP error in the vendor's own shape. */
/** Bedrock's error type (`x-amzn-errortype`) per mock error code. */
const bedrockErrorType: Record<MockErrorCode, string> = {
  rateLimit: "ThrottlingException",
  quota: "ServiceQuotaExceededException",
  overloaded: "ServiceUnavailableException",
  server: "InternalServerException",
  auth: "UnrecognizedClientException",
  permission: "AccessDeniedException",
  notFound: "ResourceNotFoundException",
  badRequest: "ValidationException",
  contextOverflow: "ValidationException",
};

export function renderError(
  format: WireFormat,
  e: MockError,
  platform?: "bedrock" | "vertex",
): RenderedError {
  const code = errorCodeOf(e);
  let status = e.status ?? defaultStatus[code];
  if (platform === "bedrock") {
    // Bedrock: `{"message": …}` and the error type in a header; no 529 (503 instead)
    if (status === 529) status = 503;
    const message =
      e.message ?? (code === "contextOverflow" ? "Input is too long for requested model." : errorTexts[code]);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-amzn-errortype": `${bedrockErrorType[code]}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      ...(e.headers ?? {}),
    };
    if (e.retryAfter !== undefined) headers["retry-after"] = String(e.retryAfter);
    const body =
      e.body === undefined
        ? JSON.stringify({ message })
        : typeof e.body === "string"
          ? e.body
          : JSON.stringify(e.body);
    return { kind: "error", status, headers, body };
  }
  // Gemini has no 529.
  if (format === "google" && status === 529) status = 503;
  const message = e.message ?? (code === "contextOverflow" ? overflowText[format] : errorTexts[code]);
  const headers: Record<string, string> = { "content-type": "application/json", ...(e.headers ?? {}) };
  if (e.retryAfter !== undefined) headers["retry-after"] = String(e.retryAfter);
  let body: unknown = e.body;
  if (body === undefined) {
    if (format === "anthropic") body = { type: "error", error: { type: anthropicErrorType[code], message } };
    else if (format === "google") {
      const details: unknown[] = [];
      if (e.retryAfter !== undefined)
        details.push({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${e.retryAfter}s` });
      body = {
        error: { code: status, message, status: googleStatus[code], ...(details.length ? { details } : {}) },
      };
    } else
      body = {
        error: {
          message,
          type: code === "rateLimit" || code === "quota" ? "requests" : "invalid_request_error",
          param: null,
          code: openaiErrorCode[code],
        },
      };
  }
  return { kind: "error", status, headers, body: typeof body === "string" ? body : JSON.stringify(body) };
}

function j(v: unknown): string {
  return JSON.stringify(v);
}

function typed(payload: Record<string, unknown> & { type: string }): SseEvent {
  return { event: payload.type, data: j(payload) };
}

interface Ids {
  readonly n: number;
  readonly model: string;
}

function callId(format: WireFormat, ids: Ids, i: number, given: string | undefined): string {
  if (given) return given;
  const prefix = format === "anthropic" ? "toolu_mock" : format === "google" ? "gcall_mock" : "call_mock";
  return `${prefix}_${ids.n}_${i}`;
}

// ---------------------------------------------------------------------------

function anthropic(reply: MockReply, ids: Ids): RenderedStream {
  const u = reply.usage ?? {};
  const events: SseEvent[] = [];
  const cr = u.cacheRead;
  const cw = u.cacheWrite;
  const startUsage: Record<string, unknown> = reply.usage
    ? { input_tokens: u.input !== undefined ? u.input - (cr ?? 0) - (cw ?? 0) : null, output_tokens: 1 }
    : { input_tokens: null, output_tokens: null };
  if (cr !== undefined) startUsage.cache_read_input_tokens = cr;
  if (cw !== undefined) startUsage.cache_creation_input_tokens = cw;
  events.push(
    typed({
      type: "message_start",
      message: {
        id: `msg_mock_${ids.n}`,
        type: "message",
        role: "assistant",
        model: ids.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: startUsage,
      },
    }),
  );
  let index = 0;
  const r = reasoningOf(reply.reasoning);
  if (r) {
    if (r.redacted) {
      events.push(
        typed({
          type: "content_block_start",
          index,
          content_block: { type: "redacted_thinking", data: r.encrypted ?? "" },
        }),
      );
    } else {
      events.push(
        typed({
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }),
      );
      for (const piece of splitText(r.text, r.chunks))
        events.push(
          typed({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } }),
        );
      if (r.signature !== undefined)
        events.push(
          typed({
            type: "content_block_delta",
            index,
            delta: { type: "signature_delta", signature: r.signature },
          }),
        );
    }
    events.push(typed({ type: "content_block_stop", index }));
    index++;
  }
  if (reply.text !== undefined) {
    events.push(typed({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
    for (const piece of textPiecesOf(reply))
      events.push(typed({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }));
    events.push(typed({ type: "content_block_stop", index }));
    index++;
  }
  (reply.toolCalls ?? []).forEach((c, i) => {
    events.push(
      typed({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: callId("anthropic", ids, i, c.id), name: c.name, input: {} },
      }),
    );
    for (const piece of splitText(argsText(c.arguments), c.chunks))
      events.push(
        typed({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        }),
      );
    events.push(typed({ type: "content_block_stop", index }));
    index++;
  });
  const stop: Record<MockFinish, string> = {
    stop: "end_turn",
    toolUse: "tool_use",
    outputLimit: "max_tokens",
    contentFilter: "refusal",
  };
  const deltaUsage: Record<string, unknown> = { output_tokens: u.output ?? null };
  if (u.reasoning !== undefined) deltaUsage.output_tokens_details = { thinking_tokens: u.reasoning };
  events.push(
    typed({
      type: "message_delta",
      delta: { stop_reason: stop[finishOf(reply)], stop_sequence: null },
      usage: deltaUsage,
    }),
  );
  events.push(typed({ type: "message_stop" }));
  return { kind: "stream", events, terminal: 2 };
}

// ---------------------------------------------------------------------------

function responsesUsage(u: MockUsage | undefined): unknown {
  if (!u) return null;
  const inputDetails: Record<string, number> = {};
  if (u.cacheRead !== undefined) inputDetails.cached_tokens = u.cacheRead;
  if (u.cacheWrite !== undefined) inputDetails.cache_write_tokens = u.cacheWrite;
  return {
    input_tokens: u.input ?? 0,
    input_tokens_details: inputDetails,
    output_tokens: u.output ?? 0,
    output_tokens_details: u.reasoning !== undefined ? { reasoning_tokens: u.reasoning } : {},
    total_tokens: (u.input ?? 0) + (u.output ?? 0),
  };
}

function responses(reply: MockReply, ids: Ids): RenderedStream {
  const events: SseEvent[] = [];
  let seq = 0;
  const ev = (payload: Record<string, unknown> & { type: string }): void => {
    events.push(typed({ ...payload, sequence_number: seq++ }));
  };
  const respId = `resp_mock_${ids.n}`;
  const base = { id: respId, object: "response", created_at: 0, model: ids.model };
  ev({ type: "response.created", response: { ...base, status: "in_progress", output: [], usage: null } });
  const output: unknown[] = [];
  let oi = 0;
  const r = reasoningOf(reply.reasoning);
  if (r) {
    const id = `rs_mock_${ids.n}`;
    const item = { id, type: "reasoning", summary: [] as unknown[], encrypted_content: r.encrypted ?? null };
    ev({ type: "response.output_item.added", output_index: oi, item });
    if (r.text !== "") {
      ev({
        type: "response.reasoning_summary_part.added",
        item_id: id,
        output_index: oi,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
      for (const piece of splitText(r.text, r.chunks))
        ev({
          type: "response.reasoning_summary_text.delta",
          item_id: id,
          output_index: oi,
          summary_index: 0,
          delta: piece,
        });
      ev({
        type: "response.reasoning_summary_text.done",
        item_id: id,
        output_index: oi,
        summary_index: 0,
        text: r.text,
      });
      ev({
        type: "response.reasoning_summary_part.done",
        item_id: id,
        output_index: oi,
        summary_index: 0,
        part: { type: "summary_text", text: r.text },
      });
    }
    const done = { ...item, summary: r.text !== "" ? [{ type: "summary_text", text: r.text }] : [] };
    ev({ type: "response.output_item.done", output_index: oi, item: done });
    output.push(done);
    oi++;
  }
  if (reply.text !== undefined) {
    const id = `msg_mock_${ids.n}`;
    ev({
      type: "response.output_item.added",
      output_index: oi,
      item: { id, type: "message", status: "in_progress", role: "assistant", content: [] },
    });
    ev({
      type: "response.content_part.added",
      item_id: id,
      output_index: oi,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    });
    for (const piece of textPiecesOf(reply))
      ev({
        type: "response.output_text.delta",
        item_id: id,
        output_index: oi,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
    ev({
      type: "response.output_text.done",
      item_id: id,
      output_index: oi,
      content_index: 0,
      text: reply.text,
      logprobs: [],
    });
    const part = { type: "output_text", text: reply.text, annotations: [] };
    ev({ type: "response.content_part.done", item_id: id, output_index: oi, content_index: 0, part });
    const done = { id, type: "message", status: "completed", role: "assistant", content: [part] };
    ev({ type: "response.output_item.done", output_index: oi, item: done });
    output.push(done);
    oi++;
  }
  (reply.toolCalls ?? []).forEach((c, i) => {
    const id = `fc_mock_${ids.n}_${i}`;
    const call_id = callId("openai-responses", ids, i, c.id);
    const args = argsText(c.arguments);
    ev({
      type: "response.output_item.added",
      output_index: oi,
      item: { id, type: "function_call", status: "in_progress", arguments: "", call_id, name: c.name },
    });
    for (const piece of splitText(args, c.chunks))
      ev({ type: "response.function_call_arguments.delta", item_id: id, output_index: oi, delta: piece });
    ev({ type: "response.function_call_arguments.done", item_id: id, output_index: oi, arguments: args });
    const done = { id, type: "function_call", status: "completed", arguments: args, call_id, name: c.name };
    ev({ type: "response.output_item.done", output_index: oi, item: done });
    output.push(done);
    oi++;
  });
  const finish = finishOf(reply);
  const usage = responsesUsage(reply.usage);
  if (finish === "outputLimit" || finish === "contentFilter")
    ev({
      type: "response.incomplete",
      response: {
        ...base,
        status: "incomplete",
        incomplete_details: { reason: finish === "outputLimit" ? "max_output_tokens" : "content_filter" },
        output,
        usage,
      },
    });
  else ev({ type: "response.completed", response: { ...base, status: "completed", output, usage } });
  return { kind: "stream", events, terminal: 1 };
}

// ---------------------------------------------------------------------------

function chat(reply: MockReply, ids: Ids): RenderedStream {
  const events: SseEvent[] = [];
  const base = {
    id: `chatcmpl-mock-${ids.n}`,
    object: "chat.completion.chunk",
    created: 0,
    model: ids.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): void => {
    events.push({ data: j({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] }) });
  };
  chunk({ role: "assistant", content: "" });
  const r = reasoningOf(reply.reasoning);
  if (r && !r.redacted) for (const piece of splitText(r.text, r.chunks)) chunk({ reasoning_content: piece });
  if (reply.text !== undefined) for (const piece of textPiecesOf(reply)) chunk({ content: piece });
  (reply.toolCalls ?? []).forEach((c, i) => {
    const pieces = splitText(argsText(c.arguments), c.chunks);
    chunk({
      tool_calls: [
        {
          index: i,
          id: callId("openai-chat", ids, i, c.id),
          type: "function",
          function: { name: c.name, arguments: "" },
        },
      ],
    });
    for (const piece of pieces) chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] });
  });
  const reasons: Record<MockFinish, string> = {
    stop: "stop",
    toolUse: "tool_calls",
    outputLimit: "length",
    contentFilter: "content_filter",
  };
  chunk({}, reasons[finishOf(reply)]);
  let terminal = 2;
  const u = reply.usage;
  if (u) {
    terminal++;
    events.push({
      data: j({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: u.input ?? 0,
          completion_tokens: u.output ?? 0,
          total_tokens: (u.input ?? 0) + (u.output ?? 0),
          prompt_tokens_details: {
            ...(u.cacheRead !== undefined ? { cached_tokens: u.cacheRead } : {}),
            ...(u.cacheWrite !== undefined ? { cache_write_tokens: u.cacheWrite } : {}),
          },
          ...(u.reasoning !== undefined
            ? { completion_tokens_details: { reasoning_tokens: u.reasoning } }
            : {}),
        },
      }),
    });
  }
  events.push({ data: "[DONE]" });
  return { kind: "stream", events, terminal };
}

// ---------------------------------------------------------------------------

function google(reply: MockReply, ids: Ids): RenderedStream {
  const events: SseEvent[] = [];
  const base = { modelVersion: ids.model, responseId: `gresp_mock_${ids.n}` };
  const chunk = (parts: unknown[], extra?: Record<string, unknown>, top?: Record<string, unknown>): void => {
    events.push({
      data: j({ candidates: [{ content: { role: "model", parts }, index: 0, ...extra }], ...top, ...base }),
    });
  };
  const r = reasoningOf(reply.reasoning);
  if (r && !r.redacted) {
    const pieces = splitText(r.text, r.chunks);
    pieces.forEach((piece, i) => {
      const last = i === pieces.length - 1;
      chunk([
        {
          text: piece,
          thought: true,
          ...(last && r.signature !== undefined ? { thoughtSignature: r.signature } : {}),
        },
      ]);
    });
  }
  if (reply.text !== undefined) for (const piece of textPiecesOf(reply)) chunk([{ text: piece }]);
  const calls = reply.toolCalls ?? [];
  if (calls.length > 0)
    chunk(
      calls.map((c, i) => ({
        functionCall: {
          id: callId("google", ids, i, c.id),
          name: c.name,
          args: JSON.parse(argsText(c.arguments)) as unknown,
        },
        ...(c.signature !== undefined ? { thoughtSignature: c.signature } : {}),
      })),
    );
  const reasons: Record<MockFinish, string> = {
    stop: "STOP",
    toolUse: "STOP",
    outputLimit: "MAX_TOKENS",
    contentFilter: "SAFETY",
  };
  const u = reply.usage;
  const usageMetadata = u
    ? {
        promptTokenCount: u.input ?? 0,
        ...(u.cacheRead !== undefined ? { cachedContentTokenCount: u.cacheRead } : {}),
        candidatesTokenCount: (u.output ?? 0) - (u.reasoning ?? 0),
        ...(u.reasoning !== undefined ? { thoughtsTokenCount: u.reasoning } : {}),
        totalTokenCount: (u.input ?? 0) + (u.output ?? 0),
      }
    : undefined;
  chunk(
    [{ text: "" }],
    { finishReason: reasons[finishOf(reply)] },
    usageMetadata ? { usageMetadata } : undefined,
  );
  return { kind: "stream", events, terminal: 1 };
}

/** Renders a reply's body as SSE events in the given wire format. */
export function renderStream(format: WireFormat, given: MockReply, n: number, model: string): RenderedStream {
  const ids = { n, model };
  const reply = given.textPieces ? { ...given, text: given.textPieces.join("") } : given;
  if (reply.raw) {
    const events = reply.raw.map((data): SseEvent => {
      if (format === "anthropic" || format === "openai-responses") {
        try {
          const t = (JSON.parse(data) as { type?: unknown }).type;
          if (typeof t === "string") return { event: t, data };
        } catch {
          // not JSON: sent as is
        }
      }
      return { data };
    });
    return { kind: "stream", events, terminal: 0 };
  }
  switch (format) {
    case "anthropic":
      return anthropic(reply, ids);
    case "openai-responses":
      return responses(reply, ids);
    case "openai-chat":
      return chat(reply, ids);
    case "google":
      return google(reply, ids);
  }
}

export function sseText(e: SseEvent): string {
  return (e.event !== undefined ? `event: ${e.event}\n` : "") + `data: ${e.data}\n\n`;
}
