// Claude on Bedrock and Vertex beyond the conformance suite: how each authenticates
// (SigV4 from AWS keys, a Bedrock API key, a Google access token), the request shape the
// clouds want (model and stream in the URL, anthropic_version in the body), the catalog
// knowing the cloud model names, and the error when no credentials can be found.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyError, createProvider, ModelCatalog } from "../src/index.ts";
import type { MockLlmServer } from "../src/testing/index.ts";
import { startMockServer } from "../src/testing/index.ts";
import { request, run } from "./helpers.ts";

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

const BEDROCK = "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0";
const VERTEX = "vertex-anthropic/claude-sonnet-4-5@20250929";

describe("bedrock", () => {
  it("signs with SigV4 from AWS keys in the environment; model and stream go in the URL", async () => {
    const provider = createProvider(BEDROCK, {
      baseUrl: server.url,
      env: {
        AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
        AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG",
        AWS_REGION: "eu-west-1",
      },
      retry: false,
    });
    server.enqueue({ text: "hi from bedrock", usage: { input: 10, output: 3 } });
    const before = server.requests.length;
    const out = await run(provider, request(BEDROCK));
    expect(out.error).toBeUndefined();
    expect(
      out.events
        .filter((e) => e.type === "textDelta")
        .map((e) => (e as { text: string }).text)
        .join(""),
    ).toBe("hi from bedrock");
    const sent = server.requests[before]!;
    expect(sent.platform).toBe("bedrock");
    expect(sent.path).toBe("/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream");
    expect(String(sent.headers.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=.*, Signature=[0-9a-f]{64}$/,
    );
    expect(sent.headers["x-amz-date"]).toMatch(/^\d{8}T\d{6}Z$/);
    const body = sent.body as Record<string, unknown>;
    // the SDK moves the API version from the header into the body
    expect(typeof body.anthropic_version).toBe("string");
    expect(sent.headers).not.toHaveProperty("anthropic-version");
    expect(body).not.toHaveProperty("model");
    expect(body).not.toHaveProperty("stream");
  });

  it("a Bedrock API key is sent as the bearer token (no signing)", async () => {
    const provider = createProvider(BEDROCK, {
      baseUrl: server.url,
      env: { AWS_BEARER_TOKEN_BEDROCK: "bedrock-api-key-123456" },
      retry: false,
    });
    server.enqueue({ text: "ok" });
    const before = server.requests.length;
    expect((await run(provider, request(BEDROCK))).error).toBeUndefined();
    expect(server.requests[before]!.headers.authorization).toBe("Bearer bedrock-api-key-123456");
  });
});

describe("vertex-anthropic", () => {
  it("project and region from the environment go in the URL; the access token is the bearer", async () => {
    const provider = createProvider(VERTEX, {
      baseUrl: `${server.url}/v1`,
      env: {
        ANTHROPIC_VERTEX_ACCESS_TOKEN: "ya29.vertex-token-123456",
        ANTHROPIC_VERTEX_PROJECT_ID: "my-proj",
        CLOUD_ML_REGION: "europe-west1",
      },
      retry: false,
    });
    server.enqueue({ text: "hi from vertex" });
    const before = server.requests.length;
    expect((await run(provider, request(VERTEX))).error).toBeUndefined();
    const sent = server.requests[before]!;
    expect(sent.platform).toBe("vertex");
    expect(sent.path).toBe(
      "/v1/projects/my-proj/locations/europe-west1/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
    );
    expect(sent.headers.authorization).toBe("Bearer ya29.vertex-token-123456");
    expect(typeof (sent.body as Record<string, unknown>).anthropic_version).toBe("string");
    expect(sent.headers).not.toHaveProperty("anthropic-version");
  });

  it("a token without a project is a configuration error naming the variable", () => {
    expect(() =>
      createProvider(VERTEX, { env: { ANTHROPIC_VERTEX_ACCESS_TOKEN: "ya29.vertex-token-123456" } }),
    ).toThrow(/ANTHROPIC_VERTEX_PROJECT_ID/);
  });
});

describe("catalog and errors", () => {
  it("the cloud model names resolve to the Claude entries (limits and prices); codex models are known, without price", () => {
    const catalog = ModelCatalog.default();
    const claude = catalog.lookup("anthropic/claude-sonnet-4-5")!;
    for (const id of [BEDROCK, "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", VERTEX]) {
      const info = catalog.lookup(id);
      expect(info?.id).toBe(id);
      expect(info?.contextWindow).toBe(claude.contextWindow);
      expect(info?.pricing).toEqual(claude.pricing);
    }
    const codex = catalog.resolve("codex/gpt-5-codex");
    expect(codex.known).toBe(true);
    expect(codex.info.reasoning).toBe(true);
    expect(codex.info.pricing).toBeUndefined();
    expect(createProvider(BEDROCK, { env: { AWS_BEARER_TOKEN_BEDROCK: "k-12345678" } }).warnings).toEqual([]);
  });

  it("no cloud credentials at all is an auth error with the fix, not a retried network failure", () => {
    const e = Object.assign(
      new Error("Failed to resolve AWS credentials from the credential provider chain."),
      {
        cause: new Error("Could not load credentials from any providers"),
      },
    );
    const err = classifyError(e, {
      provider: "bedrock",
      model: "m",
      authHint: "set AWS_BEARER_TOKEN_BEDROCK",
    });
    expect(err).toMatchObject({ kind: "auth", retryable: false });
    expect(err.message).toContain("set AWS_BEARER_TOKEN_BEDROCK");
  });
});
