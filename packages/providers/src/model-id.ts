import * as Data from "effect/Data";

import { providerAliases as aliases, type ProviderKind, providerKinds } from "./vendors.ts";

export { type ProviderKind, providerKinds } from "./vendors.ts";

export interface ModelId {
  readonly provider: ProviderKind;
  /** The vendor's model name, as sent on the wire. */
  readonly model: string;
  /** `provider/model` */
  readonly id: string;
}

/** A provider could not be built: unknown provider, bad model id, missing key or base URL. */
export class ProviderConfigError extends Data.TaggedError("ProviderConfigError")<{
  readonly message: string;
  /** The environment variable that would fix it, when there is one. */
  readonly envVar?: string;
}> {}

/** Splits `provider/model` (the model part may itself contain `/`, e.g. OpenRouter names). */
export function parseModelId(id: string): ModelId {
  const slash = id.indexOf("/");
  if (slash <= 0 || slash === id.length - 1)
    throw new ProviderConfigError({
      message: `model "${id}" must be named "provider/model" (e.g. anthropic/claude-sonnet-4-5, openai/gpt-5-mini, google/gemini-2.5-flash, openai-compatible/llama3)`,
    });
  const prefix = id.slice(0, slash).toLowerCase();
  const provider = aliases[prefix];
  if (!provider)
    throw new ProviderConfigError({
      message: `unknown provider "${prefix}" in "${id}"; expected one of ${providerKinds.join(", ")}`,
    });
  const model = id.slice(slash + 1);
  return { provider, model, id: `${provider}/${model}` };
}

/** The model part of a request's `model` field (`provider/model` or a bare vendor name). */
export function wireModelName(requestModel: string, fallback: string): string {
  if (requestModel === "") return fallback;
  const slash = requestModel.indexOf("/");
  if (slash < 0) return requestModel;
  const prefix = requestModel.slice(0, slash).toLowerCase();
  return aliases[prefix] ? requestModel.slice(slash + 1) : requestModel;
}
