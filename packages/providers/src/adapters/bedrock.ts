// Claude on Amazon Bedrock: the anthropic adapter with `@anthropic-ai/bedrock-sdk`'s
// client, which rewrites `/v1/messages` to `/model/{id}/invoke-with-response-stream`,
// signs with SigV4 (or sends a Bedrock API key) and turns AWS event-stream frames
// back into the Messages API's events.
import { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk";
import type { LlmProvider } from "@lash/sansio";
import { anthropicProvider } from "./anthropic.ts";
import type { AdapterConfig } from "./shared.ts";
import { defaultTimeoutMs } from "./shared.ts";

export interface BedrockOptions {
  readonly region: string;
  /** Static AWS credentials (from the environment given to `createProvider`); absent = the AWS credential chain. */
  readonly aws?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string | undefined;
  };
}

export const BEDROCK_AUTH_HINT =
  "set AWS_BEARER_TOKEN_BEDROCK to a Bedrock API key, or AWS credentials (AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, AWS_PROFILE or an instance role) allowed to invoke the model in AWS_REGION";

export function bedrockProvider(config: AdapterConfig, options: BedrockOptions): LlmProvider {
  const aws = options.aws;
  const common = {
    awsRegion: options.region,
    // a key when one was given; null = SigV4 with the AWS credential chain (never the process env key behind our back)
    apiKey: config.apiKey ?? null,
    ...(config.baseUrl ? { baseURL: config.baseUrl } : {}),
    maxRetries: 0, // the one retry layer is ours (withRetry)
    timeout: config.timeoutMs ?? defaultTimeoutMs,
    logger: { error() {}, warn() {}, info() {}, debug() {} },
    logLevel: "off" as const,
    ...(config.headers ? { defaultHeaders: config.headers } : {}),
  };
  const client = aws
    ? new AnthropicBedrock({
        ...common,
        awsAccessKey: aws.accessKeyId,
        awsSecretKey: aws.secretAccessKey,
        awsSessionToken: aws.sessionToken ?? null,
      })
    : new AnthropicBedrock(common);
  return anthropicProvider(config, {
    name: "bedrock",
    platform: "bedrock",
    client,
    authHint: BEDROCK_AUTH_HINT,
  });
}
