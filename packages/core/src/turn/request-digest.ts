import { canonicalJson, type LlmRequest, type Message, sha256Hex } from "@lash/sansio";

/** Per turn: the request digests' cache (`TurnScope.digests`). */
export interface DigestCache {
  messages: readonly Message[];
  prefix: string[];
  /** The session: a new turn's first request starts from the chain of its last turn (`seeds`). */
  readonly session?: string;
  /** The canonical JSON of the envelope's request fields around `messages`, and the request they were taken of. */
  rest?: { readonly source: LlmRequest; readonly before: string; readonly after: string } | undefined;
}

const toolsDigest = new WeakMap<object, string>();
/**
 * Per session (the most recently begun, bounded: `SEEDS`, `SEEDED_MESSAGES`): the digest cache of
 * its last turn. A new turn starts from there — a store returns the same message objects for a
 * path it read before, so it hashes only what is new since the last turn. One entry per session, not a WeakMap entry per
 * message (those ephemerons cost the garbage collector more per round trip than they saved).
 * Any seed is safe: a digest is reused only for the very message object at the same position
 * after an equal chain.
 */
const seeds = new Map<string, DigestCache>();
/** At most this many sessions, and about this many messages in all (a seed holds its request's messages). */
const SEEDS = 256;
const SEEDED_MESSAGES = 20_000;

function seed(cache: DigestCache): void {
  const session = cache.session;
  if (session === undefined) return;
  const last = seeds.get(session);
  if (last !== undefined && last !== cache) {
    cache.messages = last.messages;
    cache.prefix = last.prefix;
  }
  seeds.delete(session);
  seeds.set(session, cache);
  let total = 0;
  for (const c of seeds.values()) total += c.messages.length;
  // the least recently begun first
  for (const [key, c] of seeds) {
    if (c === cache || (seeds.size <= SEEDS && total <= SEEDED_MESSAGES)) break;
    seeds.delete(key);
    total -= c.messages.length;
  }
}

/** How many sessions' chains are kept, and their messages in all (tests: the bounds hold). */
export function seeded(): { readonly sessions: number; readonly messages: number } {
  let messages = 0;
  for (const c of seeds.values()) messages += c.messages.length;
  return { sessions: seeds.size, messages };
}

/** The chained digest of the request's messages (see `requestDigest`) and the tool list's digest. */
function digestsOf(cache: DigestCache, request: LlmRequest): { messages: string; tools: string | undefined } {
  const messages = request.messages;
  // the turn's first request: start from the chain of the session's last turn
  if (cache.messages.length === 0) seed(cache);
  const known = cache.messages;
  const knownPrefix = cache.prefix;
  let same = 0;
  const limit = Math.min(messages.length, known.length);
  while (same < limit && messages[same] === known[same]) same++;
  const prefix = knownPrefix.slice(0, same);
  for (let i = same; i < messages.length; i++) {
    const prev = prefix[i - 1] ?? "";
    // the same message object after an equal chain (a history re-read from its head): the same digest
    prefix.push(
      i < limit && messages[i] === known[i] && knownPrefix[i - 1] === prev
        ? knownPrefix[i]!
        : sha256Hex(`${prev}:${canonicalJson(messages[i]!)}`),
    );
  }
  cache.messages = messages;
  cache.prefix = prefix;
  let tools: string | undefined;
  if (request.tools) {
    tools = toolsDigest.get(request.tools);
    if (tools === undefined) {
      tools = sha256Hex(canonicalJson(request.tools));
      toolsDigest.set(request.tools, tools);
    }
  }
  return { messages: prefix[prefix.length - 1] ?? "", tools };
}

/**
 * What the journal hashes for a model request, at a cost independent of the session's
 * length: the messages become one chained digest (each step hashes the previous digest
 * and the new message, and the chain of the previous request — of this turn, or of the last
 * turn of the conversation — is reused up to the first message that differs; messages are
 * compared by identity), the tool list one cached digest. Replay compares the same digests,
 * so a changed history is still a mismatch.
 */
export function requestDigest(cache: DigestCache, request: LlmRequest): unknown {
  const d = digestsOf(cache, request);
  return {
    ...request,
    messages: { count: request.messages.length, digest: d.messages },
    ...(d.tools !== undefined ? { tools: d.tools } : {}),
  };
}

/** The fields other than `messages` hold the same values (by identity) as in `b`. */
function sameRest(a: LlmRequest, b: LlmRequest): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka)
    if (k !== "messages" && (a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k])
      return false;
  return true;
}

/**
 * `sha256Hex(canonicalJson({ kind, effectId, iteration, request: requestDigest(cache, request) }))` —
 * the callLlm envelope's hash, the same value — written from cached pieces: the request's fields
 * other than `messages` (model, system prompt, tools, options), unchanged from one call of a turn
 * to the next, are serialized once per turn, not per call.
 */
export function envelopeHash(
  cache: DigestCache,
  head: { readonly kind: string; readonly effectId: number; readonly iteration: number },
  request: LlmRequest,
): string {
  const d = digestsOf(cache, request);
  let rest = cache.rest;
  if (rest === undefined || !sameRest(request, rest.source)) {
    const fields = { ...request, ...(d.tools !== undefined ? { tools: d.tools } : {}) } as Record<
      string,
      unknown
    >;
    const keys = Object.keys(fields).sort();
    const before: string[] = [];
    const after: string[] = [];
    for (const key of keys) {
      if (key === "messages") continue;
      const value = fields[key];
      if (value === undefined || typeof value === "function" || typeof value === "symbol") continue;
      (key < "messages" ? before : after).push(`${JSON.stringify(key)}:${canonicalJson(value)}`);
    }
    rest = {
      source: request,
      before: before.map((p) => `${p},`).join(""),
      after: after.map((p) => `,${p}`).join(""),
    };
    cache.rest = rest;
  }
  return sha256Hex(
    `{"effectId":${canonicalJson(head.effectId)},"iteration":${canonicalJson(head.iteration)},"kind":${canonicalJson(head.kind)},` +
      `"request":{${rest.before}"messages":{"count":${request.messages.length},"digest":${canonicalJson(d.messages)}}${rest.after}}}`,
  );
}
