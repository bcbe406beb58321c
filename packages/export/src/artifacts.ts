// Artifacts in exports: the JSON export embeds each artifact a session's nodes
// refer to (base64, checked against its sha256 on import); the HTML and Markdown
// renderings show a text artifact's content in place of the reference (cut like
// any long result) and name the artifact.
import { type ArtifactInfo, artifactIdOfRef, artifactRefsOf } from "@lash/core";
import type { Message, Part, ToolResultContent } from "@lash/sansio";
import { Effect } from "effect";
import type { ExportedArtifact, ExportedNode, ExportedSession } from "./schema.ts";

/** The slice of a store (Effect or promise shape) the export reads artifacts with. */
export interface ArtifactSource {
  readonly artifactInfo: (id: string) => unknown;
  readonly readArtifact: (id: string) => unknown;
}

const settle = <A>(value: unknown): Promise<A> =>
  Effect.isEffect(value)
    ? Effect.runPromise(value as Effect.Effect<A, unknown>)
    : Promise.resolve(value as Promise<A>);

/** The artifact ids the nodes refer to, first reference first. */
export function artifactIdsOf(nodes: readonly ExportedNode[]): string[] {
  const ids = new Set<string>();
  for (const n of nodes) for (const id of artifactRefsOf(n.payload)) ids.add(id);
  return [...ids];
}

/** Read the artifacts the nodes refer to (ones the store no longer has are left out). */
export async function loadArtifacts(
  store: ArtifactSource,
  nodes: readonly ExportedNode[],
): Promise<ExportedArtifact[]> {
  const out: ExportedArtifact[] = [];
  for (const id of artifactIdsOf(nodes)) {
    const info = await settle<ArtifactInfo | undefined>(store.artifactInfo(id));
    const bytes = info && (await settle<Uint8Array | undefined>(store.readArtifact(id)));
    if (!info || !bytes) continue;
    out.push({ id, mediaType: info.mediaType, size: info.size, data: Buffer.from(bytes).toString("base64") });
  }
  return out;
}

const decoder = new TextDecoder("utf-8");

/** The text of a text artifact, else undefined. */
function artifactText(a: ExportedArtifact | undefined): string | undefined {
  if (a === undefined || !a.mediaType.startsWith("text/")) return undefined;
  return decoder.decode(Buffer.from(a.data, "base64"));
}

function inlineContent(
  content: readonly ToolResultContent[],
  byId: ReadonlyMap<string, ExportedArtifact>,
): readonly ToolResultContent[] {
  return content.map((c) => {
    if (c.type !== "attachment" || c.ref === undefined) return c;
    const id = artifactIdOfRef(c.ref);
    const text = id !== undefined ? artifactText(byId.get(id)) : undefined;
    if (id === undefined || text === undefined) return c;
    return { type: "text", text: `[artifact ${id} · ${byId.get(id)!.size} bytes · ${c.mediaType}]\n${text}` };
  });
}

/** An attachment stored as an artifact (an image, a file) with its bytes back, for rendering. */
function withBytes<A extends { readonly mediaType: string; readonly data?: string; readonly ref?: string }>(
  a: A,
  byId: ReadonlyMap<string, ExportedArtifact>,
): A {
  if (a.data !== undefined || a.ref === undefined) return a;
  const id = artifactIdOfRef(a.ref);
  const artifact = id === undefined ? undefined : byId.get(id);
  return artifact === undefined ? a : { ...a, data: artifact.data };
}

/**
 * The session (and its children) with each attachment that refers to an artifact given its
 * bytes again (an image shows in the HTML), and each tool result's artifact reference
 * replaced by the artifact's text, for the HTML and Markdown renderings.
 */
export function inlineArtifacts(exported: ExportedSession): ExportedSession {
  const children = exported.children.map(inlineArtifacts);
  if (!exported.artifacts || exported.artifacts.length === 0) return { ...exported, children };
  const byId = new Map(exported.artifacts.map((a) => [a.id, a]));
  const nodes = exported.nodes.map((n) => {
    if (n.kind !== "message") return n;
    const m = n.payload as Message;
    if (!m || !Array.isArray(m.parts)) return n;
    const parts = m.parts.map((p): Part => {
      if (p.type === "attachment") return withBytes(p, byId);
      if (p.type !== "toolResult") return p;
      const content = p.content.map(
        (c: ToolResultContent): ToolResultContent => (c.type === "attachment" ? withBytes(c, byId) : c),
      );
      return { ...p, content, ...(p.full !== undefined ? { full: inlineContent(p.full, byId) } : {}) };
    });
    return { ...n, payload: { ...m, parts } };
  });
  return { ...exported, nodes, children };
}
