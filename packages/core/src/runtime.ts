import type { ProtocolDriver } from "@lash/sansio";
import { standardDriver } from "@lash/sansio";
import * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Option from "effect/Option";
import * as Stream from "effect/Stream";
import type { Grants } from "./approval.ts";
import { Calibration } from "./compaction/estimate.ts";
import { Approver, Governance } from "./governance.ts";
import { PluginHost, ToolCatalog } from "./host.ts";
import { ActivityHub, ActivityRetention } from "./hub.ts";
import { EffectJournal, Journal } from "./journal.ts";
import { makeLeases } from "./lease.ts";
import type { LashRuntimeShape, RuntimeOptions } from "./runtime-api.ts";
import { IdGenerator, LlmProviders, ModelCatalog } from "./services.ts";
import { sessionOps } from "./sessions.ts";
import { SessionStore } from "./store.ts";
import { turnEntries } from "./turn/entry.ts";
import type { RuntimeContext, SessionLocal } from "./turn/scope.ts";

export type {
  AbandonedTurn,
  CodeExecutor,
  CompactionResult,
  Comparison,
  CreateSessionOptions,
  ExecContext,
  LashRuntimeShape,
  LeaseOptions,
  ProjectorContext,
  RuntimeOptions,
  TurnHandle,
  TurnInput,
  TurnOptions,
  TurnResult,
  UsageSummary,
} from "./runtime-api.ts";
export { describeHolder, TurnError } from "./runtime-api.ts";

/**
 * The runtime: wires the services a turn needs (store, journal, providers, catalog,
 * plugins, leases) into the session operations (`sessions.ts`) and the turn
 * (`turn/`: one file per effect executor, the loop, the commit).
 */
export const makeRuntime = (options: RuntimeOptions) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const journal = Option.getOrElse(
      yield* Effect.serviceOption(EffectJournal),
      () => new Journal(options.journal === false ? undefined : store),
    );
    const drivers: { readonly [mode: string]: ProtocolDriver } = {
      standard: standardDriver,
      ...options.drivers,
    };
    const givenHost = yield* Effect.serviceOption(PluginHost);
    const pluginHost = Option.isSome(givenHost)
      ? givenHost.value
      : yield* Effect.try({ try: () => PluginHost.make(options.plugins ?? []), catch: (e) => e }).pipe(
          Effect.orDie,
        );
    const toolCatalog = Option.getOrElse(yield* Effect.serviceOption(ToolCatalog), () =>
      ToolCatalog.make(pluginHost),
    );
    const locals = new Map<string, SessionLocal>();
    const governance =
      options.governance ??
      Option.getOrElse(yield* Effect.serviceOption(Governance), () => Governance.allowAll);
    const approver = options.approver ?? Option.getOrUndefined(yield* Effect.serviceOption(Approver));
    const grants = new Map<string, Grants>();
    const retention = new ActivityRetention();

    const local = (sessionId: string): Effect.Effect<SessionLocal> =>
      Effect.suspend(() => {
        const existing = locals.get(sessionId);
        if (existing) return Effect.succeed(existing);
        return Effect.map(ActivityHub.make(sessionId, { retention }), (hub) => {
          const again = locals.get(sessionId);
          if (again) return again;
          const created: SessionLocal = {
            hub,
            lock: Effect.unsafeMakeSemaphore(1),
            leaseLock: Effect.unsafeMakeSemaphore(1),
          };
          locals.set(sessionId, created);
          return created;
        });
      });

    const leases = yield* makeLeases(store, options, (id) => Effect.map(local(id), (l) => l.leaseLock));
    let self: LashRuntimeShape | undefined;
    const rt: RuntimeContext = {
      store,
      ids: yield* IdGenerator,
      providers: yield* LlmProviders,
      catalog: yield* ModelCatalog,
      journal,
      drivers,
      pluginHost,
      toolCatalog,
      codeExecutor: options.codeExecutor,
      maxTurns: options.maxTurns,
      maxResumeAttempts: options.maxResumeAttempts ?? 3,
      dispatch: options.dispatch,
      projectors: options.projectors ?? {},
      runtimeScope: yield* Effect.scope,
      leases,
      local,
      // allow-all needs no approval step: the dispatcher then does no governance work at all
      governance: governance === Governance.allowAll ? undefined : governance,
      approver,
      grants,
      compaction: options.compaction ?? {},
      calibration: new Calibration(),
      self: () => {
        if (!self) throw new Error("the runtime is not built yet");
        return self;
      },
    };
    self = {
      ...sessionOps({ store, ids: rt.ids, drivers, pluginHost, toolCatalog }),
      ...turnEntries(rt),
      getSession: (id) => store.getSession(id),
      listSessions: (o) => store.listSessions(o),
      deleteSession: (id) =>
        Effect.zipRight(
          store.deleteSession(id),
          Effect.sync(() => {
            const l = locals.get(id);
            if (l) retention.forget(l.hub);
            locals.delete(id);
            grants.delete(id);
            rt.calibration.forget(id);
            for (const p of pluginHost.plugins(id)) p.forget?.(id);
            pluginHost.detach(id);
          }),
        ),
      acquireLease: leases.acquire,
      releaseLease: leases.release,
      observe: (sessionId, cursor) =>
        Stream.unwrap(Effect.map(local(sessionId), (l) => l.hub.observe(cursor))),
      pluginStatus: () => pluginHost.status(),
      children: (id) => store.children(id),
    };
    return self;
  });

export class LashRuntime extends Context.Tag("@lash/core/LashRuntime")<LashRuntime, LashRuntimeShape>() {
  static layer(options: RuntimeOptions = {}) {
    return Layer.scoped(LashRuntime, makeRuntime(options));
  }
}
