import * as Schema from "effect/Schema";

/**
 * Token usage in five buckets. An unknown count is absent, never zero.
 * - `input`: every prompt token, including cache reads and cache writes.
 * - `output`: every generated token, reasoning included.
 * - `reasoning`: the reasoning share of `output`.
 * - `cacheRead` / `cacheWrite`: the cached shares of `input`.
 */
export const Usage = Schema.Struct({
  input: Schema.optional(Schema.Number),
  output: Schema.optional(Schema.Number),
  reasoning: Schema.optional(Schema.Number),
  cacheRead: Schema.optional(Schema.Number),
  cacheWrite: Schema.optional(Schema.Number),
});
export type Usage = typeof Usage.Type;

const buckets = ["input", "output", "reasoning", "cacheRead", "cacheWrite"] as const;

/** Sum two usages bucket by bucket; a bucket absent on both sides stays absent. */
export function addUsage(a: Usage, b: Usage): Usage {
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {};
  for (const k of buckets) {
    const x = a[k];
    const y = b[k];
    if (x !== undefined || y !== undefined) out[k] = (x ?? 0) + (y ?? 0);
  }
  return out;
}

/** Prices in USD per million tokens. */
export const Pricing = Schema.Struct({
  input: Schema.Number,
  output: Schema.Number,
  cacheRead: Schema.optional(Schema.Number),
  cacheWrite: Schema.optional(Schema.Number),
});
export type Pricing = typeof Pricing.Type;

/** What the host knows about a model. */
export const ModelInfo = Schema.Struct({
  /** `provider/model` */
  id: Schema.String,
  contextWindow: Schema.Number,
  maxOutput: Schema.Number,
  reasoning: Schema.Boolean,
  images: Schema.Boolean,
  caching: Schema.Boolean,
  pricing: Schema.optional(Pricing),
});
export type ModelInfo = typeof ModelInfo.Type;

/**
 * Cost in USD of one call. Uncached input is `input - cacheRead - cacheWrite`;
 * cache buckets without their own price are charged at the input price.
 * Absent (undefined) when the price is unknown or the usage has no counts.
 */
export function costOf(usage: Usage, pricing: Pricing | undefined): number | undefined {
  if (!pricing) return undefined;
  if (usage.input === undefined && usage.output === undefined) return undefined;
  const cacheRead = usage.cacheRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  const uncached = Math.max(0, (usage.input ?? 0) - cacheRead - cacheWrite);
  const micro =
    uncached * pricing.input +
    cacheRead * (pricing.cacheRead ?? pricing.input) +
    cacheWrite * (pricing.cacheWrite ?? pricing.input) +
    (usage.output ?? 0) * pricing.output;
  return micro / 1_000_000;
}
