import {
  type ExecResult,
  type LlmRequest,
  type LlmResult,
  type Message,
  type RlmEnvironment,
  type RlmOperation,
  rlmDriver,
  rlmProjector,
  type TurnConfig,
  type TurnEffect,
  TurnMachine,
} from "../../src/index.ts";

export const text = (t: string): LlmResult => ({
  ok: true,
  response: { parts: [{ type: "text", text: t }], usage: { input: 10, output: 5 }, stopReason: "stop" },
});

export const cell = (code: string, prose = ""): LlmResult =>
  text(`${prose ? `${prose}\n` : ""}<lashlang>\n${code}\n</lashlang>\n`);

export const operations: RlmOperation[] = [
  {
    name: "read_file",
    module: "files",
    operation: "read",
    description: "Read a text file.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File path." },
        limit: { type: "integer", description: "Maximum lines." },
      },
      required: ["path"],
      additionalProperties: false,
    },
    returns: "{path, content, totalLines}",
  },
];

export interface DriveOptions {
  readonly responses: readonly LlmResult[];
  /** Answers an execCode effect (default: a cell that printed nothing). */
  readonly exec?: (code: string, index: number) => ExecResult;
  readonly environment?: RlmEnvironment | ((iteration: number) => RlmEnvironment);
  readonly maxTurns?: number;
  readonly history?: readonly Message[];
  readonly input?: string;
}

export interface Driven {
  readonly effects: TurnEffect[];
  readonly requests: LlmRequest[];
  readonly codes: string[];
  readonly done: Extract<TurnEffect, { kind: "done" }>;
}

/** Run an rlm turn against scripted model responses and a scripted executor. */
export function drive(options: DriveOptions): Driven {
  const env = options.environment;
  const driver = rlmDriver({
    environment: (ctx) =>
      typeof env === "function"
        ? env(ctx.iteration)
        : (env ?? { termination: { kind: "natural" }, bindings: [] }),
  });
  const config: TurnConfig = {
    sessionId: "s1",
    turnId: "t1",
    model: "openai/gpt-5-mini",
    driver,
    projector: rlmProjector({ operations: () => operations }),
    history: options.history ?? [],
    input: [{ id: "u1", role: "user", parts: [{ type: "text", text: options.input ?? "Count the lines." }] }],
    system: "You are lash, a coding agent.",
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
  };
  const machine = new TurnMachine(config);
  const effects: TurnEffect[] = [];
  const requests: LlmRequest[] = [];
  const codes: string[] = [];
  let llm = 0;
  for (let guard = 0; guard < 1000; guard++) {
    const effect = machine.poll();
    if (!effect) throw new Error("machine stalled");
    effects.push(effect);
    switch (effect.kind) {
      case "done":
        return { effects, requests, codes, done: effect };
      case "syncEnvironment":
        machine.respond({ kind: "environmentSynced", effectId: effect.effectId });
        break;
      case "callLlm": {
        requests.push({ ...effect.request, messages: effect.request.messages.slice() });
        const result = options.responses[llm++];
        if (!result) throw new Error(`no scripted response for model call ${llm}`);
        machine.respond({ kind: "llmComplete", effectId: effect.effectId, result });
        break;
      }
      case "execCode": {
        codes.push(effect.code);
        const result = options.exec?.(effect.code, codes.length - 1) ?? { ok: true, output: [] };
        machine.respond({ kind: "execResult", effectId: effect.effectId, result });
        break;
      }
      case "checkpoint":
        machine.respond({ kind: "checkpointDelivered", effectId: effect.effectId, messages: [] });
        break;
      default:
        break;
    }
  }
  throw new Error("turn did not finish");
}

export function protocolEvents(effects: readonly TurnEffect[], name: string): unknown[] {
  return effects.flatMap((e) =>
    e.kind === "emit" && e.event.type === "protocol" && e.event.name === name ? [e.event.data] : [],
  );
}

/** A request as plain text (for snapshots and `toContain`). */
export function requestText(request: LlmRequest): string {
  const out = [`## system\n${request.system ?? ""}`];
  for (const m of request.messages) {
    const body = m.parts
      .map((p) =>
        p.type === "text" ? p.text : `[${p.type}${p.type === "attachment" ? ` ${p.mediaType}` : ""}]`,
      )
      .join("\n");
    out.push(`## ${m.role}\n${body}`);
  }
  return `${out.join("\n\n")}\n`;
}

export function lastUserText(request: LlmRequest): string {
  const m = request.messages[request.messages.length - 1]!;
  return m.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
}
