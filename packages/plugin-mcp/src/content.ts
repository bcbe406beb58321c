import type { ToolOutput } from "@lash/core";

export type ResultPart = ToolOutput["content"][number];

type Obj = { readonly [key: string]: unknown };
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * Media types whose bytes are text: `text/*`, `application/json`, `application/xml`, any
 * `+json` / `+xml` suffix type, and a few other textual application types. Parameters
 * (`; charset=…`) are ignored.
 */
export function isTextMediaType(mimeType: string | undefined): boolean {
  if (mimeType === undefined) return false;
  const t = mimeType.split(";")[0]?.trim().toLowerCase() ?? "";
  return (
    t.startsWith("text/") ||
    t === "application/json" ||
    t === "application/xml" ||
    t.endsWith("+json") ||
    t.endsWith("+xml") ||
    t === "application/javascript" ||
    t === "application/ecmascript" ||
    t === "application/x-yaml" ||
    t === "application/yaml" ||
    t === "application/toml" ||
    t === "application/x-sh" ||
    t === "application/sql" ||
    t === "application/graphql" ||
    t === "application/x-ndjson" ||
    t === "application/ndjson"
  );
}

/** A base64 blob decoded as UTF-8, or `undefined` when the bytes are not valid UTF-8. */
function decodeTextBlob(blob: string): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(blob, "base64"));
  } catch {
    return undefined;
  }
}

/**
 * One MCP content block → result parts: `text` → text; `image` / `audio` → an attachment
 * (base64, with its media type); an embedded `resource` → its text (headed by the URI) or, for a
 * blob, an attachment named by the URI — except a blob with a text media type (`isTextMediaType`)
 * that is valid UTF-8, which is decoded and shown as text like a `text` resource; a `resource_link` → a text line naming the resource.
 * Unknown block types are shown as JSON text rather than dropped.
 */
export function mapContentBlock(block: unknown): ResultPart[] {
  if (!isObj(block)) return [{ type: "text", text: JSON.stringify(block) }];
  switch (block.type) {
    case "text":
      return [{ type: "text", text: str(block.text) ?? "" }];
    case "image":
    case "audio": {
      const data = str(block.data);
      const mediaType = str(block.mimeType) ?? (block.type === "image" ? "image/png" : "audio/wav");
      return data === undefined ? [] : [{ type: "attachment", mediaType, data }];
    }
    case "resource": {
      const r = isObj(block.resource) ? block.resource : {};
      const uri = str(r.uri) ?? "";
      const text = str(r.text);
      if (text !== undefined) return [{ type: "text", text: uri ? `[resource ${uri}]\n${text}` : text }];
      const blob = str(r.blob);
      const mimeType = str(r.mimeType);
      if (blob !== undefined && isTextMediaType(mimeType)) {
        const decoded = decodeTextBlob(blob);
        if (decoded !== undefined)
          return [{ type: "text", text: uri ? `[resource ${uri} (${mimeType})]\n${decoded}` : decoded }];
      }
      if (blob !== undefined)
        return [
          {
            type: "attachment",
            mediaType: str(r.mimeType) ?? "application/octet-stream",
            data: blob,
            ...(uri ? { name: uri } : {}),
          },
        ];
      return [{ type: "text", text: `[resource ${uri}]` }];
    }
    case "resource_link": {
      const name = str(block.title) ?? str(block.name) ?? "";
      const uri = str(block.uri) ?? "";
      const desc = str(block.description);
      const mime = str(block.mimeType);
      return [
        {
          type: "text",
          text: `[resource link] ${name}${name ? " " : ""}<${uri}>${mime ? ` (${mime})` : ""}${desc ? ` — ${desc}` : ""}`,
        },
      ];
    }
    default:
      return [{ type: "text", text: JSON.stringify(block) }];
  }
}

/**
 * An MCP `tools/call` result → a lash `ToolOutput`. `isError: true` stays an error result the
 * model reads. `value` (for Lashlang) is the structured content when the server sent one; without
 * it Lashlang reads the text content (the runtime's default), so the text is stored once, not twice.
 * `details` name the server and tool for UIs (`structured: true` when `value` holds the structure).
 */
export function mapCallResult(server: string, tool: string, result: unknown): ToolOutput {
  const r = isObj(result) ? result : {};
  let content: ResultPart[];
  if (Array.isArray(r.content)) content = r.content.flatMap(mapContentBlock);
  else if ("toolResult" in r) content = [{ type: "text", text: JSON.stringify(r.toolResult) }];
  else content = [];
  const structured = r.structuredContent;
  if (content.length === 0 && structured !== undefined)
    content = [{ type: "text", text: JSON.stringify(structured) }];
  if (content.length === 0)
    content = [{ type: "text", text: r.isError === true ? "(error, no message)" : "(no output)" }];
  return {
    content,
    ...(r.isError === true ? { isError: true } : {}),
    ...(structured !== undefined ? { value: structured } : {}),
    details: { server, tool, ...(structured !== undefined ? { structured: true } : {}) },
  };
}
