// Shared by the auth/access/approvals unit tests: a real runtime over a real SQLite session
// store (a scripted model), wrapped as the daemon's `ServeHost`, and a stand-in for the
// `RunManager` seam (owned by another module) that records what the approvals registry
// asks of it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Manifest } from "@lash/agents";
import {
  type ApproverShape,
  type GovernanceShape,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  SessionStore,
  SqliteStore,
} from "@lash/core";
import type { NamedLayer, PolicyLayer } from "@lash/policy";
import { type MockReply, ScriptedProvider } from "@lash/providers/testing";
import type { ModelInfo } from "@lash/sansio";
import Database from "better-sqlite3";
import { Effect, Layer, ManagedRuntime } from "effect";
import { NotFound, type Principal, Run } from "../src/api.ts";
import type { RunManagerShape, ServeHost } from "../src/services.ts";

export const MODEL = "test/model";

const model: ModelInfo = {
  id: MODEL,
  contextWindow: 100_000,
  maxOutput: 8000,
  reasoning: false,
  images: false,
  caching: false,
  pricing: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
};

/** A temp directory removed by `cleanup`. */
export function tempDir(prefix: string): { readonly dir: string; readonly cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A state db file as the daemon opens it (WAL). */
export function stateDb(file: string): Database.Database {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  return db;
}

export interface TestHost extends ServeHost {
  readonly provider: ScriptedProvider;
  /** Create a session owned by `owner` (its durable `serve.owner`), optionally a child of another. */
  readonly createSession: (
    owner: string | undefined,
    options?: { readonly parent?: string; readonly agent?: string },
  ) => Promise<string>;
}

/** A real runtime (SQLite store at `dbFile`, scripted model) as a `ServeHost`. */
export function testHost(options: {
  readonly dbFile: string;
  readonly script?: readonly MockReply[];
  readonly governance?: GovernanceShape;
  readonly plugins?: readonly Plugin[];
  readonly manifest?: Manifest;
  readonly principals?: { readonly [name: string]: { readonly policy?: PolicyLayer } };
  readonly policyLayers?: (sessionId: string) => readonly NamedLayer[];
}): TestHost {
  const provider = new ScriptedProvider(options.script ?? []);
  let approver: ApproverShape | undefined;
  const delegating: ApproverShape = {
    ask: (request, signal) =>
      Effect.suspend(() => (approver ? approver.ask(request, signal) : Effect.die("no approver set"))),
  };
  const layer = LashRuntime.layer({
    plugins: options.plugins ?? [],
    ...(options.governance ? { governance: options.governance, approver: delegating } : {}),
  }).pipe(
    Layer.provideMerge(SqliteStore.layer({ filename: options.dbFile })),
    Layer.provide(
      Layer.mergeAll(LlmProviders.single(provider), IdGenerator.Live, ModelCatalog.fromEntries([model])),
    ),
  );
  const runtime = ManagedRuntime.make(layer);
  return {
    runtime,
    provider,
    defaultModel: MODEL,
    setApprover: (a) => {
      approver = a;
    },
    ...(options.manifest ? { manifest: options.manifest } : {}),
    ...(options.principals ? { principals: options.principals } : {}),
    ...(options.policyLayers ? { policyLayers: options.policyLayers } : {}),
    createSession: (owner, o = {}) =>
      runtime.runPromise(
        Effect.gen(function* () {
          const rt = yield* LashRuntime;
          const state: Record<string, unknown> = {};
          if (owner !== undefined) state["serve.owner"] = owner;
          if (o.agent !== undefined) state["serve.agent"] = o.agent;
          const s = yield* rt.createSession({
            model: MODEL,
            state,
            ...(o.parent ? { parentLink: { sessionId: o.parent, callId: "call-1", depth: 1 } } : {}),
          });
          return s.id;
        }),
      ),
    close: () => runtime.dispose(),
  };
}

/** Read a session's record through the host's store. */
export const sessionRecord = (host: ServeHost, id: string) =>
  host.runtime.runPromise(Effect.flatMap(SessionStore, (s) => s.getSession(id)));

/**
 * A stand-in for the daemon's `RunManager` (another module's seam): runs are registered by
 * the test; `setWaiting` calls are recorded, and `waiting(runId)` resolves on the next one.
 */
export function testRuns(): RunManagerShape & {
  readonly add: (run: {
    id: string;
    sessionId: string;
    turnId?: string;
    principal: Principal | string;
  }) => Run;
  readonly finish: (runId: string, state: "completed" | "cancelled" | "failed") => void;
  readonly waitingCalls: [string, boolean][];
  readonly nextWaiting: (runId: string) => Promise<boolean>;
} {
  const runs = new Map<string, Run>();
  const waitingCalls: [string, boolean][] = [];
  const listeners: { runId: string; resolve: (w: boolean) => void }[] = [];
  const notFound = (id: string) => new NotFound({ code: "run_not_found", message: `no run ${id}` });
  const set = (id: string, patch: Partial<Run>) => {
    const r = runs.get(id);
    if (r) runs.set(id, new Run({ ...r, ...patch }));
  };
  return {
    waitingCalls,
    add: ({ id, sessionId, turnId, principal }) => {
      const run = new Run({
        id,
        sessionId,
        ...(turnId ? { turnId } : {}),
        principal: typeof principal === "string" ? principal : principal.name,
        state: "running",
        input: "go",
        createdAt: 0,
        lastSeq: 0,
        resumes: 0,
      });
      runs.set(id, run);
      return run;
    },
    finish: (id, state) => set(id, { state }),
    nextWaiting: (runId) => new Promise((resolve) => listeners.push({ runId, resolve })),
    start: () => Effect.die("not used"),
    get: (id) => {
      const r = runs.get(id);
      return r ? Effect.succeed(r) : Effect.fail(notFound(id));
    },
    list: (sessionId) => Effect.succeed([...runs.values()].filter((r) => r.sessionId === sessionId)),
    wait: (id) => {
      const r = runs.get(id);
      return r ? Effect.succeed(r) : Effect.fail(notFound(id));
    },
    cancel: () => Effect.die("not used"),
    runOfTurn: (sessionId, turnId) =>
      [...runs.values()].find(
        (r) => r.sessionId === sessionId && (r.turnId === undefined || r.turnId === turnId),
      ),
    setWaiting: (runId, waiting) => {
      waitingCalls.push([runId, waiting]);
      set(runId, { state: waiting ? "waitingApproval" : "running" });
      for (const l of listeners.splice(0)) {
        if (l.runId === runId) l.resolve(waiting);
        else listeners.push(l);
      }
    },
  };
}
