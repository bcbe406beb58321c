// Which vendors exist, what their model prefixes are and which environment
// variables configure them. No imports: hosts read it on their fast paths
// (`--help`, config checks) without loading Effect or any SDK.

/** The wire dialects `@lash/providers` speaks. */
export type ProviderKind =
  | "anthropic"
  | "openai"
  | "openai-compatible"
  | "google"
  | "codex"
  | "bedrock"
  | "vertex-anthropic";

export const providerKinds: readonly ProviderKind[] = [
  "anthropic",
  "openai",
  "openai-compatible",
  "google",
  "codex",
  "bedrock",
  "vertex-anthropic",
];

/** Model-name prefixes accepted for each kind (`claude/…` is `anthropic/…`). */
export const providerAliases: Record<string, ProviderKind> = {
  anthropic: "anthropic",
  claude: "anthropic",
  openai: "openai",
  "openai-compatible": "openai-compatible",
  "openai-chat": "openai-compatible",
  google: "google",
  gemini: "google",
  codex: "codex",
  bedrock: "bedrock",
  "vertex-anthropic": "vertex-anthropic",
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
  /**
   * How the provider signs in when no key is set: `lash login codex` (tokens in
   * `$LASH_HOME/auth.json`) or the cloud's own credential chain (AWS, Google).
   */
  readonly signIn?: "codex" | "aws" | "google";
  /** Region variables, first set wins (cloud providers). */
  readonly region?: readonly string[];
  /** Project variables, first set wins (Vertex). */
  readonly project?: readonly string[];
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
  // ChatGPT-plan sign-in: no key, the tokens `lash login codex` stored in $LASH_HOME/auth.json.
  codex: {
    keys: [],
    baseUrl: "LASH_CODEX_BASE_URL",
    keyOptional: true,
    baseUrlRequired: false,
    signIn: "codex",
  },
  // A Bedrock API key, else AWS credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO, instance roles).
  bedrock: {
    keys: ["AWS_BEARER_TOKEN_BEDROCK"],
    baseUrl: "ANTHROPIC_BEDROCK_BASE_URL",
    keyOptional: true,
    baseUrlRequired: false,
    signIn: "aws",
    region: ["AWS_REGION", "AWS_DEFAULT_REGION"],
  },
  // A Google OAuth access token, else Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud).
  "vertex-anthropic": {
    keys: ["ANTHROPIC_VERTEX_ACCESS_TOKEN"],
    baseUrl: "ANTHROPIC_VERTEX_BASE_URL",
    keyOptional: true,
    baseUrlRequired: false,
    signIn: "google",
    region: ["CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION"],
    project: ["ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"],
  },
};
