// The runtime of the compaction tests: a real SQLite file, the mock wire server as the model
// (through the real OpenAI SDK), the given compaction options.
import { createProvider } from "@lash/providers";
import type { startMockServer } from "@lash/providers/testing";
import { Effect, Layer, ManagedRuntime } from "effect";
import {
  type CompactionOptions,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  SqliteStore,
} from "../src/index.ts";

export type Server = Awaited<ReturnType<typeof startMockServer>>;
export const MODEL = "openai-compatible/mock";

/** A runtime over `db` against `server`, kept in `runtimes` for disposal; returns a runner. */
export function compactionRuntime(
  server: Server,
  db: string,
  compaction: CompactionOptions,
  runtimes: { dispose(): Promise<void> }[],
) {
  const provider = createProvider(MODEL, {
    baseUrl: server.baseUrl("openai-chat"),
    apiKey: "test",
    retry: false,
  });
  const rt = ManagedRuntime.make(
    LashRuntime.layer({ compaction }).pipe(
      Layer.provide(
        Layer.mergeAll(
          SqliteStore.layer({ filename: db }),
          LlmProviders.single(provider),
          IdGenerator.Live,
          ModelCatalog.Empty,
        ),
      ),
    ),
  );
  runtimes.push(rt);
  return <A, E>(f: (rt: LashRuntime["Type"]) => Effect.Effect<A, E>) =>
    rt.runPromise(Effect.flatMap(LashRuntime, f));
}
