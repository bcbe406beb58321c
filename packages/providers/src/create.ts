import { callOf, type LlmProvider, type ModelInfo, withCall } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Stream from "effect/Stream";
import type { AdapterConfig } from "./adapters/shared.ts";
import { CODEX_BASE_URL, codexAuthConfig } from "./auth/codex.ts";
import { defaultAuthFile, readCodexTokens } from "./auth/store.ts";
import { type CodexTokenSource, fileCodexTokens, staticCodexToken } from "./auth/token-source.ts";
import { ModelCatalog } from "./catalog.ts";
import type { ModelId } from "./model-id.ts";
import { providerEnv } from "./vendors.ts";

export { providerEnv } from "./vendors.ts";

import { ProviderConfigError, parseModelId } from "./model-id.ts";
import { keyLimiter, type RateLimits, withRateLimit } from "./ratelimit.ts";
import type { RetryPolicy } from "./retry.ts";
import { withRetry } from "./retry.ts";
import { type OutputValidator, withOutputCheck } from "./structured.ts";

export interface CreateProviderOptions {
  /** API key; default from the provider's environment variable. */
  readonly apiKey?: string;
  /** Base URL; default from the environment, else the vendor's. */
  readonly baseUrl?: string;
  /** Environment to read keys and base URLs from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Model catalog (default: a fresh `ModelCatalog.default()`). */
  readonly catalog?: ModelCatalog;
  /** Retry policy, or `false` for no retry layer. */
  readonly retry?: Partial<RetryPolicy> | false;
  /** The SDK's own timeout for one HTTP request, in milliseconds (default: the deadline). */
  readonly timeoutMs?: number;
  /** An attempt with no data (no bytes, no events) for exactly this long fails with a retryable `timeout` (default 120 s; 0 = off). */
  readonly idleTimeoutMs?: number;
  /**
   * Total time for one model call, every attempt and wait included (default 10 minutes; 0 = none).
   * Shorthand for `retry: { deadlineMs }`; a Retry-After past it fails at once.
   */
  readonly deadlineMs?: number;
  /** Extra HTTP headers on every request. */
  readonly headers?: Record<string, string>;
  /** Cloud region (Bedrock: default `AWS_REGION`, else us-east-1; Vertex: default `CLOUD_ML_REGION`, else global). */
  readonly region?: string;
  /** Google Cloud project (Vertex; default `ANTHROPIC_VERTEX_PROJECT_ID` / `GOOGLE_CLOUD_PROJECT`, else from the credentials). */
  readonly project?: string;
  /** Codex: the sign-in file (default `$LASH_HOME/auth.json`, i.e. `~/.lash/auth.json`). */
  readonly authFile?: string;
  /** Codex: where the bearer token comes from (default: the sign-in in `authFile`; `apiKey` = a fixed token). */
  readonly codexTokens?: CodexTokenSource;
  /**
   * Validates structured-output replies (`LlmRequest.output`); default `defaultOutputValidator`
   * (`@cfworker/json-schema`). Hosts pass core's `validateJson` for its wording.
   */
  readonly validateOutput?: OutputValidator;
  /**
   * Client-side rate limits for this provider key (`{ rpm, tpm }` per minute), shared by every
   * handle of the same provider, base URL and key in the process; `false` turns the limiter off.
   * Default: on, learning the limits from the vendor's rate-limit headers.
   */
  readonly rateLimits?: RateLimits | false;
}

/** A ready provider plus what the catalog knows about its model. */
export interface ProviderHandle extends LlmProvider {
  readonly modelId: ModelId;
  readonly info: ModelInfo;
  /** Warnings raised while building it (e.g. a model unknown to the catalog). */
  readonly warnings: readonly string[];
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v;
}

/**
 * Builds a provider for `provider/model` (`anthropic/claude-sonnet-4-5`, `openai/gpt-5-mini`,
 * `google/gemini-2.5-flash`, `openai-compatible/<model>`, `codex/gpt-5-codex` (ChatGPT-plan
 * sign-in), `bedrock/<bedrock model id>`, `vertex-anthropic/<vertex model id>`), with keys and base URLs from
 * the options or the environment, wrapped in the retry layer (unless `retry: false`).
 * Throws `ProviderConfigError` naming the environment variable when a key or base URL is missing.
 */
export function createProvider(model: string, options: CreateProviderOptions = {}): ProviderHandle {
  const id = parseModelId(model);
  const env = options.env ?? process.env;
  const spec = providerEnv[id.provider];
  const apiKey =
    nonEmpty(options.apiKey) ?? spec.keys.map((k) => nonEmpty(env[k])).find((v) => v !== undefined);
  const baseUrl = nonEmpty(options.baseUrl) ?? nonEmpty(env[spec.baseUrl]);
  if (apiKey === undefined && !spec.keyOptional)
    throw new ProviderConfigError({
      message: `no API key for ${id.id}: set ${spec.keys.join(" or ")} (or pass apiKey)`,
      envVar: spec.keys[0]!,
    });
  if (baseUrl === undefined && spec.baseUrlRequired)
    throw new ProviderConfigError({
      message: `no base URL for ${id.id}: set ${spec.baseUrl} (e.g. http://localhost:11434/v1 for Ollama) or pass baseUrl`,
      envVar: spec.baseUrl,
    });
  const catalog = options.catalog ?? ModelCatalog.default();
  const resolved = catalog.resolve(id.id);
  const warnings = resolved.warning ? [resolved.warning] : [];
  const firstEnv = (names: readonly string[] | undefined): string | undefined =>
    (names ?? []).map((n) => nonEmpty(env[n])).find((v) => v !== undefined);
  const region =
    nonEmpty(options.region) ??
    firstEnv(spec.region) ??
    (id.provider === "bedrock" ? "us-east-1" : id.provider === "vertex-anthropic" ? "global" : undefined);
  const project = nonEmpty(options.project) ?? firstEnv(spec.project);
  if (id.provider === "vertex-anthropic" && apiKey !== undefined && project === undefined)
    throw new ProviderConfigError({
      message: `no Google Cloud project for ${id.id}: set ANTHROPIC_VERTEX_PROJECT_ID (or GOOGLE_CLOUD_PROJECT)`,
      envVar: "ANTHROPIC_VERTEX_PROJECT_ID",
    });
  // Bedrock: static AWS keys from the given environment (else the SDK's credential chain)
  const awsId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const awsSecret = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  const awsKeys =
    id.provider === "bedrock" && awsId && awsSecret
      ? { accessKeyId: awsId, secretAccessKey: awsSecret, sessionToken: nonEmpty(env.AWS_SESSION_TOKEN) }
      : undefined;
  let codexTokens: CodexTokenSource | undefined;
  if (id.provider === "codex") {
    const authFile = options.authFile ?? defaultAuthFile(env);
    if (options.codexTokens) codexTokens = options.codexTokens;
    else if (apiKey !== undefined) codexTokens = staticCodexToken(apiKey);
    else {
      let signedIn = false;
      try {
        signedIn = readCodexTokens(authFile) !== undefined;
      } catch (e) {
        throw new ProviderConfigError({ message: `${id.id}: ${(e as Error).message}` });
      }
      if (!signedIn)
        throw new ProviderConfigError({
          message: `not signed in to Codex for ${id.id}: run \`lash login codex\` (signs in with your ChatGPT plan; tokens go to ${authFile})`,
        });
      codexTokens = fileCodexTokens(authFile, codexAuthConfig(env));
    }
  }
  const config: AdapterConfig = {
    apiKey: apiKey ?? (id.provider === "openai-compatible" ? "none" : undefined),
    baseUrl: baseUrl ?? (id.provider === "codex" ? CODEX_BASE_URL : undefined),
    model: id.model,
    info: resolved.info,
    timeoutMs: options.timeoutMs ?? (options.deadlineMs ? options.deadlineMs : undefined),
    idleTimeoutMs: options.idleTimeoutMs,
    headers: options.headers,
    keyEnv: spec.keys[0],
    baseUrlEnv: spec.baseUrl,
  };
  // Each vendor SDK is loaded on the first request, so a host only pays for the one it uses.
  const load = async (): Promise<LlmProvider> => {
    switch (id.provider) {
      case "anthropic":
        return (await import("./adapters/anthropic.ts")).anthropicProvider(config);
      case "openai":
        return (await import("./adapters/openai-responses.ts")).openaiResponsesProvider(config);
      case "openai-compatible":
        return (await import("./adapters/openai-chat.ts")).openaiChatProvider(config);
      case "google":
        return (await import("./adapters/google.ts")).googleProvider(config);
      case "codex":
        return (await import("./adapters/codex.ts")).codexProvider(config, codexTokens!);
      case "bedrock":
        return (await import("./adapters/bedrock.ts")).bedrockProvider(config, {
          region: region!,
          ...(awsKeys ? { aws: awsKeys } : {}),
        });
      case "vertex-anthropic":
        return (await import("./adapters/vertex.ts")).vertexProvider(config, { region: region!, project });
    }
  };
  let provider = lazyProvider(id.provider, load);
  if (options.rateLimits !== false) {
    const limiter = keyLimiter(id.provider, baseUrl, apiKey);
    if (options.rateLimits) limiter.configure(options.rateLimits, Date.now());
    provider = withRateLimit(provider, limiter);
  }
  const wrapped =
    options.retry === false
      ? withOutputCheck(provider, options.validateOutput)
      : withRetry(
          provider,
          {
            ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
            ...options.retry,
          },
          options.validateOutput ? { validateOutput: options.validateOutput } : {},
        );
  return {
    name: wrapped.name,
    stream: (request) => wrapped.stream(request.model === "" ? { ...request, model: id.id } : request),
    modelId: id,
    info: resolved.info,
    warnings,
  };
}

/** `createProvider` as an Effect: a missing key is a typed failure instead of a throw. */
export const makeProvider = (
  model: string,
  options?: CreateProviderOptions,
): Effect.Effect<ProviderHandle, ProviderConfigError> =>
  Effect.try({
    try: () => createProvider(model, options),
    catch: (e) =>
      e instanceof ProviderConfigError
        ? e
        : new ProviderConfigError({ message: e instanceof Error ? e.message : String(e) }),
  });

/** A provider whose adapter (and vendor SDK) is loaded on the first `stream` call. */
function lazyProvider(name: string, load: () => Promise<LlmProvider>): LlmProvider {
  let loading: Promise<LlmProvider> | undefined;
  let loaded: LlmProvider | undefined;
  const adapter: Effect.Effect<LlmProvider> = Effect.suspend(() =>
    loaded
      ? Effect.succeed(loaded)
      : Effect.promise(() => {
          loading ??= load().then((p) => {
            loaded = p;
            return p;
          });
          return loading;
        }),
  );
  return {
    name,
    stream: (request) =>
      withCall(Stream.unwrap(Effect.map(adapter, (a) => a.stream(request))), (onEvent, options) =>
        Effect.flatMap(adapter, (a) => callOf(a.stream(request))(onEvent, options)),
      ),
  };
}
