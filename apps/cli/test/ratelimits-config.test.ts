// Config `rateLimits` (issue 22): per-provider requests/tokens per minute, validated like every
// other key (a bad value or an unknown provider names the path and what is expected).
import { describe, expect, it } from "vitest";
import { validateConfig } from "../src/config.ts";

describe("rateLimits config", () => {
  it("accepts rpm/tpm per provider", () => {
    const config = validateConfig(
      { rateLimits: { openai: { rpm: 500, tpm: 200_000 }, anthropic: { rpm: 50 } } },
      "c.json",
    );
    expect(config.rateLimits).toEqual({ openai: { rpm: 500, tpm: 200_000 }, anthropic: { rpm: 50 } });
  });

  it("rejects a non-positive limit and an unknown provider, naming the path", () => {
    expect(() => validateConfig({ rateLimits: { openai: { rpm: 0 } } }, "c.json")).toThrow(
      /rateLimits\.openai\.rpm: .*positive integer/,
    );
    expect(() => validateConfig({ rateLimits: { mistral: { rpm: 5 } } }, "c.json")).toThrow(
      /unknown key "mistral"/,
    );
    expect(() => validateConfig({ rateLimits: { google: { rps: 5 } } }, "c.json")).toThrow(
      /unknown key "rps"/,
    );
  });
});
