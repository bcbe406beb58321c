/**
 * The RLM mode as one value: the `rlm` protocol driver, its projector, the Lashlang executor and
 * the `rlm` plugin that keeps one Lashlang state per agent frame in the session record.
 *
 *   const lash = createLash(withRlm({ store, provider, plugins: [toolsPlugin({ root })] }));
 *   await lash.createSession({ model, mode: "rlm" });
 */
import {
  type ContextProjector,
  type Message,
  type ProtocolDriver,
  type RlmEnvironment,
  type RlmFinalAnswerFormat,
  type RlmTermination,
  rlmDriver,
  rlmProjector,
} from "@lash/sansio";
import * as Effect from "effect/Effect";
import type { Plugin } from "../plugin.ts";
import type { CodeExecutor, ProjectorContext, RuntimeOptions } from "../runtime.ts";
import { checkBindings, type ExecutorOptions, rlmExecutor, rlmOperations } from "./executor.ts";
import { loadLashlang } from "./lashlang.ts";
import {
  bindingPreviews,
  FrameState,
  isRlmSnapshot,
  type RlmSessionOptions,
  RlmSessionState,
} from "./state.ts";
import { firingCell, parseFiring } from "./triggers.ts";

export interface RlmOptions extends ExecutorOptions {
  /** Default termination for sessions that set none (default natural). */
  readonly termination?: RlmTermination;
  /** Default final-answer guidance (default Markdown). */
  readonly finalAnswerFormat?: RlmFinalAnswerFormat;
  /** Default frame token budget (enables the CONTEXT BUDGET section). */
  readonly contextBudget?: number;
}

export interface RlmMode {
  readonly driver: ProtocolDriver;
  readonly codeExecutor: CodeExecutor;
  readonly plugin: Plugin;
  readonly projector: (ctx: ProjectorContext) => ContextProjector;
  /** The pieces of `RuntimeOptions` that enable `mode: "rlm"`. */
  readonly runtimeOptions: {
    readonly drivers: { readonly rlm: ProtocolDriver };
    readonly codeExecutor: CodeExecutor;
    readonly projectors: { readonly rlm: (ctx: ProjectorContext) => ContextProjector };
    readonly plugins: readonly Plugin[];
  };
  /** The live state of a session (tests, UIs). */
  session(sessionId: string): RlmSessionState | undefined;
}

/** Build the RLM mode. One value serves every session of a runtime. */
export function rlmMode(options: RlmOptions = {}): RlmMode {
  const bindings = options.bindings ?? {};
  checkBindings(bindings);
  const readOnlyNames = ["history", ...Object.keys(bindings).sort()];
  const READ_ONLY = new Set(readOnlyNames);
  const sessions = new Map<string, RlmSessionState>();
  const defaults: RlmSessionOptions = {
    ...(options.termination ? { termination: options.termination } : {}),
    ...(options.finalAnswerFormat ? { finalAnswerFormat: options.finalAnswerFormat } : {}),
    ...(options.contextBudget !== undefined ? { contextBudget: options.contextBudget } : {}),
  };

  const stateOf = (sessionId: string, frameId: string): RlmSessionState => {
    let s = sessions.get(sessionId);
    if (!s) {
      s = new RlmSessionState(frameId, {});
      sessions.set(sessionId, s);
    }
    return s;
  };

  const environment = (sessionId: string, firing?: string): RlmEnvironment => {
    const s = sessions.get(sessionId);
    const o = { ...defaults, ...s?.options };
    return {
      ...(firing !== undefined ? { firing } : {}),
      termination: o.termination ?? { kind: "natural" },
      finalAnswerFormat: o.finalAnswerFormat ?? { kind: "markdown" },
      bindings: s ? bindingPreviews(s.frame().state, READ_ONLY) : [],
      ...(o.contextBudget !== undefined ? { contextBudget: o.contextBudget } : {}),
    };
  };

  /** A trigger firing's cell when this turn's input is a firing (`lash serve` starts those runs). */
  const firingOf = (
    ctx: { readonly iteration: number; readonly messages: readonly Message[] },
    sessionId: string,
  ) => {
    if (ctx.iteration !== 0) return undefined;
    // the turn's input (at iteration 0 only the firing's own code message can follow it)
    const last = ctx.messages.findLast((m) => m.role === "user");
    const part = last?.role === "user" && last.parts.length === 1 ? last.parts[0] : undefined;
    const f = part?.type === "text" ? parseFiring(part.text) : undefined;
    if (!f) return undefined;
    return firingCell(sessions.get(sessionId)?.triggers.records ?? [], f.trigger, f.at);
  };

  const driver = rlmDriver({
    environment: (ctx) => environment(ctx.config.sessionId, firingOf(ctx, ctx.config.sessionId)),
  });

  const codeExecutor = rlmExecutor(
    {
      session: (ctx) => stateOf(ctx.session.id, ctx.frameId),
      termination: (ctx) => environment(ctx.session.id).termination,
    },
    options,
  );

  const projector = (ctx: ProjectorContext): ContextProjector => {
    const s = stateOf(ctx.session.id, ctx.session.frameId);
    return rlmProjector({
      operations: () => rlmOperations(ctx.tools(), { triggers: options.triggers === true }),
      readOnly: () => readOnlyNames,
      describeReadOnly: (name) => (name in bindings ? bindings[name] : undefined),
      onHistory: (items) => {
        s.history = items;
      },
    });
  };

  const plugin: Plugin = {
    name: "rlm",
    restore: (ctx, stored) =>
      Effect.gen(function* () {
        if (ctx.session.mode !== "rlm") return;
        // The first RLM turn of the process loads the evaluator (not `import "@lash/core"`).
        yield* loadLashlang;
        // runs of a turn that ended without committing (it failed) must not outlive it
        sessions.get(ctx.session.id)?.processes?.cancelAll();
        const s = new RlmSessionState(ctx.session.frameId, {});
        if (isRlmSnapshot(stored)) {
          s.options = stored.options ?? {};
          for (const [id, f] of Object.entries(stored.frames)) s.frames.set(id, FrameState.restore(f));
          if (stored.triggers) s.triggers.records = [...stored.triggers];
          s.restoreProcesses(stored);
        }
        sessions.set(ctx.session.id, s);
      }),
    // a turn commits when the process runs its cells started have ended: a run outlives its cell,
    // not its turn (runs parked in `wait_signal` that nothing can signal any more are cancelled)
    snapshot: (ctx) =>
      Effect.gen(function* () {
        if (ctx.session.mode !== "rlm") return undefined;
        const s = sessions.get(ctx.session.id);
        const processes = s?.processes;
        if (processes) yield* Effect.promise(() => processes.settle());
        return s?.snapshot();
      }),
    // the durable state lives in the session record; a deleted session's live state goes with it
    forget: (sessionId) => {
      sessions.get(sessionId)?.processes?.cancelAll();
      sessions.delete(sessionId);
    },
  };

  return {
    driver,
    codeExecutor,
    plugin,
    projector,
    runtimeOptions: {
      drivers: { rlm: driver },
      codeExecutor,
      projectors: { rlm: projector },
      plugins: [plugin],
    },
    session: (id) => sessions.get(id),
  };
}

/**
 * Add the RLM mode to runtime options (or `createLash` options) in one line:
 * `createLash(withRlm({ store, provider, plugins }))`. Existing drivers, projectors and plugins are kept.
 */
export function withRlm<O extends object>(
  base: O & Pick<RuntimeOptions, "drivers" | "projectors" | "plugins" | "codeExecutor">,
  options: RlmOptions | RlmMode = {},
): O {
  const mode = "runtimeOptions" in options ? options : rlmMode(options);
  return {
    ...base,
    drivers: { ...base.drivers, ...mode.runtimeOptions.drivers },
    codeExecutor: mode.codeExecutor,
    projectors: { ...base.projectors, ...mode.runtimeOptions.projectors },
    plugins: [...(base.plugins ?? []), mode.plugin],
  };
}
