// Claude on Google Vertex AI: the anthropic adapter with `@anthropic-ai/vertex-sdk`'s
// client, which rewrites `/v1/messages` to
// `/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:streamRawPredict`
// and authenticates with Google OAuth (Application Default Credentials, or a given access token).
import { AnthropicVertex } from "@anthropic-ai/vertex-sdk";
import type { LlmProvider } from "@lash/sansio";
import { anthropicProvider } from "./anthropic.ts";
import type { AdapterConfig } from "./shared.ts";
import { defaultTimeoutMs } from "./shared.ts";

export interface VertexOptions {
  readonly region: string;
  readonly project?: string | undefined;
}

export const VERTEX_AUTH_HINT =
  "sign in with `gcloud auth application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS, or ANTHROPIC_VERTEX_ACCESS_TOKEN) with access to Claude in the project";

type AuthClient = NonNullable<ConstructorParameters<typeof AnthropicVertex>[0]>["authClient"];

/** An auth client that sends a fixed OAuth access token (ANTHROPIC_VERTEX_ACCESS_TOKEN). */
function tokenClient(token: string, project: string | undefined): AuthClient {
  return {
    projectId: project,
    getRequestHeaders: async () => new Headers({ authorization: `Bearer ${token}` }),
  } as unknown as AuthClient;
}

export function vertexProvider(config: AdapterConfig, options: VertexOptions): LlmProvider {
  const client = new AnthropicVertex({
    region: options.region,
    ...(options.project ? { projectId: options.project } : {}),
    ...(config.apiKey ? { authClient: tokenClient(config.apiKey, options.project) } : {}),
    ...(config.baseUrl ? { baseURL: config.baseUrl } : {}),
    maxRetries: 0, // the one retry layer is ours (withRetry)
    timeout: config.timeoutMs ?? defaultTimeoutMs,
    logger: { error() {}, warn() {}, info() {}, debug() {} },
    logLevel: "off",
    ...(config.headers ? { defaultHeaders: config.headers } : {}),
  });
  return anthropicProvider(config, {
    name: "vertex-anthropic",
    platform: "vertex",
    client,
    authHint: VERTEX_AUTH_HINT,
  });
}
