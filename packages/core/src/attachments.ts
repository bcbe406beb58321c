// Attachments and images as artifacts (issue 20). A message's attachment parts and a tool
// result's attachment content (a user's image, an MCP tool's image) reach the turn as inline
// base64; before the turn commits, their bytes are stored once as content-addressed artifacts
// and the node keeps only `{type: "attachment", ref: "artifact:<sha256>", mediaType, name?}`.
// The projection that builds the next request resolves each such reference back to the bytes,
// so the model sees the same image. Nodes written before this (inline base64) load as they are.
import { Buffer } from "node:buffer";
import type { AttachmentPart, Message, Part, ToolResultContent } from "@lash/sansio";
import * as Effect from "effect/Effect";
import { artifactIdOfRef, artifactRef } from "./store/artifacts.ts";
import type { NewNode, StoreError } from "./store.ts";

type Put = (bytes: Uint8Array, mediaType: string) => Effect.Effect<string, StoreError>;
type Read = (id: string) => Effect.Effect<Uint8Array | undefined, StoreError>;

const isInline = (a: AttachmentPart): a is AttachmentPart & { readonly data: string } =>
  typeof a.data === "string";

function mapAttachments<E>(
  m: Message,
  f: (a: AttachmentPart) => Effect.Effect<AttachmentPart, E>,
  toolFull: boolean,
): Effect.Effect<Message, E> {
  const content = (cs: readonly ToolResultContent[]): Effect.Effect<ToolResultContent[], E> =>
    Effect.forEach(
      cs,
      (c): Effect.Effect<ToolResultContent, E> => (c.type === "attachment" ? f(c) : Effect.succeed(c)),
    );
  return Effect.map(
    Effect.forEach(m.parts, (p): Effect.Effect<Part, E> => {
      if (p.type === "attachment") return f(p);
      if (p.type !== "toolResult") return Effect.succeed(p);
      return Effect.gen(function* () {
        const c = yield* content(p.content);
        const full = toolFull && p.full ? yield* content(p.full) : p.full;
        return { ...p, content: c, ...(full ? { full } : {}) };
      });
    }),
    (parts) => ({ ...m, parts }),
  );
}

const hasInline = (m: Message): boolean =>
  m.parts.some(
    (p) =>
      (p.type === "attachment" && isInline(p)) ||
      (p.type === "toolResult" &&
        (p.content.some((c) => c.type === "attachment" && isInline(c)) ||
          (p.full ?? []).some((c) => c.type === "attachment" && isInline(c)))),
  );

/** A message with each inline attachment's bytes stored through `put` and replaced by its reference. */
export function externalizeMessage(m: Message, put: Put): Effect.Effect<Message, StoreError> {
  if (!hasInline(m)) return Effect.succeed(m);
  return mapAttachments(
    m,
    (a) => {
      if (!isInline(a)) return Effect.succeed(a);
      const bytes = new Uint8Array(Buffer.from(a.data, "base64"));
      return Effect.map(put(bytes, a.mediaType), (id) => {
        const { data: _data, ref: _ref, ...rest } = a;
        return { ...rest, ref: artifactRef(id) };
      });
    },
    true,
  );
}

/** The message nodes of a commit with their inline attachments stored as artifacts. */
export function externalizeNodes(nodes: readonly NewNode[], put: Put): Effect.Effect<NewNode[], StoreError> {
  return Effect.forEach(nodes, (n) =>
    n.kind === "message"
      ? Effect.map(externalizeMessage(n.payload as Message, put), (payload) =>
          payload === n.payload ? n : { ...n, payload },
        )
      : Effect.succeed(n),
  );
}

const hasRef = (m: Message): boolean =>
  m.parts.some(
    (p) =>
      (p.type === "attachment" && !isInline(p) && p.ref?.startsWith("artifact:")) ||
      (p.type === "toolResult" &&
        p.content.some((c) => c.type === "attachment" && !isInline(c) && c.ref?.startsWith("artifact:"))),
  );

/**
 * What the model is sent: each attachment that refers to an artifact carries its bytes again
 * (message parts and tool-result content; a tool result's `full` is never sent). An artifact
 * that is gone (collected) stays a reference: the provider adapters show a placeholder.
 */
export function resolveMessages(
  history: readonly Message[],
  read: Read,
): Effect.Effect<Message[], StoreError> {
  // the common case (no attachment on the path) costs one scan, not an effect per message
  if (!history.some(hasRef)) return Effect.succeed(history as Message[]);
  const cache = new Map<string, string | undefined>();
  return Effect.forEach(history, (m) =>
    hasRef(m)
      ? mapAttachments(
          m,
          (a) => {
            const id = isInline(a) || a.ref === undefined ? undefined : artifactIdOfRef(a.ref);
            if (id === undefined) return Effect.succeed(a);
            const known = cache.get(id);
            const withData = (data: string | undefined): AttachmentPart =>
              data === undefined ? a : { ...a, data };
            if (cache.has(id)) return Effect.succeed(withData(known));
            return Effect.map(read(id), (bytes) => {
              const data = bytes === undefined ? undefined : Buffer.from(bytes).toString("base64");
              cache.set(id, data);
              return withData(data);
            });
          },
          false,
        )
      : Effect.succeed(m),
  );
}
