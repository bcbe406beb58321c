// Which model to use, and the one message shown when no provider is configured.
// Uses only `@lash/providers/vendors` (no imports of its own) so `--help`, `config`
// and the no-key path load nothing heavy.
import { type ProviderKind, providerEnv, providerKindOf } from "@lash/providers/vendors";
import type { LashConfig } from "./config.ts";

export type Vendor = ProviderKind;

/** Environment variables per vendor (`@lash/providers`' table). */
export const VENDOR_ENV: Record<Vendor, { readonly keys: readonly string[]; readonly baseUrl: string }> =
  providerEnv;

/** Default models, first whose key is set wins. */
const DEFAULTS: readonly { readonly vendor: Vendor; readonly model: string }[] = [
  { vendor: "anthropic", model: "anthropic/claude-sonnet-4-5" },
  { vendor: "openai", model: "openai/gpt-5-mini" },
  { vendor: "google", model: "google/gemini-2.5-flash" },
];

const set = (env: NodeJS.ProcessEnv, name: string): boolean => (env[name]?.trim() ?? "") !== "";

export function vendorOf(model: string): Vendor | undefined {
  return providerKindOf(model);
}

/** Vendors with a key (or, for OpenAI-compatible servers, a base URL) in the environment. */
export function configuredVendors(env: NodeJS.ProcessEnv, config: LashConfig = {}): Vendor[] {
  const out: Vendor[] = [];
  for (const vendor of Object.keys(VENDOR_ENV) as Vendor[]) {
    const spec = VENDOR_ENV[vendor];
    if (vendor === "openai-compatible") {
      if (set(env, spec.baseUrl) || config.providers?.["openai-compatible"]?.baseUrl) out.push(vendor);
    } else if (spec.keys.some((k) => set(env, k))) out.push(vendor);
  }
  return out;
}

export interface ModelChoice {
  readonly model: string;
  /** Where the choice came from, for `lash config` / `/info`. */
  readonly source: "flag" | "env" | "config" | "default";
}

/** `--model` > `$LASH_MODEL` > config `model` > the first vendor with a key. */
export function chooseModel(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  config: LashConfig,
): ModelChoice | undefined {
  if (flag) return { model: flag, source: "flag" };
  const fromEnv = env.LASH_MODEL?.trim();
  if (fromEnv) return { model: fromEnv, source: "env" };
  if (config.model) return { model: config.model, source: "config" };
  for (const d of DEFAULTS)
    if (VENDOR_ENV[d.vendor].keys.some((k) => set(env, k))) return { model: d.model, source: "default" };
  return undefined;
}

/** The one message shown when no provider is configured for `model` (or at all). */
export function noProviderMessage(model: string | undefined, detail?: string): string {
  const head = model
    ? `lash: no provider configured for ${model}${detail ? ` (${detail})` : ""}.`
    : "lash: no model provider is configured.";
  return [
    head,
    "Set an API key in the environment:",
    "  ANTHROPIC_API_KEY                 anthropic/… models (default anthropic/claude-sonnet-4-5)",
    "  OPENAI_API_KEY                    openai/… (default openai/gpt-5-mini)",
    "  GEMINI_API_KEY or GOOGLE_API_KEY  google/… (default google/gemini-2.5-flash)",
    "or point lash at a local OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio):",
    "  lash --model openai-compatible/<model> --base-url http://localhost:11434/v1",
    "  (or set OPENAI_COMPATIBLE_BASE_URL; OPENAI_COMPATIBLE_API_KEY if the server wants one)",
    "or sign in with a ChatGPT plan: `lash login codex`, then --model codex/gpt-5-codex",
    "(Claude on AWS Bedrock / Google Vertex: --model bedrock/<model id> or vertex-anthropic/<model id>",
    " with the cloud's own credentials; see `lash --help`)",
    "`lash demo` shows lash working with a scripted model and no key.",
  ].join("\n");
}

/** The base URL for a vendor: `--base-url` (for the chosen model's vendor) > config `providers.<vendor>.baseUrl`. */
export function baseUrlFor(
  vendor: Vendor | undefined,
  flag: { readonly vendor: Vendor | undefined; readonly url: string | undefined },
  config: LashConfig,
): string | undefined {
  if (vendor === undefined) return undefined;
  if (flag.url && flag.vendor === vendor) return flag.url;
  return config.providers?.[vendor]?.baseUrl;
}
