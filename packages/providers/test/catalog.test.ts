// Acceptance 4: cost from the catalog with cache reads and writes; unknown model → cost absent.
import { costOf } from "@lash/sansio";
import { describe, expect, it } from "vitest";
import { catalogDate, createProvider, ModelCatalog } from "../src/index.ts";

describe("ModelCatalog", () => {
  const catalog = ModelCatalog.default();

  it("prices a call with cache reads and writes", () => {
    // claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    const usage = { input: 100_000, output: 2_000, cacheRead: 60_000, cacheWrite: 30_000 };
    const expected = (10_000 * 3 + 60_000 * 0.3 + 30_000 * 3.75 + 2_000 * 15) / 1_000_000;
    expect(catalog.costOf("anthropic/claude-sonnet-4-5", usage)).toBeCloseTo(expected, 10);
    expect(expected).toBeCloseTo(0.1905, 10);
  });

  it("charges cache writes at the input price when the vendor has no write price", () => {
    // gpt-5-mini: $0.25 in, $2 out, $0.025 cache read.
    const usage = { input: 10_000, output: 1_000, cacheRead: 8_000, cacheWrite: 1_000 };
    expect(catalog.costOf("openai/gpt-5-mini", usage)).toBeCloseTo(
      (1_000 * 0.25 + 8_000 * 0.025 + 1_000 * 0.25 + 1_000 * 2) / 1e6,
      12,
    );
  });

  it("resolves dated snapshots to their model", () => {
    expect(catalog.lookup("anthropic/claude-sonnet-4-5-20250929")?.id).toBe("anthropic/claude-sonnet-4-5");
    expect(catalog.lookup("openai/gpt-5-mini-2025-08-07")?.contextWindow).toBe(400_000);
  });

  it("knows the current models of the three vendors", () => {
    for (const id of [
      "anthropic/claude-opus-4-1",
      "anthropic/claude-sonnet-4-5",
      "anthropic/claude-haiku-4-5",
      "openai/gpt-5",
      "openai/gpt-5-mini",
      "openai/gpt-5-nano",
      "openai/gpt-4.1",
      "openai/gpt-4o",
      "openai/o3",
      "openai/o4-mini",
      "google/gemini-2.5-pro",
      "google/gemini-2.5-flash",
      "google/gemini-2.5-flash-lite",
    ]) {
      const info = catalog.lookup(id);
      expect(info, id).toBeDefined();
      expect(info!.pricing!.input).toBeGreaterThan(0);
      expect(info!.pricing!.output).toBeGreaterThan(info!.pricing!.input);
      expect(info!.maxOutput).toBeLessThanOrEqual(info!.contextWindow);
    }
    expect(catalogDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("allows an unknown model with a warning, and its cost is absent (not zero)", () => {
    const r = catalog.resolve("openai-compatible/llama3.1:8b");
    expect(r.known).toBe(false);
    expect(r.warning).toContain("not in the catalog");
    expect(r.info.pricing).toBeUndefined();
    expect(catalog.costOf("openai-compatible/llama3.1:8b", { input: 1000, output: 10 })).toBeUndefined();
    expect(costOf({ input: 1000, output: 10 }, r.info.pricing)).toBeUndefined();
    const p = createProvider("openai-compatible/llama3.1:8b", { baseUrl: "http://127.0.0.1:9/v1", env: {} });
    expect(p.warnings).toEqual([r.warning]);
    expect(p.info.pricing).toBeUndefined();
  });

  it("lets the host add and override entries", () => {
    const c = ModelCatalog.default()
      .add({
        id: "openai-compatible/qwen3",
        contextWindow: 32_768,
        maxOutput: 8_192,
        reasoning: true,
        images: false,
        caching: false,
        pricing: { input: 0.1, output: 0.2 },
      })
      .override("openai/gpt-5", { pricing: { input: 1, output: 8, cacheRead: 0.1 } });
    expect(c.costOf("openai-compatible/qwen3", { input: 1_000_000, output: 1_000_000 })).toBeCloseTo(0.3, 10);
    expect(c.lookup("openai/gpt-5")?.pricing?.input).toBe(1);
    expect(c.lookup("openai/gpt-5")?.contextWindow).toBe(400_000);
    // The default catalog is not shared.
    expect(ModelCatalog.default().lookup("openai/gpt-5")?.pricing?.input).toBe(1.25);
    const p = createProvider("openai-compatible/qwen3", {
      baseUrl: "http://127.0.0.1:9/v1",
      env: {},
      catalog: c,
    });
    expect(p.warnings).toEqual([]);
    expect(p.info.maxOutput).toBe(8_192);
  });
});
