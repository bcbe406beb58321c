import { describe, expect, it } from "vitest";
import { isTextMediaType } from "../src/content.ts";
import {
  assignToolNames,
  baseToolName,
  isValidToolName,
  lashlangIdent,
  mapCallResult,
  normalizeInputSchema,
} from "../src/index.ts";

describe("tool names", () => {
  it("namespaces and sanitizes to every provider's rules", () => {
    expect(baseToolName("github", "create_issue")).toBe("mcp__github__create_issue");
    expect(baseToolName("my server", "files/read.v2")).toBe("mcp__my_server__files_read_v2");
    expect(baseToolName("ünï", "tööl")).toBe("mcp___n___t__l");
    const long = baseToolName("s", "x".repeat(100));
    expect(long).toHaveLength(64);
    expect(isValidToolName(long)).toBe(true);
  });

  it("resolves collisions deterministically, whatever the listing order", () => {
    const requests = [
      { server: "a", tool: "read.file" },
      { server: "a", tool: "read_file" },
      { server: "a", tool: "read/file" },
      { server: "b", tool: `${"y".repeat(70)}1` },
      { server: "b", tool: `${"y".repeat(70)}2` },
    ];
    const names = assignToolNames(requests);
    const reversed = assignToolNames([...requests].reverse());
    expect([...reversed.entries()].sort()).toEqual([...names.entries()].sort());
    const got = requests.map((r) => names.get(`${r.server}\u0000${r.tool}`));
    // the name that needed no sanitizing keeps it; the others get suffixes in code-unit order
    expect(got.slice(0, 3)).toEqual(["mcp__a__read_file_2", "mcp__a__read_file", "mcp__a__read_file_3"]);
    expect(got[3]).toBe(`mcp__b__${"y".repeat(56)}`);
    expect(got[4]).toBe(`mcp__b__${"y".repeat(54)}_2`);
    for (const n of got) expect(isValidToolName(n ?? "")).toBe(true);
    expect(new Set(got).size).toBe(got.length);
  });

  it("avoids names other plugins already use", () => {
    const names = assignToolNames([{ server: "x", tool: "t" }], ["mcp__x__t"]);
    expect(names.get("x\u0000t")).toBe("mcp__x__t_2");
  });

  it("makes Lashlang identifiers for bindings", () => {
    expect(lashlangIdent("get-sum")).toBe("get_sum");
    expect(lashlangIdent("2fa")).toBe("_2fa");
    expect(lashlangIdent("echo")).toBe("echo");
  });
});

describe("normalizeInputSchema", () => {
  it("guarantees an object root and drops $schema", () => {
    expect(normalizeInputSchema(undefined)).toEqual({ type: "object", properties: {} });
    expect(
      normalizeInputSchema({
        $schema: "http://json-schema.org/draft-07/schema#",
        properties: { q: { type: "string", format: "uri" } },
        required: ["q"],
        additionalProperties: false,
      }),
    ).toEqual({
      type: "object",
      properties: { q: { type: "string", format: "uri" } },
      required: ["q"],
      additionalProperties: false,
    });
  });

  it("folds a root-level anyOf of objects into one object", () => {
    expect(
      normalizeInputSchema({
        type: "object",
        anyOf: [
          {
            properties: { id: { type: "number" }, verbose: { type: "boolean" } },
            required: ["id", "verbose"],
          },
          {
            properties: { name: { type: "string" }, verbose: { type: "boolean" } },
            required: ["name", "verbose"],
          },
        ],
      }),
    ).toEqual({
      type: "object",
      properties: { id: { type: "number" }, name: { type: "string" }, verbose: { type: "boolean" } },
      required: ["verbose"],
    });
  });

  it("leaves nested schemas alone", () => {
    const nested = { type: "object", properties: { v: { anyOf: [{ type: "string" }, { type: "null" }] } } };
    expect(normalizeInputSchema(nested)).toEqual(nested);
  });
});

describe("mapCallResult", () => {
  it("maps text, image, audio, embedded resources and links", () => {
    const out = mapCallResult("s", "t", {
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "AAAA", mimeType: "image/jpeg" },
        { type: "audio", data: "BBBB", mimeType: "audio/mpeg" },
        { type: "resource", resource: { uri: "file:///a.md", text: "# A" } },
        { type: "resource", resource: { uri: "file:///b.pdf", mimeType: "application/pdf", blob: "CCCC" } },
        { type: "resource_link", uri: "https://x/y", name: "y", description: "the y" },
      ],
    });
    expect(out.isError).toBeUndefined();
    expect(out.content).toEqual([
      { type: "text", text: "hello" },
      { type: "attachment", mediaType: "image/jpeg", data: "AAAA" },
      { type: "attachment", mediaType: "audio/mpeg", data: "BBBB" },
      { type: "text", text: "[resource file:///a.md]\n# A" },
      { type: "attachment", mediaType: "application/pdf", data: "CCCC", name: "file:///b.pdf" },
      { type: "text", text: "[resource link] y <https://x/y> — the y" },
    ]);
    // no structured content: no `value` copy of the text (Lashlang reads the text content, joined the same way)
    expect(out.value).toBeUndefined();
  });

  it("decodes blobs with a text media type (utf-8); binary and non-UTF-8 blobs stay attachments", () => {
    const b64 = (t: string) => Buffer.from(t, "utf8").toString("base64");
    const out = mapCallResult("s", "t", {
      content: [
        { type: "resource", resource: { uri: "demo://a", mimeType: "text/plain", blob: b64("héllo ✓") } },
        {
          type: "resource",
          resource: { uri: "demo://b", mimeType: "application/json", blob: b64('{"a":1}') },
        },
        {
          type: "resource",
          resource: { uri: "demo://c", mimeType: "application/ld+json; charset=utf-8", blob: b64("{}") },
        },
        { type: "resource", resource: { uri: "demo://d", mimeType: "image/svg+xml", blob: b64("<svg/>") } },
        { type: "resource", resource: { mimeType: "text/csv", blob: b64("a,b") } },
        // not valid UTF-8: kept as bytes
        { type: "resource", resource: { uri: "demo://e", mimeType: "text/plain", blob: "//79" } },
        {
          type: "resource",
          resource: { uri: "demo://f", mimeType: "application/octet-stream", blob: b64("x") },
        },
      ],
    });
    expect(out.content).toEqual([
      { type: "text", text: "[resource demo://a (text/plain)]\nhéllo ✓" },
      { type: "text", text: '[resource demo://b (application/json)]\n{"a":1}' },
      { type: "text", text: "[resource demo://c (application/ld+json; charset=utf-8)]\n{}" },
      { type: "text", text: "[resource demo://d (image/svg+xml)]\n<svg/>" },
      { type: "text", text: "a,b" },
      { type: "attachment", mediaType: "text/plain", data: "//79", name: "demo://e" },
      { type: "attachment", mediaType: "application/octet-stream", data: b64("x"), name: "demo://f" },
    ]);
    expect(isTextMediaType("application/xml")).toBe(true);
    expect(isTextMediaType("application/pdf")).toBe(false);
    expect(isTextMediaType(undefined)).toBe(false);
  });

  it("keeps isError and prefers structured content as the value", () => {
    const err = mapCallResult("s", "t", { content: [{ type: "text", text: "nope" }], isError: true });
    expect(err).toMatchObject({ isError: true, content: [{ type: "text", text: "nope" }] });
    const structured = mapCallResult("s", "t", { content: [], structuredContent: { sum: 3 } });
    expect(structured.content).toEqual([{ type: "text", text: '{"sum":3}' }]);
    expect(structured.value).toEqual({ sum: 3 });
    expect(structured.details).toEqual({ server: "s", tool: "t", structured: true });
  });
});
