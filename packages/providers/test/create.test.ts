import { Effect, Either } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createProvider,
  makeProvider,
  ProviderConfigError,
  parseModelId,
  wireModelName,
} from "../src/index.ts";
import type { MockLlmServer } from "../src/testing/index.ts";
import { mockProviderOptions, startMockServer } from "../src/testing/index.ts";
import { request, run } from "./helpers.ts";

describe("parseModelId", () => {
  it("splits provider/model and keeps slashes in the model part", () => {
    expect(parseModelId("anthropic/claude-sonnet-4-5")).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      id: "anthropic/claude-sonnet-4-5",
    });
    expect(parseModelId("openai-compatible/meta-llama/llama-3.1-8b").model).toBe("meta-llama/llama-3.1-8b");
    expect(parseModelId("gemini/gemini-2.5-flash").id).toBe("google/gemini-2.5-flash");
    expect(wireModelName("openai-compatible/meta-llama/x", "d")).toBe("meta-llama/x");
    expect(wireModelName("", "default")).toBe("default");
  });

  it("rejects ids without a provider or with an unknown one", () => {
    expect(() => parseModelId("gpt-5")).toThrow(ProviderConfigError);
    expect(() => parseModelId("mistral/large")).toThrow(/unknown provider "mistral"/);
  });
});

describe("createProvider", () => {
  let server: MockLlmServer;
  beforeAll(async () => {
    server = await startMockServer();
  });
  afterAll(() => server.close());

  it.each([
    ["anthropic/claude-haiku-4-5", "ANTHROPIC_API_KEY"],
    ["openai/gpt-5-mini", "OPENAI_API_KEY"],
    ["google/gemini-2.5-flash", "GEMINI_API_KEY"],
  ])("a missing key for %s is a typed error naming %s", (model, env) => {
    try {
      createProvider(model, { env: {} });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ProviderConfigError);
      expect((e as ProviderConfigError).envVar).toBe(env);
      expect((e as ProviderConfigError).message).toContain(env);
    }
  });

  it("is also available as an Effect with a typed failure", () => {
    const r = Effect.runSync(Effect.either(makeProvider("openai/gpt-5", { env: {} })));
    expect(Either.isLeft(r) && r.left._tag).toBe("ProviderConfigError");
  });

  it("openai-compatible needs a base URL but no key", () => {
    expect(() => createProvider("openai-compatible/llama3", { env: {} })).toThrow(
      /OPENAI_COMPATIBLE_BASE_URL/,
    );
    const p = createProvider("openai-compatible/llama3", {
      env: { OPENAI_COMPATIBLE_BASE_URL: "http://x/v1" },
    });
    expect(p.modelId.model).toBe("llama3");
  });

  it.each([
    ["anthropic/claude-haiku-4-5", { ANTHROPIC_API_KEY: "ak", ANTHROPIC_BASE_URL: "" }, "anthropic"],
    ["openai/gpt-5-mini", { OPENAI_API_KEY: "ok", OPENAI_BASE_URL: "" }, "openai"],
    ["google/gemini-2.5-flash", { GOOGLE_API_KEY: "gk", GOOGLE_GEMINI_BASE_URL: "" }, "google"],
  ] as const)("%s reads its key and base URL from the environment", async (model, env, kind) => {
    const opts = mockProviderOptions(server, kind);
    const base =
      kind === "anthropic"
        ? "ANTHROPIC_BASE_URL"
        : kind === "openai"
          ? "OPENAI_BASE_URL"
          : "GOOGLE_GEMINI_BASE_URL";
    const p = createProvider(model, { env: { ...env, [base]: opts.baseUrl } });
    expect(p.info.id).toBe(model);
    server.enqueue({ text: "hi" });
    const before = server.requests.length;
    const out = await run(p, request(model));
    expect(out.error).toBeUndefined();
    const h = server.requests[before]!.headers;
    const key = Object.values(env).find((v) => v !== "");
    const sentKey = String(h["x-api-key"] ?? h["x-goog-api-key"] ?? h.authorization ?? "");
    expect(sentKey).toContain(key);
  });

  it("explicit options win over the environment", () => {
    const p = createProvider("anthropic/claude-haiku-4-5", {
      apiKey: "explicit",
      env: {},
    });
    expect(p.name).toBe("anthropic");
    expect(p.info.contextWindow).toBe(200_000);
  });
});
