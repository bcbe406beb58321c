/**
 * What the runtime remembers about one message object (a message is immutable, and a session's
 * history is the same objects from request to request, so each is converted, stripped or
 * measured once). Kept on the object itself, under a non-enumerable symbol property, instead of
 * in a WeakMap per cache: every WeakMap entry is an ephemeron the garbage collector must trace
 * on each cycle, and with two new messages per model round trip over three caches that cost
 * more than the caching saved (issue 16). The property is invisible to `JSON.stringify`,
 * `Object.keys`, spreads and canonical hashing; one record per object keeps its shape stable
 * whichever cache fills first. A frozen object gets a fresh record each time (no caching).
 */
const MEMO: unique symbol = Symbol("lash.memo");

export interface MessageMemo {
  /** The message without lash's own call ids (sansio machine). */
  stripped?: unknown;
  /** Its length as JSON, for the rate limiter's token estimate (providers). */
  chars?: number;
  /** Its Chat Completions form (providers, openai-compatible adapter). */
  chat?: unknown;
}

/** The memo record of `target`, made on first use. */
export function memoOf(target: object): MessageMemo {
  const known = (target as { [MEMO]?: MessageMemo })[MEMO];
  if (known !== undefined) return known;
  const memo: MessageMemo = {};
  if (Object.isExtensible(target)) Object.defineProperty(target, MEMO, { value: memo });
  return memo;
}
