import { createHash, hash } from "node:crypto";

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, `undefined`
 * members dropped (as JSON.stringify does). The only serialization a hash is
 * ever taken of in this project.
 */
export function canonicalJson(value: unknown): string {
  return write(value);
}

/** A short string with nothing to escape (printable ASCII, no `"` or `\\`): quoted as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `JSON.stringify(s)`, without the call for the short plain strings (ids, types, names) most values are. */
function quote(s: string): string {
  return s.length <= 32 && PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** Each object key seen, quoted with its colon (bounded: keys of user data may be unbounded). */
const quotedKeys = new Map<string, string>();

function keyOf(key: string): string {
  let q = quotedKeys.get(key);
  if (q === undefined) {
    q = `${JSON.stringify(key)}:`;
    if (quotedKeys.size < 4096) quotedKeys.set(key, q);
  }
  return q;
}

function write(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return quote(value);
    case "number":
      // a finite number's JSON is its string form
      return Number.isFinite(value) ? `${value}` : "null";
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
      const keys = Object.keys(record);
      // by code unit, as `sort()` orders them; an insertion sort is cheaper for the few keys most objects have
      if (keys.length > 16) keys.sort();
      else
        for (let i = 1; i < keys.length; i++) {
          const k = keys[i]!;
          let j = i - 1;
          while (j >= 0 && keys[j]! > k) {
            keys[j + 1] = keys[j]!;
            j--;
          }
          keys[j + 1] = k;
        }
      let out = "{";
      let first = true;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const item = record[key];
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
        if (!first) out += ",";
        first = false;
        out += keyOf(key) + write(item);
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
