// Codex: the Responses API as ChatGPT-plan sign-in uses it. The openai-responses
// adapter with three differences:
// 1. the base URL is the ChatGPT backend (`https://chatgpt.com/backend-api/codex`);
// 2. the bearer token comes from the sign-in (`lash login codex`), with the
//    `chatgpt-account-id` and `originator` headers; a 401 refreshes the sign-in and
//    sends the request once more;
// 3. the backend wants `instructions`, `store: false` and encrypted reasoning, and
//    rejects the token cap and sampling fields, so those are not sent.
import type { LlmProvider } from "@lash/sansio";
import type { ResponseCreateParamsStreaming } from "openai/resources/responses/responses";
import { CODEX_ORIGINATOR, CodexAuthError, SIGN_IN_HINT } from "../auth/codex.ts";
import type { CodexCredential, CodexTokenSource } from "../auth/token-source.ts";
import { openaiResponsesProvider } from "./openai-responses.ts";
import type { AdapterConfig } from "./shared.ts";

const PROVIDER = "codex";
const DEFAULT_INSTRUCTIONS = "You are a helpful assistant.";

/** A 401 the SDK can read, for a sign-in that is missing or can no longer be refreshed. */
function signInFailure(e: CodexAuthError): Response {
  return new Response(
    JSON.stringify({ error: { type: "codex_sign_in", code: e.reason, message: e.message } }),
    {
      status: 401,
      headers: { "content-type": "application/json" },
    },
  );
}

/** `fetch` with the sign-in's headers, refreshing once after a 401. */
export function codexFetch(
  tokens: CodexTokenSource,
  base: typeof globalThis.fetch = globalThis.fetch,
): typeof globalThis.fetch {
  const send = (input: Parameters<typeof fetch>[0], init: RequestInit | undefined, cred: CodexCredential) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${cred.accessToken}`);
    if (cred.accountId) headers.set("chatgpt-account-id", cred.accountId);
    headers.set("originator", CODEX_ORIGINATOR);
    return base(input, { ...init, headers });
  };
  const signInError = (e: unknown): Response => {
    if (e instanceof CodexAuthError && (e.reason === "notSignedIn" || e.reason === "signInRequired"))
      return signInFailure(e);
    throw e;
  };
  return async (input, init) => {
    let cred: CodexCredential;
    try {
      cred = await tokens.current();
    } catch (e) {
      return signInError(e);
    }
    const res = await send(input, init, cred);
    if (res.status !== 401 || !tokens.refreshAfter401) return res;
    await res.body?.cancel().catch(() => {});
    let fresh: CodexCredential;
    try {
      fresh = await tokens.refreshAfter401(cred.accessToken);
    } catch (e) {
      return signInError(e);
    }
    return send(input, init, fresh);
  };
}

/** The request fields the ChatGPT backend takes. */
export function codexParams(params: ResponseCreateParamsStreaming): ResponseCreateParamsStreaming {
  const { max_output_tokens: _cap, temperature: _t, top_p: _p, ...rest } = params;
  const include = new Set(rest.include ?? []);
  include.add("reasoning.encrypted_content");
  return {
    ...rest,
    instructions:
      typeof rest.instructions === "string" && rest.instructions !== ""
        ? rest.instructions
        : DEFAULT_INSTRUCTIONS,
    store: false,
    stream: true,
    include: [...include],
    reasoning: rest.reasoning ?? { summary: "auto" },
  };
}

/** Codex (ChatGPT-plan sign-in) through the `openai` SDK's Responses client. */
export function codexProvider(config: AdapterConfig, tokens: CodexTokenSource): LlmProvider {
  return openaiResponsesProvider(
    { ...config, apiKey: "codex-sign-in" },
    {
      name: PROVIDER,
      fetch: codexFetch(tokens),
      params: (p) => codexParams(p),
      authHint: SIGN_IN_HINT,
    },
  );
}
