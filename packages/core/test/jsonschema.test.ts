// The tool-argument validator: a real 2020-12 engine behind the readable
// `/path: what is wrong` lines the model gets. Every case below passed
// unchecked with the former hand-written validator (it ignored the keyword).
import { describe, expect, it } from "vitest";
import { validateJson } from "../src/jsonschema.ts";

describe("validateJson", () => {
  it("keeps the message format of the simple keywords", () => {
    const schema = {
      type: "object",
      properties: {
        text: { type: "string" },
        n: { type: "integer", minimum: 1 },
        mode: { enum: ["a", "b"] },
      },
      required: ["text"],
      additionalProperties: false,
    };
    expect(validateJson(schema, { text: "x", n: 2, mode: "a" })).toEqual([]);
    expect(validateJson(schema, { text: 5, n: 0, mode: "c", extra: true })).toEqual([
      "/text: expected string, got integer 5",
      "/n: must be ≥ 1",
      '/mode: must be one of "a", "b", got "c"',
      "/extra: unknown property (allowed: text, n, mode)",
    ]);
    expect(validateJson(schema, {})).toEqual(["/text: is required"]);
    expect(validateJson(schema, "no")).toEqual(['/: expected object, got string "no"']);
  });

  it("follows $ref into $defs, with the path of the value", () => {
    const schema = {
      type: "object",
      $defs: { point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
      properties: { from: { $ref: "#/$defs/point" }, to: { $ref: "#/$defs/point" } },
    };
    expect(validateJson(schema, { from: { x: 1 }, to: { x: 2 } })).toEqual([]);
    expect(validateJson(schema, { from: { x: "1" }, to: {} })).toEqual([
      '/from/x: expected number, got string "1"',
      "/to/x: is required",
    ]);
  });

  it("asserts the common formats (uri, date-time, email, uuid) and lets unknown formats pass", () => {
    const schema = {
      type: "object",
      properties: {
        url: { type: "string", format: "uri" },
        when: { type: "string", format: "date-time" },
        id: { type: "string", format: "uuid" },
        color: { type: "string", format: "colour-name" },
      },
    };
    expect(
      validateJson(schema, {
        url: "https://example.com/a",
        when: "2026-11-23T17:00:00Z",
        id: "123e4567-e89b-12d3-a456-426614174000",
        color: "teal",
      }),
    ).toEqual([]);
    expect(validateJson(schema, { url: "not a uri", when: "yesterday", id: "x" })).toEqual([
      '/url: must be a valid uri (got "not a uri")',
      '/when: must be a valid date-time (got "yesterday")',
      '/id: must be a valid uuid (got "x")',
    ]);
  });

  it("checks dependentRequired", () => {
    const schema = {
      type: "object",
      properties: { user: { type: "string" }, password: { type: "string" } },
      dependentRequired: { user: ["password"] },
    };
    expect(validateJson(schema, {})).toEqual([]);
    expect(validateJson(schema, { user: "a" })).toEqual(['/password: is required when "user" is present']);
  });

  it("checks patternProperties, and additionalProperties: false beside it", () => {
    const schema = {
      type: "object",
      properties: { name: { type: "string" } },
      patternProperties: { "^x-": { type: "string" } },
      additionalProperties: false,
    };
    expect(validateJson(schema, { name: "a", "x-tag": "b" })).toEqual([]);
    expect(validateJson(schema, { "x-tag": 1, other: 2 })).toEqual([
      "/x-tag: expected string, got integer 1",
      "/other: unknown property (allowed: name)",
    ]);
  });

  it("explains anyOf/oneOf failures branch by branch", () => {
    const schema = {
      type: "object",
      properties: {
        target: {
          oneOf: [
            { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
            { type: "object", properties: { url: { type: "string", format: "uri" } }, required: ["url"] },
          ],
        },
        size: { anyOf: [{ type: "integer" }, { enum: ["small", "large"] }] },
      },
    };
    expect(validateJson(schema, { target: { path: "a" }, size: "small" })).toEqual([]);
    expect(validateJson(schema, { target: { url: "nope" }, size: "huge" })).toEqual([
      '/target: does not match any of the allowed shapes — 1) /target/path: is required; 2) /target/url: must be a valid uri (got "nope")',
      '/size: does not match any of the allowed shapes — 1) /size: expected integer, got string "huge"; 2) /size: must be one of "small", "large", got "huge"',
    ]);
    expect(validateJson(schema, { target: { path: "a", url: "https://x.y" } })).toEqual([
      "/target: matches 2 of the allowed shapes; must match exactly one",
    ]);
  });

  it("reports nested array paths", () => {
    const schema = {
      type: "object",
      properties: {
        edits: {
          type: "array",
          items: {
            type: "object",
            properties: {
              line: { type: "integer" },
              tags: { type: "array", prefixItems: [{ type: "string" }] },
            },
            required: ["line"],
            additionalProperties: false,
          },
        },
      },
    };
    expect(validateJson(schema, { edits: [{ line: 1 }, { line: 2, tags: ["a"] }] })).toEqual([]);
    expect(validateJson(schema, { edits: [{ line: 1 }, { tags: [3] }, { line: 1, bad: 1 }] })).toEqual([
      "/edits/1/line: is required",
      "/edits/1/tags/0: expected string, got integer 3",
      "/edits/2/bad: unknown property (allowed: line, tags)",
    ]);
  });

  it("validates server-everything's gzip-file-as-resource input schema (as its server lists it)", () => {
    // tools/list of @modelcontextprotocol/server-everything 2026.8.31 (zod 4's JSON Schema output)
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        name: { default: "README.md.gz", type: "string", description: "Name of the output file" },
        data: {
          default: "https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md",
          type: "string",
          format: "uri",
          description: "URL or data URI of the file content to compress",
        },
        outputType: {
          default: "resourceLink",
          description: "How the resulting gzipped file should be returned.",
          type: "string",
          enum: ["resourceLink", "resource"],
        },
      },
    };
    expect(validateJson(schema, { data: "data:text/plain;base64,aGk=", outputType: "resource" })).toEqual([]);
    expect(validateJson(schema, { data: "README.md", outputType: "link" })).toEqual([
      '/data: must be a valid uri (got "README.md")',
      '/outputType: must be one of "resourceLink", "resource", got "link"',
    ]);
  });

  it("validates a draft-07 schema that reuses a sibling by $ref (zod-to-json-schema's style)", () => {
    const schema = {
      type: "object",
      properties: {
        messages: {
          type: "array",
          items: {
            type: "object",
            properties: {
              role: { type: "string", enum: ["user", "assistant"] },
              content: { type: "string" },
            },
            required: ["role", "content"],
            additionalProperties: false,
          },
        },
        replyTo: { $ref: "#/properties/messages/items" },
        maxTokens: { type: "number", exclusiveMinimum: 0, default: 100 },
      },
      required: ["messages"],
      additionalProperties: false,
      $schema: "http://json-schema.org/draft-07/schema#",
    };
    expect(validateJson(schema, { messages: [{ role: "user", content: "hi" }], maxTokens: 10 })).toEqual([]);
    expect(
      validateJson(schema, {
        messages: [{ role: "system", content: "hi" }],
        replyTo: { role: "user" },
        maxTokens: 0,
      }),
    ).toEqual([
      '/messages/0/role: must be one of "user", "assistant", got "system"',
      "/replyTo/content: is required",
      "/maxTokens: must be > 0",
    ]);
  });

  it("reads draft-07 `definitions` through $ref", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { level: { type: "string", enum: ["debug", "info"] } },
      type: "object",
      properties: { level: { $ref: "#/definitions/level" } },
    };
    expect(validateJson(schema, { level: "info" })).toEqual([]);
    expect(validateJson(schema, { level: "loud" })).toEqual([
      '/level: must be one of "debug", "info", got "loud"',
    ]);
  });

  it("never touches the caller's (frozen) schema object, however often it validates", () => {
    const schema = Object.freeze({
      type: "object",
      properties: Object.freeze({ a: Object.freeze({ $ref: "#/$defs/a" }) }),
      $defs: Object.freeze({ a: Object.freeze({ type: "string" }) }),
    });
    const before = JSON.stringify(schema);
    for (let i = 0; i < 3; i++)
      expect(validateJson(schema, { a: 1 })).toEqual(["/a: expected string, got integer 1"]);
    expect(JSON.stringify(schema)).toBe(before);
    expect(Object.getOwnPropertyNames(schema.properties.a)).toEqual(["$ref"]);
  });

  it("falls back to structural checks when the validator rejects the schema", () => {
    // an unresolvable $ref and an invalid pattern: the rest of the schema still holds
    const schema = {
      type: "object",
      properties: {
        a: { $ref: "#/$defs/missing" },
        b: { type: "string", pattern: "([" },
        c: { type: "integer" },
      },
      required: ["c"],
    };
    expect(validateJson(schema, { a: 1, b: "x", c: 1 })).toEqual([]);
    expect(validateJson(schema, { b: "x", c: "1" })).toEqual(['/c: expected integer, got string "1"']);
    expect(validateJson(schema, { b: "x" })).toEqual(["/c: is required"]);
  });

  it("treats undefined inside a JS value as absent", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    expect(validateJson(schema, { a: "x", b: undefined })).toEqual([]);
    expect(validateJson(schema, undefined)).toEqual(["/: expected object, got undefined"]);
  });
});
