export type { AdapterConfig, Translator } from "./adapters/shared.ts";
export type { BrowserLogin, BrowserLoginOptions, CodexAuthConfig, DeviceCode, Pkce } from "./auth/codex.ts";
export {
  CODEX_BASE_URL,
  CODEX_CLIENT_ID,
  CODEX_ISSUER,
  CodexAuthError,
  codexAuthConfig,
  completeDeviceCode,
  generatePkce,
  jwtClaims,
  loginWithBrowser,
  pkceChallenge,
  refreshCodexTokens,
  requestDeviceCode,
} from "./auth/codex.ts";
export type { AuthFile, CodexTokens } from "./auth/store.ts";
export {
  authFileSecrets,
  defaultAuthFile,
  readAuthFile,
  readCodexTokens,
  removeCodexTokens,
  writeCodexTokens,
} from "./auth/store.ts";
export type { CodexCredential, CodexTokenSource, FileTokenSourceOptions } from "./auth/token-source.ts";
export { fileCodexTokens, staticCodexToken } from "./auth/token-source.ts";
export type { ResolvedModel } from "./catalog.ts";
export { catalogDate, ModelCatalog, unknownModelInfo } from "./catalog.ts";
export type { CreateProviderOptions, ProviderHandle } from "./create.ts";
export { createProvider, makeProvider, providerEnv } from "./create.ts";
export type { ErrorContext } from "./errors.ts";
export { classifyError, isContextOverflowText, retryAfterMs } from "./errors.ts";
export type { ModelId, ProviderKind } from "./model-id.ts";
export { ProviderConfigError, parseModelId, providerKinds, wireModelName } from "./model-id.ts";
export type { RateLimits } from "./ratelimit.ts";
export { KeyLimiter, keyLimiter, RATE_LIMIT_WAIT, resetRateLimits, withRateLimit } from "./ratelimit.ts";
export type { RetryPolicy } from "./retry.ts";
export { defaultRetryPolicy, withRetry } from "./retry.ts";
export type { OutputFormat, OutputValidator } from "./structured.ts";
export {
  defaultOutputValidator,
  outputFormat,
  strictProblems,
  withOutputCheck,
} from "./structured.ts";
