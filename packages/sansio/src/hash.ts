import { createHash, hash } from "node:crypto";

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, `undefined`
 * members dropped (as JSON.stringify does). The only serialization a hash is
 * ever taken of in this project.
 */
export function canonicalJson(value: unknown): string {
  return write(value);
}

function write(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return value.toString();
    case "object": {
      const maybe = value as { toJSON?: () => unknown };
      if (typeof maybe.toJSON === "function") return write(maybe.toJSON());
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ",";
          const item = value[i];
          out += item === undefined || typeof item === "function" ? "null" : write(item);
        }
        return out + "]";
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      let out = "{";
      let first = true;
      for (const key of keys) {
        const item = record[key];
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
        if (!first) out += ",";
        first = false;
        out += JSON.stringify(key) + ":" + write(item);
      }
      return out + "}";
    }
    default:
      return "null";
  }
}

/** Hex SHA-256 of a string (UTF-8); one-shot `crypto.hash`, no Hash object per call. */
export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

/** The sha256 of raw bytes, hex (the id of a content-addressed artifact). */
export function sha256BytesHex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** `sha256Hex(canonicalJson(value))`. */
export function hashValue(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
