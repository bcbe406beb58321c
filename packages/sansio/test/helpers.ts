import {
  type CompletedToolCall,
  type LlmResponse,
  type LlmResult,
  type Message,
  type Part,
  standardDriver,
  type TurnConfig,
  type TurnEffect,
  TurnMachine,
  type TurnResponse,
  type Usage,
} from "../src/index.ts";

export function userMessage(text: string, id = "u1"): Message {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

export function config(overrides: Partial<TurnConfig> = {}): TurnConfig {
  return {
    sessionId: "s1",
    turnId: "t1",
    model: "openai/gpt-5-mini",
    driver: standardDriver,
    history: [],
    input: [userMessage("hello")],
    system: "You are terse.",
    tools: [{ name: "echo", description: "Echo the text back.", inputSchema: { type: "object" } }],
    ...overrides,
  };
}

export function ok(
  parts: Part[],
  stopReason: LlmResponse["stopReason"] = "stop",
  usage: Usage = {},
): LlmResult {
  return { ok: true, response: { parts, usage, stopReason } };
}

export const text = (t: string): Part => ({ type: "text", text: t });
export const call = (id: string, name: string, args: string): Part => ({
  type: "toolCall",
  id,
  name,
  argumentsText: args,
});

/** What the host answers to each reply-producing effect. */
export interface Host {
  llm: (effect: Extract<TurnEffect, { kind: "callLlm" }>) => LlmResult;
  tools?: (effect: Extract<TurnEffect, { kind: "runTools" }>) => CompletedToolCall[];
  checkpoint?: (effect: Extract<TurnEffect, { kind: "checkpoint" }>) => Message[];
}

export function echoResults(effect: Extract<TurnEffect, { kind: "runTools" }>): CompletedToolCall[] {
  return effect.calls.map((c) => ({
    callId: c.callId,
    name: c.name,
    content: [{ type: "text", text: JSON.stringify(c.args) }],
    isError: false,
  }));
}

export function answer(effect: TurnEffect, host: Host): TurnResponse | undefined {
  switch (effect.kind) {
    case "syncEnvironment":
      return { kind: "environmentSynced", effectId: effect.effectId };
    case "callLlm":
      return { kind: "llmComplete", effectId: effect.effectId, result: host.llm(effect) };
    case "runTools":
      return { kind: "toolResults", effectId: effect.effectId, results: (host.tools ?? echoResults)(effect) };
    case "checkpoint":
      return {
        kind: "checkpointDelivered",
        effectId: effect.effectId,
        messages: host.checkpoint?.(effect) ?? [],
      };
    default:
      return undefined;
  }
}

/** Run a machine to completion, returning every effect it emitted. */
export function run(machine: TurnMachine, host: Host, limit = 10_000): TurnEffect[] {
  const effects: TurnEffect[] = [];
  for (let i = 0; i < limit; i++) {
    const effect = machine.poll();
    if (!effect) throw new Error("machine is waiting but no effect is outstanding");
    effects.push(settle(effect));
    if (effect.kind === "done") return effects;
    const response = answer(effect, host);
    if (response) machine.respond(response);
  }
  throw new Error("turn did not finish");
}

/**
 * A callLlm request's message log is stable only until the host responds (the
 * machine appends to it afterwards); capture it as a host would, at emission.
 */
export function settle(effect: TurnEffect): TurnEffect {
  if (effect.kind !== "callLlm") return effect;
  return { ...effect, request: { ...effect.request, messages: effect.request.messages.slice() } };
}

/** A host that answers LLM calls from a list, in order. */
export function scripted(results: LlmResult[], rest: Omit<Host, "llm"> = {}): Host {
  let i = 0;
  return {
    ...rest,
    llm: () => {
      const r = results[i++];
      if (!r) throw new Error("script exhausted");
      return r;
    },
  };
}

export function replyKinds(effects: TurnEffect[]): string[] {
  return effects
    .filter((e) => "effectId" in e)
    .map((e) => `${(e as { effectId: number }).effectId}:${e.kind}`);
}

export function outcomeOf(effects: TurnEffect[]) {
  const done = effects[effects.length - 1];
  if (done?.kind !== "done") throw new Error("no done effect");
  return done;
}

export { TurnMachine };
