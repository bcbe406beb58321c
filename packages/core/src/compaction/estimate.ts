import type { Message, Part, ToolSpec, Usage } from "@lash/sansio";

/**
 * Token accounting without a tokenizer: about four characters a token (the common rate
 * of English text and code under the vendors' tokenizers), a few tokens of framing per
 * message and part, a flat price per attachment. A reported usage calibrates it: the
 * ratio of the tokens the provider counted to the estimate of the same request scales
 * later estimates (clamped, so one odd report cannot make it absurd).
 */

const CHARS_PER_TOKEN = 4;
const PER_MESSAGE = 4;
const PER_PART = 3;
/** An image or file attachment: vendors charge roughly this for a typical screenshot. */
const PER_ATTACHMENT = 1_000;

function partChars(p: Part): number {
  switch (p.type) {
    case "text":
    case "reasoning":
    case "output":
      return p.text.length;
    case "toolCall":
      return p.name.length + p.argumentsText.length;
    case "toolResult": {
      let n = p.name.length;
      for (const c of p.content) n += c.type === "text" ? c.text.length : PER_ATTACHMENT * CHARS_PER_TOKEN;
      return n;
    }
    case "code":
      return p.source.length;
    case "error":
      return p.message.length;
    case "attachment":
      return PER_ATTACHMENT * CHARS_PER_TOKEN;
  }
}

/** Raw estimate of one message's tokens. */
export function messageTokens(m: Message): number {
  let chars = 0;
  for (const p of m.parts) chars += partChars(p);
  return PER_MESSAGE + m.parts.length * PER_PART + Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Raw estimate of a text's tokens. */
export function textTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

const toolTokens = new WeakMap<readonly ToolSpec[], number>();

/**
 * A request estimate that grows with the turn's append-only message log: the messages already
 * counted (compared by identity) are not counted again, so a model call costs what it added.
 */
export class RunningEstimate {
  private messages: readonly Message[] = [];
  private counted = 0;
  private tokens = 0;

  of(r: {
    readonly system?: string | undefined;
    readonly messages: readonly Message[];
    readonly tools?: readonly ToolSpec[] | undefined;
  }): number {
    const ms = r.messages;
    const same =
      this.counted > 0 &&
      ms.length >= this.counted &&
      (ms === this.messages ||
        (ms[0] === this.messages[0] && ms[this.counted - 1] === this.messages[this.counted - 1]));
    if (!same) {
      this.counted = 0;
      this.tokens = 0;
    }
    for (let i = this.counted; i < ms.length; i++) this.tokens += messageTokens(ms[i]!);
    this.messages = ms;
    this.counted = ms.length;
    return this.tokens + requestTokens({ system: r.system, messages: [], tools: r.tools });
  }
}

/** Raw estimate of a request: system prompt, messages and tool specs (cached per tool list). */
export function requestTokens(r: {
  readonly system?: string | undefined;
  readonly messages: readonly Message[];
  readonly tools?: readonly ToolSpec[] | undefined;
}): number {
  let n = r.system ? textTokens(r.system) : 0;
  for (const m of r.messages) n += messageTokens(m);
  if (r.tools && r.tools.length > 0) {
    let t = toolTokens.get(r.tools);
    if (t === undefined) {
      t = textTokens(JSON.stringify(r.tools));
      toolTokens.set(r.tools, t);
    }
    n += t;
  }
  return n;
}

/** The input tokens a provider reported for a request (cache buckets included); undefined when it reported none. */
export function reportedInput(usage: Usage): number | undefined {
  if (usage.input === undefined) return undefined;
  return usage.input;
}

/** Per-session calibration: reported / estimated, from the last call that reported usage. */
export class Calibration {
  private readonly ratios = new Map<string, number>();

  /** Record a call: `estimated` raw tokens were counted as `reported` by the provider. */
  observe(sessionId: string, estimated: number, reported: number | undefined): void {
    if (reported === undefined || reported <= 0 || estimated <= 0) return;
    this.ratios.set(sessionId, Math.min(4, Math.max(0.5, reported / estimated)));
  }

  /** The calibrated estimate (never below the raw one: a short count must not hide an overflow). */
  scale(sessionId: string, raw: number): number {
    const r = this.ratios.get(sessionId);
    return r === undefined || r < 1 ? raw : Math.ceil(raw * r);
  }

  forget(sessionId: string): void {
    this.ratios.delete(sessionId);
  }
}
