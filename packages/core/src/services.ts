import { randomBytes } from "node:crypto";
import type { LlmProvider, ModelInfo } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Context from "effect/Context";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";

/** Every id the runtime mints (sessions, turns, nodes). Tests provide a seeded one. */
export interface IdGeneratorShape {
  next(prefix: string): Effect.Effect<string>;
}
export class IdGenerator extends Context.Tag("@lash/core/IdGenerator")<IdGenerator, IdGeneratorShape>() {
  /** Time-ordered, collision-resistant ids: `<prefix>_<ms base36><random>`. */
  static readonly Live = Layer.succeed(IdGenerator, {
    next: (prefix) =>
      Effect.map(
        Clock.currentTimeMillis,
        (ms) => `${prefix}_${ms.toString(36).padStart(9, "0")}${randomBytes(6).toString("hex")}`,
      ),
  });
  /** Deterministic ids for tests: `<prefix>_<seed>_<n>`. */
  static seeded(seed = "test"): Layer.Layer<IdGenerator> {
    let n = 0;
    return Layer.succeed(IdGenerator, { next: (prefix) => Effect.sync(() => `${prefix}_${seed}_${++n}`) });
  }
}

export class UnknownModel extends Data.TaggedError("UnknownModel")<{
  readonly model: string;
  readonly message: string;
}> {}

/** Resolves a `provider/model` name to a provider. */
export interface LlmProvidersShape {
  forModel(model: string): Effect.Effect<LlmProvider, UnknownModel>;
}
export class LlmProviders extends Context.Tag("@lash/core/LlmProviders")<LlmProviders, LlmProvidersShape>() {
  /** One provider for every model (tests, single-provider hosts). */
  static single(provider: LlmProvider): Layer.Layer<LlmProviders> {
    return Layer.succeed(LlmProviders, { forModel: () => Effect.succeed(provider) });
  }
  static fromFunction(resolve: (model: string) => LlmProvider): Layer.Layer<LlmProviders> {
    return Layer.succeed(LlmProviders, {
      forModel: (model) =>
        Effect.try({
          try: () => resolve(model),
          catch: (e) => new UnknownModel({ model, message: e instanceof Error ? e.message : String(e) }),
        }),
    });
  }
}

/** Context windows, output caps and prices: usage becomes cost. */
export interface ModelCatalogShape {
  info(model: string): ModelInfo | undefined;
}
export class ModelCatalog extends Context.Tag("@lash/core/ModelCatalog")<ModelCatalog, ModelCatalogShape>() {
  static readonly Empty = Layer.succeed(ModelCatalog, { info: () => undefined });
  static fromEntries(entries: readonly ModelInfo[]): Layer.Layer<ModelCatalog> {
    const byId = new Map(entries.map((e) => [e.id, e]));
    return Layer.succeed(ModelCatalog, { info: (model) => byId.get(model) });
  }
}
