// Artifacts for plugins and tools: the slice of the SessionStore that puts and
// reads content-addressed blobs (the output budget keeps cut outputs here,
// `read_artifact` pages through them), and garbage collection as a library call.
import * as Clock from "effect/Clock";
import * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import {
  type ArtifactGcResult,
  type ArtifactInfo,
  type ArtifactPut,
  SessionStore,
  type SessionStoreShape,
  type StoreError,
} from "./store.ts";

export {
  ARTIFACT_CHUNK_BYTES,
  ARTIFACT_FILE_BYTES,
  artifactIdOfRef,
  artifactRef,
  artifactRefsOf,
  isArtifactId,
} from "./store/artifacts.ts";

export interface ArtifactsShape {
  readonly put: (artifact: ArtifactPut) => Effect.Effect<ArtifactInfo, StoreError>;
  readonly info: (id: string) => Effect.Effect<ArtifactInfo | undefined, StoreError>;
  readonly read: (id: string) => Effect.Effect<Uint8Array | undefined, StoreError>;
}

/**
 * Where artifacts live during a turn. The runtime provides it (over its store)
 * to the `projectToolResult` hook and lends it to tools as `ToolContext.host.artifacts`.
 */
export class Artifacts extends Context.Tag("@lash/core/Artifacts")<Artifacts, ArtifactsShape>() {
  static fromStore(store: SessionStoreShape): ArtifactsShape {
    return { put: store.putArtifact, info: store.artifactInfo, read: store.readArtifact };
  }
  /** Over the `SessionStore` in context. */
  static readonly layer: Layer.Layer<Artifacts, never, SessionStore> = Layer.effect(
    Artifacts,
    Effect.map(SessionStore, Artifacts.fromStore),
  );
}

export interface CollectArtifactsOptions {
  /**
   * Keep artifacts stored less than this long ago (default one hour): a turn that is
   * running now may have stored an artifact its nodes will refer to when it commits.
   */
  readonly minAgeMs?: number;
}

/** The default grace period of `collectArtifacts`. */
export const ARTIFACT_GC_MIN_AGE_MS = 60 * 60 * 1000;

/**
 * Garbage-collect artifacts: remove those no node of any session refers to (on
 * any branch; nodes of deleted sessions that a fork still runs through count),
 * older than `minAgeMs`.
 */
export const collectArtifacts = (
  options: CollectArtifactsOptions = {},
): Effect.Effect<ArtifactGcResult, StoreError, SessionStore> =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const now = yield* Clock.currentTimeMillis;
    return yield* store.collectArtifacts({
      storedBefore: now - (options.minAgeMs ?? ARTIFACT_GC_MIN_AGE_MS),
    });
  });
