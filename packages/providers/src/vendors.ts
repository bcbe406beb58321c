// Which vendors exist, what their model prefixes are and which environment
// variables configure them. No imports: hosts read it on their fast paths
// (`--help`, config checks) without loading Effect or any SDK.

/** The wire dialects `@lash/providers` speaks. */
export type ProviderKind = "anthropic" | "openai" | "openai-compatible" | "google";

export const providerKinds: readonly ProviderKind[] = ["anthropic", "openai", "openai-compatible", "google"];

/** Model-name prefixes accepted for each kind (`claude/…` is `anthropic/…`). */
export const providerAliases: Record<string, ProviderKind> = {
  anthropic: "anthropic",
  claude: "anthropic",
  openai: "openai",
  "openai-compatible": "openai-compatible",
  "openai-chat": "openai-compatible",
  google: "google",
  gemini: "google",
};

/** The provider kind of a `provider/model` name, or undefined when the prefix is unknown. */
export function providerKindOf(model: string): ProviderKind | undefined {
  const slash = model.indexOf("/");
  return slash > 0 ? providerAliases[model.slice(0, slash).toLowerCase()] : undefined;
}

export interface EnvSpec {
  readonly keys: readonly string[];
  readonly baseUrl: string;
  /** Does the provider work without a key? */
  readonly keyOptional: boolean;
  readonly baseUrlRequired: boolean;
}

/** Environment variables per provider kind. */
export const providerEnv: Record<ProviderKind, EnvSpec> = {
  anthropic: {
    keys: ["ANTHROPIC_API_KEY"],
    baseUrl: "ANTHROPIC_BASE_URL",
    keyOptional: false,
    baseUrlRequired: false,
  },
  openai: {
    keys: ["OPENAI_API_KEY"],
    baseUrl: "OPENAI_BASE_URL",
    keyOptional: false,
    baseUrlRequired: false,
  },
  "openai-compatible": {
    keys: ["OPENAI_COMPATIBLE_API_KEY"],
    baseUrl: "OPENAI_COMPATIBLE_BASE_URL",
    keyOptional: true,
    baseUrlRequired: true,
  },
  google: {
    keys: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    baseUrl: "GOOGLE_GEMINI_BASE_URL",
    keyOptional: false,
    baseUrlRequired: false,
  },
};
