// Content-addressed artifacts: what every store shares. An artifact is a run of
// bytes keyed by its sha256; a node refers to one with an attachment part
// `{type: "attachment", ref: "artifact:<sha256>", mediaType}` anywhere in its
// payload (a tool result's `full`, a message's parts …). Stores record those
// references when a node is committed, and garbage collection removes only
// artifacts no stored node refers to.

/** SQLite keeps an artifact in chunks of at most this many bytes. */
export const ARTIFACT_CHUNK_BYTES = 256 * 1024;

/** Artifacts above this size live in a file beside the database (default; `SqliteStoreOptions.artifactFileBytes`). */
export const ARTIFACT_FILE_BYTES = 8 * 1024 * 1024;

const ARTIFACT_ID = /^[0-9a-f]{64}$/;

/** Is `id` a well-formed artifact id (64 lowercase hex digits)? */
export const isArtifactId = (id: string): boolean => ARTIFACT_ID.test(id);

/** The `ref` of an attachment part that points at an artifact. */
export const artifactRef = (id: string): string => `artifact:${id}`;

/** The artifact id of an attachment `ref`, or undefined when it names no artifact. */
export function artifactIdOfRef(ref: string): string | undefined {
  if (!ref.startsWith("artifact:")) return undefined;
  const id = ref.slice("artifact:".length);
  return isArtifactId(id) ? id : undefined;
}

// In serialized JSON a `"ref"` key is always written exactly so; a model's text that
// happens to contain the same characters is a JSON string, whose quotes are escaped.
const REF_IN_JSON = /"ref":"artifact:([0-9a-f]{64})"/g;

/** The artifact ids a node payload refers to, from its JSON text (each once). */
export function artifactRefsInJson(json: string | null): readonly string[] {
  if (json === null || !json.includes('"ref":"artifact:')) return [];
  const ids = new Set<string>();
  for (const m of json.matchAll(REF_IN_JSON)) ids.add(m[1]!);
  return [...ids];
}

/** The artifact ids a node payload refers to. */
export const artifactRefsOf = (payload: unknown): readonly string[] =>
  payload === undefined ? [] : artifactRefsInJson(JSON.stringify(payload));
