// GenAI semantic-convention values for lash's providers: `gen_ai.provider.name`,
// `server.address` / `server.port`, and finish reasons in each vendor's own words.

/** Well-known hosts of OpenAI-compatible servers → their `gen_ai.provider.name`. */
const KNOWN_HOSTS: readonly [RegExp, string][] = [
  [/(^|\.)api\.openai\.com$/, "openai"],
  [/\.openai\.azure\.com$/, "azure.ai.openai"],
  [/(^|\.)api\.deepseek\.com$/, "deepseek"],
  [/(^|\.)api\.groq\.com$/, "groq"],
  [/(^|\.)api\.mistral\.ai$/, "mistral_ai"],
  [/(^|\.)api\.x\.ai$/, "x_ai"],
  [/(^|\.)api\.perplexity\.ai$/, "perplexity"],
  [/(^|\.)openrouter\.ai$/, "openrouter"],
  [/(^|\.)api\.together\.(xyz|ai)$/, "together_ai"],
  [/(^|\.)api\.fireworks\.ai$/, "fireworks_ai"],
  [/(^|\.)generativelanguage\.googleapis\.com$/, "gcp.gemini"],
  [/(^|\.)api\.anthropic\.com$/, "anthropic"],
];

/** Default base URLs of the vendors lash speaks to (when no base URL is configured). */
const DEFAULT_URLS: { readonly [provider: string]: string } = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  google: "https://generativelanguage.googleapis.com",
};

export interface ProviderAttrs {
  /** `gen_ai.provider.name` */
  readonly name?: string;
  readonly address?: string;
  readonly port?: number;
}

/**
 * `provider` is lash's name (`openai`, `anthropic`, `google`, `openai-compatible`); `baseUrl`
 * the URL requests go to (the vendor's default when absent). An OpenAI-compatible endpoint is
 * named by its host when it is a known service, by Ollama's default port 11434, else `openai_compatible`.
 */
export function providerOf(provider: string | undefined, baseUrl: string | undefined): ProviderAttrs {
  if (provider === undefined) return {};
  const urlText = baseUrl ?? DEFAULT_URLS[provider];
  let url: URL | undefined;
  try {
    url = urlText ? new URL(urlText) : undefined;
  } catch {
    url = undefined;
  }
  const address = url?.hostname.replace(/^\[|\]$/g, "");
  const port = url ? (url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80) : undefined;
  const server = address !== undefined ? { address, ...(port !== undefined ? { port } : {}) } : {};
  switch (provider) {
    case "openai":
      return { name: "openai", ...server };
    case "anthropic":
      return { name: "anthropic", ...server };
    case "google":
      return { name: "gcp.gemini", ...server };
    case "openai-compatible": {
      const known = address !== undefined ? KNOWN_HOSTS.find(([re]) => re.test(address))?.[1] : undefined;
      const name = known ?? (port === 11434 ? "ollama" : "openai_compatible");
      return { name, ...server };
    }
    default:
      return { name: provider, ...server };
  }
}

/** lash's normalized stop reasons in each vendor's own vocabulary (`gen_ai.response.finish_reasons`). */
const FINISH: { readonly [provider: string]: { readonly [reason: string]: string } } = {
  // Chat Completions' finish_reason (also what OpenAI-compatible servers send)
  openai: {
    stop: "stop",
    toolUse: "tool_calls",
    outputLimit: "length",
    contextOverflow: "length",
    contentFilter: "content_filter",
  },
  anthropic: {
    stop: "end_turn",
    toolUse: "tool_use",
    outputLimit: "max_tokens",
    contextOverflow: "model_context_window_exceeded",
    contentFilter: "refusal",
  },
  google: {
    stop: "STOP",
    toolUse: "STOP",
    outputLimit: "MAX_TOKENS",
    contextOverflow: "MAX_TOKENS",
    contentFilter: "SAFETY",
  },
};

export function finishReasonFor(provider: string | undefined, reason: string): string {
  const table = FINISH[provider === "openai-compatible" ? "openai" : (provider ?? "")];
  return table?.[reason] ?? reason;
}
