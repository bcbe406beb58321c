// `lash serve --engine restate`: the daemon also runs a Restate worker endpoint, and its runs are
// submitted through Restate's ingress (one invocation per turn, idempotency key
// `{session}:{run id}`) instead of executing in this process. Whichever worker runs a turn
// publishes its events in the Postgres store's `turn_events` log, which every daemon's SSE
// streams follow: a client of daemon A sees a turn that worker B runs, and reconnects to any
// daemon with `Last-Event-ID`.
import {
  IdGenerator,
  type LashRuntime,
  LlmProviders,
  ModelCatalog,
  type RuntimeOptions,
  SessionStore,
  type TurnActivity,
} from "@lash/core";
import { registerDeployment, startRestateWorker, submitTurn } from "@lash/restate";
import type { TurnOutcome } from "@lash/sansio";
import { type ClusterEngine, eventKey, type SharedEvent } from "@lash/server";
import type { PostgresStoreShape, TurnEvent } from "@lash/store-postgres";
import { Context, Duration, Effect, Layer, type ManagedRuntime, Stream } from "effect";
import { CliError, ExitCode } from "./errors.ts";

export interface RestateSettings {
  /** Restate's ingress (e.g. http://127.0.0.1:8080): where runs are submitted. */
  readonly ingress: string;
  /** Restate's admin API (e.g. http://127.0.0.1:9070): the deployment is registered there. */
  readonly admin?: string;
  /** The port of this daemon's worker endpoint (HTTP/2 on 127.0.0.1; 0: any free one). */
  readonly workerPort: number;
  /** The URL Restate reaches the workers at (a load balancer in front of several): registered instead of this worker's own. */
  readonly deployment?: string;
}

export interface RestateEngine {
  readonly engine: ClusterEngine;
  /** This daemon's worker endpoint. */
  readonly workerUrl: string;
  close(): Promise<void>;
}

const toShared = (e: TurnEvent): SharedEvent => ({
  seq: e.seq,
  sessionId: e.sessionId,
  runId: e.turnId,
  type: e.type,
  at: e.at,
  data: e.data,
});

/** Every stored event of a session (all pages). */
async function readAll(store: PostgresStoreShape, sessionId: string): Promise<TurnEvent[]> {
  const out: TurnEvent[] = [];
  for (let after = 0; ; ) {
    const page = await Effect.runPromise(store.events.read(sessionId, after, 1000));
    out.push(...page);
    if (page.length < 1000) return out;
    after = page[page.length - 1]!.seq;
  }
}

/**
 * The publisher of a worker's turn events: in order, each step once. A retried invocation (on
 * this worker or another, after a crash) publishes again the events of the steps it replays;
 * what the log already has for the turn is dropped, as the local daemon drops a resumed run's.
 */
function publisher(store: PostgresStoreShape, trace: ((e: TurnActivity) => void) | undefined) {
  let tail: Promise<void> = Promise.resolve();
  const turns = new Map<string, { keys: Set<string>; resumed: boolean; skipUsage: boolean }>();
  const append = (events: readonly Omit<TurnEvent, "seq">[]) =>
    Effect.runPromise(store.events.append(events)).then(() => undefined);
  const publish = async (ev: TurnActivity): Promise<void> => {
    const turnKey = `${ev.sessionId}\u0000${ev.turnId}`;
    let turn = turns.get(turnKey);
    if (!turn) {
      const keys = new Set<string>();
      for (const e of await readAll(store, ev.sessionId))
        if (e.turnId === ev.turnId) {
          const k = eventKey(e.type, e.data);
          if (k !== undefined) keys.add(k);
        }
      // an earlier attempt of the turn published events: this one replays its steps
      turn = { keys, resumed: keys.has("turnStarted"), skipUsage: false };
      turns.set(turnKey, turn);
    }
    // the invocation retried on this worker: it replays the steps published before
    if (ev.type === "turnStarted" && turn.keys.has("turnStarted")) turn.resumed = true;
    const { seq: _seq, sessionId: _sid, at: _at, ...data } = ev;
    // the `usage` of a replayed model response comes right after it: published once, with it
    if (ev.type === "usage" && turn.skipUsage) {
      turn.skipUsage = false;
      return;
    }
    if (ev.type === "llmResponse" || ev.type === "llmRequest") turn.skipUsage = false;
    const key = eventKey(ev.type, data);
    // (the same messages twice in a live turn are two events; only a replay repeats them)
    if (key !== undefined && (turn.resumed || ev.type !== "messages")) {
      if (turn.keys.has(key)) {
        if (ev.type === "llmResponse") turn.skipUsage = true;
        return;
      }
      turn.keys.add(key);
    }
    const events: Omit<TurnEvent, "seq">[] = [
      { sessionId: ev.sessionId, turnId: ev.turnId, type: ev.type, at: ev.at, data },
    ];
    // a daemon's run (its turn id is the run id): the run ends with its turn, whichever daemon
    // submitted it and whether or not that daemon still runs
    if (
      ev.type === "turnFinished" &&
      ev.outcome.type !== "frameSwitch" &&
      ev.turnId.startsWith("run_") &&
      !turn.keys.has("runFinished")
    ) {
      turn.keys.add("runFinished");
      const o = ev.outcome;
      events.push({
        sessionId: ev.sessionId,
        turnId: ev.turnId,
        type: "runFinished",
        at: ev.at,
        data: {
          state: o.type === "stopped" && o.reason === "cancelled" ? "cancelled" : "completed",
          outcome: o,
          text: textOf(o),
          ...(o.type === "finished" && o.finish.kind !== "assistantMessage" ? { value: o.finish.value } : {}),
        },
      });
    }
    if (ev.type === "turnFinished" && ev.outcome.type !== "frameSwitch") turns.delete(turnKey);
    await append(events);
  };
  return (ev: TurnActivity): void => {
    trace?.(ev);
    tail = tail.then(() =>
      publish(ev).catch((e: unknown) => {
        process.stderr.write(
          `[lash] publishing a ${ev.type} event of turn ${ev.turnId} failed: ${(e as Error)?.message ?? String(e)}\n`,
        );
      }),
    );
  };
}

const textOf = (o: TurnOutcome): string =>
  o.type === "finished" && o.finish.kind === "assistantMessage"
    ? o.finish.text
    : o.type === "stopped"
      ? (o.text ?? "")
      : "";

/**
 * Starts this daemon's Restate worker (the daemon's runtime options and services: its store,
 * providers, tools, policy) and returns the engine the daemon submits runs to.
 */
export async function startRestateEngine(options: {
  readonly rt: ManagedRuntime.ManagedRuntime<LashRuntime | SessionStore, unknown>;
  readonly runtimeOptions: RuntimeOptions;
  readonly settings: RestateSettings;
  readonly traceEvent?: (e: TurnActivity) => void;
}): Promise<RestateEngine> {
  const { rt, settings } = options;
  const store = (await rt.runPromise(SessionStore)) as Partial<PostgresStoreShape>;
  if (!store.events)
    throw new CliError(
      "lash serve --engine restate needs a store every worker reaches: pass --store postgres://… (or config store)",
      ExitCode.usage,
    );
  const pg = store as PostgresStoreShape;
  const context = (await rt.runtime()).context;
  const services = Layer.succeedContext(
    Context.pick(
      SessionStore,
      LlmProviders,
      IdGenerator,
      ModelCatalog,
    )(context as Context.Context<SessionStore | LlmProviders | IdGenerator | ModelCatalog>),
  );
  const { journal: _journal, ...runtime } = options.runtimeOptions;
  const worker = await startRestateWorker({
    services,
    runtime,
    port: settings.workerPort,
    ...(settings.admin ? { adminUrl: settings.admin } : {}),
    register: false,
    onEvent: publisher(pg, options.traceEvent),
  });
  if (settings.admin) {
    try {
      await registerDeployment(settings.admin, settings.deployment ?? worker.url);
    } catch (e) {
      await worker.close().catch(() => undefined);
      throw new CliError(`lash serve: ${(e as Error).message}`, ExitCode.failed);
    }
  }
  const engine: ClusterEngine = {
    name: "restate",
    submit: async (sessionId, turn) => {
      const reply = await submitTurn(settings.ingress, sessionId, {
        turnId: turn.runId,
        text: turn.text,
        ...(turn.maxTurns !== undefined ? { maxTurns: turn.maxTurns } : {}),
      });
      // the worker publishes a turn's events behind its work: its last ones may land just after
      // the reply. Wait for the run's end in the log (bounded: a worker that committed and died
      // before publishing it never will; the daemon publishes it then)
      const ofRun = (e: TurnEvent) =>
        e.turnId === turn.runId &&
        (e.type === "runFinished" ||
          (e.type === "turnFinished" &&
            (e.data as { outcome?: TurnOutcome }).outcome?.type === "frameSwitch"));
      if (!reply.alreadyCommitted)
        await Effect.runPromise(
          pg.events
            .follow(sessionId)
            .pipe(
              Stream.filter(ofRun),
              Stream.take(1),
              Stream.runDrain,
              Effect.timeout(Duration.seconds(10)),
              Effect.ignore,
            ),
        );
      const log = (await readAll(pg, sessionId)).filter((e) => e.turnId === turn.runId);
      // the outcome as the worker published it (a reply of an earlier attempt's commit has no text)
      const finished = log.findLast((e) => e.type === "turnFinished");
      const outcome =
        (finished?.data as { outcome?: TurnOutcome } | undefined)?.outcome ??
        ({ type: "finished", finish: { kind: "assistantMessage", text: reply.text } } as TurnOutcome);
      return { outcome, text: textOf(outcome), finished: log.some((e) => e.type === "runFinished") };
    },
    append: (events) =>
      Effect.runPromise(
        pg.events.append(
          events.map((e) => ({
            sessionId: e.sessionId,
            turnId: e.runId,
            type: e.type,
            at: e.at,
            data: e.data,
          })),
        ),
      ).then(() => undefined),
    follow: (sessionId, after) => pg.events.follow(sessionId, { after }).pipe(Stream.map(toShared)),
    lastSeq: async (sessionId, runId) =>
      (await readAll(pg, sessionId)).reduce((m, e) => (e.turnId === runId ? Math.max(m, e.seq) : m), 0),
  };
  return { engine, workerUrl: worker.url, close: () => worker.close() };
}
