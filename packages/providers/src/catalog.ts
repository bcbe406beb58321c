import type { ModelInfo, Pricing, Usage } from "@lash/sansio";
import { costOf } from "@lash/sansio";

/** The date the built-in list prices were taken from the vendors' pricing pages. */
export const catalogDate = "2025-11-20";

type Entry = [
  id: string,
  contextWindow: number,
  maxOutput: number,
  caps: { reasoning: boolean; images: boolean; caching: boolean },
  pricing: Pricing,
];

const R = { reasoning: true, images: true, caching: true };
const N = { reasoning: false, images: true, caching: true };

/** List prices in USD per million tokens (input, output, cache read, cache write). */
const builtins: readonly Entry[] = [
  // Anthropic: cache write = 5-minute cache write price (1.25× input), cache read = 0.1× input.
  [
    "anthropic/claude-opus-4-5",
    200_000,
    64_000,
    R,
    { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  ],
  [
    "anthropic/claude-opus-4-1",
    200_000,
    32_000,
    R,
    { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  ],
  [
    "anthropic/claude-opus-4",
    200_000,
    32_000,
    R,
    { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  ],
  [
    "anthropic/claude-sonnet-4-5",
    200_000,
    64_000,
    R,
    { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  ],
  [
    "anthropic/claude-sonnet-4",
    200_000,
    64_000,
    R,
    { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  ],
  [
    "anthropic/claude-haiku-4-5",
    200_000,
    64_000,
    R,
    { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  ],
  [
    "anthropic/claude-3-5-haiku",
    200_000,
    8_192,
    N,
    { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  ],
  // OpenAI: caching is automatic; writes are not billed separately (absent = input price).
  ["openai/gpt-5", 400_000, 128_000, R, { input: 1.25, output: 10, cacheRead: 0.125 }],
  ["openai/gpt-5-mini", 400_000, 128_000, R, { input: 0.25, output: 2, cacheRead: 0.025 }],
  ["openai/gpt-5-nano", 400_000, 128_000, R, { input: 0.05, output: 0.4, cacheRead: 0.005 }],
  ["openai/gpt-4.1", 1_047_576, 32_768, N, { input: 2, output: 8, cacheRead: 0.5 }],
  ["openai/gpt-4.1-mini", 1_047_576, 32_768, N, { input: 0.4, output: 1.6, cacheRead: 0.1 }],
  ["openai/gpt-4.1-nano", 1_047_576, 32_768, N, { input: 0.1, output: 0.4, cacheRead: 0.025 }],
  ["openai/gpt-4o", 128_000, 16_384, N, { input: 2.5, output: 10, cacheRead: 1.25 }],
  ["openai/gpt-4o-mini", 128_000, 16_384, N, { input: 0.15, output: 0.6, cacheRead: 0.075 }],
  ["openai/o3", 200_000, 100_000, R, { input: 2, output: 8, cacheRead: 0.5 }],
  ["openai/o4-mini", 200_000, 100_000, R, { input: 1.1, output: 4.4, cacheRead: 0.275 }],
  // Google: prices of the ≤200k-token prompt tier; implicit caching (reads only).
  ["google/gemini-2.5-pro", 1_048_576, 65_536, R, { input: 1.25, output: 10, cacheRead: 0.125 }],
  ["google/gemini-2.5-flash", 1_048_576, 65_536, R, { input: 0.3, output: 2.5, cacheRead: 0.03 }],
  ["google/gemini-2.5-flash-lite", 1_048_576, 65_536, R, { input: 0.1, output: 0.4, cacheRead: 0.01 }],
  ["google/gemini-2.0-flash", 1_048_576, 8_192, N, { input: 0.1, output: 0.4, cacheRead: 0.025 }],
];

/**
 * Codex models (ChatGPT-plan sign-in): billed to the plan, so no per-token price (cost absent).
 * Limits are those of the API models they share a family with.
 */
const codexModels: readonly string[] = [
  "gpt-5-codex",
  "gpt-5.1-codex",
  "gpt-5.1-codex-mini",
  "gpt-5.1-codex-max",
  "gpt-5",
  "gpt-5.1",
];

function codexInfo(model: string): ModelInfo {
  return {
    id: `codex/${model}`,
    contextWindow: 400_000,
    maxOutput: 128_000,
    ...R,
  };
}

/**
 * The Anthropic catalog id of a Claude model named the cloud's way:
 * `bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0` and
 * `vertex-anthropic/claude-sonnet-4-5@20250929` are `anthropic/claude-sonnet-4-5-20250929`.
 */
function anthropicIdOf(id: string): string | undefined {
  const slash = id.indexOf("/");
  const provider = id.slice(0, slash);
  const model = id.slice(slash + 1);
  if (provider === "bedrock") {
    const m = /^(?:[a-z]{2,4}\.)?anthropic\.(claude-[a-z0-9.-]+?)(?:-v\d+(?::\d+)?)?$/.exec(model);
    return m?.[1] ? `anthropic/${m[1]}` : undefined;
  }
  if (provider === "vertex-anthropic") {
    const m = /^(claude-[a-z0-9.-]+?)(?:@(\d{8}))?$/.exec(model);
    return m?.[1] ? `anthropic/${m[1]}${m[2] ? `-${m[2]}` : ""}` : undefined;
  }
  return undefined;
}

function entryToInfo([id, contextWindow, maxOutput, caps, pricing]: Entry): ModelInfo {
  return { id, contextWindow, maxOutput, ...caps, pricing };
}

/** Defaults for a model the catalog does not know: generous limits, no pricing (cost absent). */
export function unknownModelInfo(id: string): ModelInfo {
  const provider = id.slice(0, id.indexOf("/"));
  const claude = provider === "anthropic" || provider === "bedrock" || provider === "vertex-anthropic";
  return {
    id,
    contextWindow: 128_000,
    maxOutput: claude ? 32_768 : 16_384,
    // every model served to ChatGPT-plan sign-in reasons
    reasoning: provider === "codex",
    images: true,
    caching: claude,
  };
}

export interface ResolvedModel {
  readonly info: ModelInfo;
  readonly known: boolean;
  /** Set for an unknown model: it is allowed, but its cost is absent. */
  readonly warning?: string;
}

/** Strips dated snapshot suffixes: `claude-sonnet-4-5-20250929`, `gpt-5-mini-2025-08-07`. */
function undated(id: string): string {
  return id.replace(/-(?:\d{8}|\d{4}-\d{2}-\d{2})$/, "");
}

/**
 * What the host knows about models: context window, output cap, capabilities, list prices.
 * Mutable: the host can add entries and override fields (e.g. negotiated prices).
 */
export class ModelCatalog {
  private readonly entries = new Map<string, ModelInfo>();

  constructor(entries: Iterable<ModelInfo> = []) {
    for (const e of entries) this.entries.set(e.id, e);
  }

  /** A fresh catalog holding the built-in entries (list prices as of {@link catalogDate}). */
  static default(): ModelCatalog {
    return new ModelCatalog([...builtins.map(entryToInfo), ...codexModels.map(codexInfo)]);
  }

  /**
   * Exact id, or the id without a dated snapshot suffix; a Claude model on Bedrock or
   * Vertex resolves to its Anthropic entry (same limits and list prices) under its own id.
   */
  lookup(id: string): ModelInfo | undefined {
    const direct = this.entries.get(id) ?? this.entries.get(undated(id));
    if (direct) return direct;
    const claude = anthropicIdOf(id);
    const info = claude ? (this.entries.get(claude) ?? this.entries.get(undated(claude))) : undefined;
    return info ? { ...info, id } : undefined;
  }

  /** Like `lookup`, but an unknown model resolves to defaults without pricing, plus a warning. */
  resolve(id: string): ResolvedModel {
    const info = this.lookup(id);
    if (info) return { info, known: true };
    return {
      info: unknownModelInfo(id),
      known: false,
      warning: `model "${id}" is not in the catalog: using default limits; its cost will be absent (add it with catalog.add)`,
    };
  }

  /** Adds or replaces an entry. */
  add(info: ModelInfo): this {
    this.entries.set(info.id, info);
    return this;
  }

  /** Changes fields of an entry (which must exist, or is created from the unknown-model defaults). */
  override(id: string, patch: Partial<Omit<ModelInfo, "id">>): this {
    const base = this.lookup(id) ?? unknownModelInfo(id);
    this.entries.set(id, { ...base, ...patch, id });
    return this;
  }

  remove(id: string): this {
    this.entries.delete(id);
    return this;
  }

  list(): ModelInfo[] {
    return [...this.entries.values()];
  }

  /** USD cost of one call; absent when the model or its price is unknown. */
  costOf(id: string, usage: Usage): number | undefined {
    return costOf(usage, this.lookup(id)?.pricing);
  }
}
