import { addUsage, type Message, type ProtocolDriver, type Usage } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import type { PluginHostShape, ToolCatalogShape } from "./host.ts";
import type { LashRuntimeShape } from "./runtime-api.ts";
import type { IdGeneratorShape } from "./services.ts";
import { SessionNotFound, type SessionRecord, type SessionStoreShape, StoreError } from "./store.ts";
import { toolSpec } from "./tool.ts";

/** What the session operations (everything but the turn) need. */
export interface SessionOpsContext {
  readonly store: SessionStoreShape;
  readonly ids: IdGeneratorShape;
  readonly drivers: { readonly [mode: string]: ProtocolDriver };
  readonly pluginHost: PluginHostShape;
  readonly toolCatalog: ToolCatalogShape;
}

type SessionOps = Pick<
  LashRuntimeShape,
  | "createSession"
  | "attachPlugins"
  | "fork"
  | "branch"
  | "compare"
  | "chronological"
  | "readView"
  | "usage"
  | "tools"
  | "toolDefinitions"
>;

/** Creating, forking, branching and reading sessions: the runtime's operations outside a turn. */
export function sessionOps({ store, ids, drivers, pluginHost, toolCatalog }: SessionOpsContext): SessionOps {
  const catalogFor = (session: SessionRecord) => toolCatalog.forSession(session);
  const createSession: LashRuntimeShape["createSession"] = (o) =>
    Effect.gen(function* () {
      const id = yield* ids.next("ses");
      const frameId = yield* ids.next("frame");
      const now = yield* Clock.currentTimeMillis;
      const mode = o.mode ?? "standard";
      if (!drivers[mode]) {
        return yield* Effect.fail(
          new StoreError({
            message: `mode "${mode}" is not available in this runtime (available: ${Object.keys(drivers).join(", ")})`,
          }),
        );
      }
      const record: SessionRecord = {
        id,
        model: o.model,
        mode,
        createdAt: now,
        updatedAt: now,
        leafId: null,
        headRevision: 0,
        turnCount: 0,
        frameId,
        state: { ...o.state, ...(o.tools ? { "lash.tools": [...o.tools] } : {}) },
        ...(o.title !== undefined ? { title: o.title } : {}),
        ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
        ...(o.systemPrompt !== undefined ? { systemPrompt: o.systemPrompt } : {}),
        ...(o.parentLink !== undefined ? { parentLink: o.parentLink } : {}),
      };
      const created = yield* store.createSession(record);
      if (o.plugins?.length) pluginHost.attach(id, o.plugins);
      return created;
    });

  const attachPlugins: LashRuntimeShape["attachPlugins"] = (sessionId, plugins) =>
    Effect.sync(() => pluginHost.attach(sessionId, plugins));

  const fork: LashRuntimeShape["fork"] = (sessionId, o = {}) =>
    Effect.gen(function* () {
      const source = yield* store.getSession(sessionId);
      const at = o.atNode ?? source.leafId;
      let frameId = source.frameId;
      if (at) {
        const node = yield* store.getNode(at);
        if (!node)
          return yield* Effect.fail(new SessionNotFound({ sessionId, message: `node ${at} not found` }));
        frameId = node.frameId;
      }
      const id = yield* ids.next("ses");
      const now = yield* Clock.currentTimeMillis;
      const { parentLink: _omit, ...rest } = source;
      return yield* store.fork({
        ...rest,
        id,
        title: o.title ?? (source.title ? `${source.title} (fork)` : "fork"),
        createdAt: now,
        updatedAt: now,
        leafId: at,
        headRevision: 0,
        turnCount: 0,
        frameId,
        origin: { sessionId, nodeId: at },
      });
    });

  const branch: LashRuntimeShape["branch"] = (sessionId, nodeId) =>
    Effect.gen(function* () {
      const session = yield* store.getSession(sessionId);
      const now = yield* Clock.currentTimeMillis;
      return yield* store.setLeaf(sessionId, nodeId, session.headRevision, now);
    });

  const pathOfLeaf = (leaf: string) =>
    Effect.gen(function* () {
      const node = yield* store.getNode(leaf);
      if (!node)
        return yield* Effect.fail(new SessionNotFound({ sessionId: "?", message: `node ${leaf} not found` }));
      return yield* store.activePath(node.sessionId, leaf);
    });

  const compare: LashRuntimeShape["compare"] = (leafA, leafB) =>
    Effect.gen(function* () {
      const a = yield* pathOfLeaf(leafA);
      const b = yield* pathOfLeaf(leafB);
      let i = 0;
      while (i < a.length && i < b.length && a[i]!.id === b[i]!.id) i++;
      return { ancestor: i > 0 ? a[i - 1]!.id : null, onlyA: a.slice(i), onlyB: b.slice(i) };
    });

  const chronological: LashRuntimeShape["chronological"] = (sessionId) =>
    Effect.flatMap(store.getSession(sessionId), () => store.activePath(sessionId));

  const readView: LashRuntimeShape["readView"] = (sessionId) =>
    Effect.flatMap(chronological(sessionId), (nodes) =>
      // a payload is read and decoded on first access: one that cannot be (a damaged page, a row
      // that does not decode) is the StoreError it throws, a failure, not a defect
      Effect.try({
        try: () => nodes.filter((n) => n.kind === "message").map((n) => n.payload as Message),
        catch: (e) =>
          e instanceof StoreError
            ? e
            : new StoreError({ message: `reading session ${sessionId}: ${String(e)}`, cause: e }),
      }),
    );

  const usage: LashRuntimeShape["usage"] = (sessionId) =>
    Effect.gen(function* () {
      yield* store.getSession(sessionId);
      const rows = yield* store.usage(sessionId);
      let total: Usage = {};
      let cost: number | undefined;
      const groups = new Map<string, { source: string; model: string; usage: Usage; costUsd?: number }>();
      for (const r of rows) {
        total = addUsage(total, r.usage);
        if (r.costUsd !== undefined) cost = (cost ?? 0) + r.costUsd;
        const key = `${r.source}\u0000${r.model}`;
        const g = groups.get(key) ?? { source: r.source, model: r.model, usage: {} };
        g.usage = addUsage(g.usage, r.usage);
        if (r.costUsd !== undefined) g.costUsd = (g.costUsd ?? 0) + r.costUsd;
        groups.set(key, g);
      }
      return {
        rows,
        total,
        ...(cost !== undefined ? { costUsd: cost } : {}),
        bySource: [...groups.values()],
      };
    });

  const tools: LashRuntimeShape["tools"] = (sessionId) =>
    Effect.gen(function* () {
      const session = yield* store.getSession(sessionId);
      const map = yield* catalogFor(session);
      return [...map.values()].map(toolSpec);
    });

  const toolDefinitions: LashRuntimeShape["toolDefinitions"] = (sessionId) =>
    Effect.gen(function* () {
      const session = yield* store.getSession(sessionId);
      const map = yield* catalogFor(session);
      return [...map.values()];
    });

  return {
    createSession,
    attachPlugins,
    fork,
    branch,
    compare,
    chronological,
    readView,
    usage,
    tools,
    toolDefinitions,
  };
}
