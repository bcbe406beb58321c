import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { accumulate, addUsage, canonicalJson, costOf, hashValue, sha256Hex } from "../src/index.ts";

describe("canonicalJson", () => {
  it("sorts keys at every depth, drops undefined members, no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: undefined, x: "é" }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":"é","z":1}]},"b":1}',
    );
    expect(canonicalJson([undefined, Number.NaN])).toBe("[null,null]");
  });

  it("is insensitive to key insertion order and agrees with JSON.parse", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = canonicalJson(v);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
        const shuffled = JSON.parse(JSON.stringify(v), (_k, val) =>
          val && typeof val === "object" && !Array.isArray(val)
            ? Object.fromEntries(Object.entries(val).reverse())
            : val,
        );
        expect(canonicalJson(shuffled)).toBe(text);
      }),
    );
  });

  it("writes exactly what the sort-and-stringify reference writes (its hashes are stored: they must not change)", () => {
    // the definition canonicalJson had before its fast paths: every stored journal hash was taken of this
    const reference = (value: unknown): string => {
      if (value === null) return "null";
      switch (typeof value) {
        case "string":
          return JSON.stringify(value);
        case "number":
          return Number.isFinite(value) ? JSON.stringify(value) : "null";
        case "boolean":
          return value ? "true" : "false";
        case "object": {
          if (Array.isArray(value))
            return `[${value.map((v) => (v === undefined || typeof v === "function" ? "null" : reference(v))).join(",")}]`;
          const record = value as Record<string, unknown>;
          const parts: string[] = [];
          for (const key of Object.keys(record).sort()) {
            const item = record[key];
            if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
            parts.push(`${JSON.stringify(key)}:${reference(item)}`);
          }
          return `{${parts.join(",")}}`;
        }
        default:
          return "null";
      }
    };
    const odd = [
      'quote " and \\ backslash',
      "tab\tnew\nline\u0000nul\u001f",
      "\u007f del",
      "é ü 日本",
      "lone \ud800 surrogate",
      "x".repeat(40),
      "",
    ];
    const manyKeys = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7) % 40}`, i]));
    const fixed = {
      odd,
      manyKeys,
      nums: [-0, 1e21, 5e-7, 0.1, -3, 2 ** 53],
      "10": 1,
      "2": 2,
      b: 1,
      B: 2,
      é: 3,
    };
    expect(canonicalJson(fixed)).toBe(reference(fixed));
    fc.assert(
      fc.property(fc.jsonValue(), fc.dictionary(fc.string(), fc.string({ unit: "binary" })), (v, d) => {
        expect(canonicalJson(v)).toBe(reference(v));
        expect(canonicalJson(d)).toBe(reference(d));
      }),
      { numRuns: 300 },
    );
  });

  it("sha256Hex matches a known vector; hashValue hashes the canonical form", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hashValue({ b: 1, a: 2 })).toBe(sha256Hex('{"a":2,"b":1}'));
  });
});

describe("usage and cost", () => {
  it("adds bucket by bucket; absent stays absent", () => {
    expect(addUsage({ input: 1 }, { input: 2, cacheRead: 1 })).toEqual({ input: 3, cacheRead: 1 });
    expect(addUsage({}, {})).toEqual({});
  });

  it("charges uncached input, cache reads, cache writes and output at their prices", () => {
    const cost = costOf(
      { input: 1_000_000, cacheRead: 400_000, cacheWrite: 100_000, output: 10_000 },
      { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    );
    // 500k uncached * 3 + 400k * 0.3 + 100k * 3.75 + 10k * 15, per million
    expect(cost).toBeCloseTo(1.5 + 0.12 + 0.375 + 0.15, 10);
    expect(costOf({ input: 5 }, undefined)).toBeUndefined();
    expect(costOf({}, { input: 1, output: 1 })).toBeUndefined();
  });
});

describe("ResponseAccumulator", () => {
  it("folds deltas into parts in emission order and honours attemptReset", () => {
    const r = accumulate([
      { type: "textDelta", text: "lost" },
      { type: "attemptReset", attempt: 2 },
      { type: "reasoningDelta", text: "think" },
      { type: "reasoningDelta", text: "ing" },
      { type: "reasoningEnd", replay: { provider: "anthropic", signature: "sig" } },
      { type: "textDelta", text: "Hel" },
      { type: "textDelta", text: "lo" },
      { type: "toolCallStart", id: "c1", name: "echo" },
      { type: "toolCallArgsDelta", id: "c1", delta: '{"a"' },
      { type: "toolCallArgsDelta", id: "c1", delta: ":1}" },
      { type: "toolCallEnd", id: "c1" },
      { type: "usage", usage: { input: 3, output: 4 } },
      { type: "finish", reason: "toolUse" },
    ]);
    expect(r).toEqual({
      parts: [
        { type: "reasoning", text: "thinking", replay: { provider: "anthropic", signature: "sig" } },
        { type: "text", text: "Hello" },
        { type: "toolCall", id: "c1", name: "echo", argumentsText: '{"a":1}' },
      ],
      usage: { input: 3, output: 4 },
      stopReason: "toolUse",
    });
  });

  it("a stream without finish is an error response", () => {
    expect(accumulate([{ type: "textDelta", text: "x" }])).toMatchObject({ stopReason: "error" });
  });
});
