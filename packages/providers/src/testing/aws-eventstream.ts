// AWS event-stream framing (application/vnd.amazon.eventstream), the binary framing
// Bedrock's `invoke-with-response-stream` uses: each message is
//   total length (u32) · headers length (u32) · CRC32 of those 8 bytes ·
//   headers (name length u8, name, type 7 = string, value length u16, value) ·
//   payload · CRC32 of everything before.
// A Messages API event travels as a `chunk` event whose JSON payload holds the
// event's bytes in base64.
import { crc32 } from "node:zlib";

function header(name: string, value: string): Buffer {
  const n = Buffer.from(name, "utf8");
  const v = Buffer.from(value, "utf8");
  const out = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
  let at = out.writeUInt8(n.length, 0);
  at += n.copy(out, at);
  at = out.writeUInt8(7, at);
  at = out.writeUInt16BE(v.length, at);
  v.copy(out, at);
  return out;
}

/** One event-stream message with string headers. */
export function eventStreamMessage(headers: Readonly<Record<string, string>>, payload: Buffer): Buffer {
  const h = Buffer.concat(Object.entries(headers).map(([k, v]) => header(k, v)));
  const total = 12 + h.length + payload.length + 4;
  const out = Buffer.alloc(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(h.length, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  h.copy(out, 12);
  payload.copy(out, 12 + h.length);
  out.writeUInt32BE(crc32(out.subarray(0, total - 4)), total - 4);
  return out;
}

/** A Bedrock `chunk` event carrying one Messages API event (its JSON text). */
export function bedrockChunk(eventJson: string): Buffer {
  const payload = Buffer.from(
    JSON.stringify({ bytes: Buffer.from(eventJson, "utf8").toString("base64") }),
    "utf8",
  );
  return eventStreamMessage(
    { ":event-type": "chunk", ":content-type": "application/json", ":message-type": "event" },
    payload,
  );
}
