// A real CliContext for TUI tests: LashRuntime over MemoryStore (or SQLite),
// a ScriptedProvider, the built-in tools on a temp workspace.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ApprovalAnswer,
  type ApproverShape,
  type CompactionOptions,
  type GovernanceShape,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  MemoryStore,
  ModelCatalog,
  type Plugin,
  type SessionStore,
  type TurnActivity,
} from "@lash/core";
import { failApprover } from "@lash/policy";
import { type Script, ScriptedProvider } from "@lash/providers/testing";
import type { LlmProvider, ModelInfo } from "@lash/sansio";
import { toolsPlugin } from "@lash/tools";
import { Effect, Layer, ManagedRuntime } from "effect";
import type { render } from "ink-testing-library";
import { switchableApprover } from "../../src/approvals.ts";
import type { CliContext } from "../../src/context.ts";

export const MODEL = "test/model";

export const testModel: ModelInfo = {
  id: MODEL,
  contextWindow: 100_000,
  maxOutput: 8000,
  reasoning: true,
  images: false,
  caching: true,
  pricing: { input: 3, output: 15 },
};

export interface TestContext {
  readonly ctx: CliContext;
  readonly provider: ScriptedProvider | LlmProvider;
  readonly cwd: string;
  readonly exported: string[];
  /** The answers the attached approver (the TUI's prompt) gave, in order. */
  readonly answers: ApprovalAnswer[];
  cleanup(): Promise<void>;
}

export interface TestContextOptions {
  readonly plugins?: readonly Plugin[];
  readonly store?: Layer.Layer<SessionStore, unknown>;
  readonly provider?: LlmProvider;
  /** exportSession throws this message (like a CLI whose exporter is not built yet). */
  readonly exportError?: string;
  /** The runtime's governance (e.g. a policy that asks before every write); the TUI attaches its approver. */
  readonly governance?: GovernanceShape;
  /** The runtime's compaction options (e.g. `strategy: "handoff"`). */
  readonly compaction?: CompactionOptions;
}

export async function makeContext(script: Script, options: TestContextOptions = {}): Promise<TestContext> {
  const root = mkdtempSync(join(tmpdir(), "lash-tui-"));
  const cwd = join(root, "work");
  mkdirSync(cwd);
  const provider = options.provider ?? new ScriptedProvider(script);
  // like the CLI: the runtime's approver delegates to whichever approver the TUI attached
  const approvals = switchableApprover(failApprover("no approval prompt is attached"));
  const answers: ApprovalAnswer[] = [];
  const layer = LashRuntime.layer({
    plugins: [toolsPlugin({ root: cwd, shell: { killGraceMs: 200 } }), ...(options.plugins ?? [])],
    ...(options.governance ? { governance: options.governance, approver: approvals.approver } : {}),
    ...(options.compaction ? { compaction: options.compaction } : {}),
  }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        options.store ?? MemoryStore,
        LlmProviders.single(provider),
        IdGenerator.Live,
        ModelCatalog.fromEntries([testModel, { ...testModel, id: "test/other", contextWindow: 200_000 }]),
      ),
    ),
  );
  const runtime = ManagedRuntime.make(layer);
  const exported: string[] = [];
  const ctx: CliContext = {
    runtime,
    paths: {
      home: join(root, "home"),
      db: join(root, "home", "lash.db"),
      config: join(root, "home", "config.json"),
    },
    settings: { model: MODEL, mode: "standard", cwd, scripted: true },
    modelInfo: (m) =>
      m === MODEL
        ? testModel
        : m === "test/other"
          ? { ...testModel, id: m, contextWindow: 200_000 }
          : undefined,
    knownModels: () => [MODEL, "test/other"],
    setModel(model) {
      if (model !== MODEL && model !== "test/other") throw new Error(`unknown model "${model}"`);
      ctx.settings = { ...ctx.settings, model };
    },
    newSession: () =>
      runtime.runPromise(
        Effect.flatMap(LashRuntime, (rt) =>
          rt.createSession({ model: ctx.settings.model, cwd: ctx.settings.cwd }),
        ),
      ),
    gitBranch: () => "main",
    pluginStatus: () => ({ mcp: { servers: [] } }),
    async exportSession(id, format) {
      if (options.exportError) throw new Error(options.exportError);
      const path = join(root, `${id}.${format}`);
      exported.push(path);
      return path;
    },
    setApprover(approver: ApproverShape) {
      approvals.set({
        ask: (request, signal) =>
          Effect.tap(approver.ask(request, signal), (a) => Effect.sync(() => answers.push(a))),
      });
    },
    close: () => runtime.dispose(),
  };
  return {
    ctx,
    provider,
    cwd,
    exported,
    answers,
    async cleanup() {
      await runtime.dispose();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Runs one turn on a new session and returns its activity events (a real runtime sequence). */
export async function turnEvents(t: TestContext, text: string): Promise<TurnActivity[]> {
  const events: TurnActivity[] = [];
  const s = await t.ctx.newSession();
  await t.ctx.runtime.runPromise(
    Effect.flatMap(LashRuntime, (rt) => rt.turn(s.id, { text }, { onEvent: (e) => events.push(e) })),
  );
  return events;
}

type Rendered = ReturnType<typeof render>;

/** Resolves with the first frame (written after this call or the current one) that satisfies `pred`. */
export function waitForFrame(
  r: Rendered,
  pred: (frame: string) => boolean,
  timeoutMs = 10_000,
): Promise<string> {
  const now = r.lastFrame();
  if (now !== undefined && pred(now)) return Promise.resolve(now);
  const stdout = r.stdout as unknown as { write: (f: string) => void };
  const original = stdout.write;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stdout.write = original;
      reject(new Error(`no frame matched within ${timeoutMs} ms; last frame:\n${r.lastFrame()}`));
    }, timeoutMs);
    stdout.write = (f: string) => {
      original(f);
      if (pred(f)) {
        clearTimeout(timer);
        stdout.write = original;
        resolve(f);
      }
    };
  });
}

/** Strip ANSI escapes. */
export function plain(s: string | undefined): string {
  return (s ?? "").replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
}
