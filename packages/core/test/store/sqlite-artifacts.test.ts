// SqliteStore artifacts beyond the conformance suite: the chunk rows in the file,
// large artifacts as files beside the database, and a reopen that still reads them.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { sha256BytesHex } from "@lash/sansio";
import { Effect } from "effect";
import { ARTIFACT_CHUNK_BYTES } from "../../src/store/artifacts.ts";
import { makeSqliteStore } from "../../src/store/sqlite.ts";
import { tempDb, withRaw } from "./sqlite-helpers.ts";

const bytes = (n: number, seed: number) => {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
};

const counts = (filename: string) =>
  withRaw(filename, (sql) =>
    Effect.all([
      sql<{ n: number; size: number | null }>`SELECT count(*) AS n, sum(size) AS size FROM artifacts`,
      sql<{
        n: number;
        bytes: number | null;
      }>`SELECT count(*) AS n, sum(length(data)) AS bytes FROM artifact_chunks`,
      sql<{ m: number | null }>`SELECT max(length(data)) AS m FROM artifact_chunks`,
    ]),
  );

describe("SqliteStore artifacts", () => {
  it.scoped("below the file threshold: chunks of at most 256 KiB in the database, stored once", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const data = bytes(1_000_000, 7);
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ filename });
          yield* store.putArtifact({ bytes: data, mediaType: "application/octet-stream", createdAt: 1 });
          yield* store.putArtifact({ bytes: data, mediaType: "application/octet-stream", createdAt: 2 });
        }),
      );
      const [arts, chunks, max] = (yield* counts(filename)) as [
        { n: number; size: number }[],
        { n: number; bytes: number }[],
        { m: number }[],
      ];
      expect(arts[0]).toEqual({ n: 1, size: 1_000_000 });
      expect(chunks[0]).toEqual({ n: Math.ceil(1_000_000 / ARTIFACT_CHUNK_BYTES), bytes: 1_000_000 });
      expect(max[0]!.m).toBe(ARTIFACT_CHUNK_BYTES);
      expect(existsSync(`${filename}.artifacts`)).toBe(false);
      // a reopened store reads the same bytes
      const back = yield* Effect.scoped(
        Effect.flatMap(makeSqliteStore({ filename }), (s) => s.readArtifact(sha256BytesHex(data))),
      );
      expect(Buffer.from(back!).equals(Buffer.from(data))).toBe(true);
    }),
  );

  it.scoped("above the file threshold: one file named by its hash beside the database, removed by gc", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const data = bytes(300_000, 3);
      const id = sha256BytesHex(data);
      const file = join(`${filename}.artifacts`, id.slice(0, 2), id);
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ filename, artifactFileBytes: 100_000 });
          yield* store.putArtifact({ bytes: data, mediaType: "text/plain", createdAt: 1 });
          expect(Buffer.from(readFileSync(file)).equals(Buffer.from(data))).toBe(true);
          expect(readdirSync(join(`${filename}.artifacts`, id.slice(0, 2)))).toEqual([id]);
          const back = yield* store.readArtifact(id);
          expect(Buffer.from(back!).equals(Buffer.from(data))).toBe(true);
        }),
      );
      const [arts, chunks] = (yield* counts(filename)) as unknown as [{ n: number }[], { n: number }[]];
      expect(arts[0]!.n).toBe(1);
      expect(chunks[0]!.n).toBe(0);
      const gc = yield* Effect.scoped(
        Effect.flatMap(makeSqliteStore({ filename, artifactFileBytes: 100_000 }), (s) =>
          s.collectArtifacts({ storedBefore: 10 }),
        ),
      );
      expect(gc).toEqual({ removed: [id], bytes: 300_000 });
      expect(existsSync(file)).toBe(false);
    }),
  );
});
