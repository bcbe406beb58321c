// The contract between the CLI shell (args, config, sessions, --print) and the
// interactive TUI. `main.ts` builds a CliContext; `tui/index.ts` renders it.
import type { ApproverShape, CompactionOptions, LashRuntime, SessionRecord } from "@lash/core";
import type { ModelInfo } from "@lash/sansio";
import type { ManagedRuntime } from "effect";

export interface CliPaths {
  /** `$LASH_HOME` (default `~/.lash`). */
  readonly home: string;
  /** `$LASH_HOME/lash.db` */
  readonly db: string;
  /** `$LASH_HOME/config.json` */
  readonly config: string;
  /** `<cwd>/.lash/config.json` when present. */
  readonly projectConfig?: string;
}

export interface CliSettings {
  /** `provider/model` */
  readonly model: string;
  readonly mode: "standard" | "rlm";
  readonly cwd: string;
  readonly maxTurns?: number;
  /** Context compaction: threshold, summariser, and the `--context-window` / config `contextWindow` override. */
  readonly compaction?: CompactionOptions;
  readonly systemPrompt?: string;
  /** AGENTS.md / CLAUDE.md in the system prompt (false with `--no-project-instructions`); subagents get AGENTS.md only. */
  readonly projectInstructions?: boolean;
  /** Extra skill roots (config `skills.roots`, workspace-relative). */
  readonly skillRoots?: readonly string[];
  /** Allowed tool names (`--tools`), all when absent. */
  readonly tools?: readonly string[];
  /** True when the model is scripted (`lash demo`, mock server). */
  readonly scripted: boolean;
}

export interface CliContext {
  /** Runs Effects against the live runtime (`ctx.runtime.runPromise(Effect.flatMap(LashRuntime, rt => …))`). */
  readonly runtime: ManagedRuntime.ManagedRuntime<LashRuntime, unknown>;
  readonly paths: CliPaths;
  /** Current settings; `/model` changes them through `setModel`. */
  settings: CliSettings;
  readonly modelInfo: (model: string) => ModelInfo | undefined;
  /** Models the catalog knows whose provider has a key (or base URL), for `/model`. */
  readonly knownModels: () => readonly string[];
  /** The environment of a `!command` (credentials removed, like the shell tool's). */
  readonly shellEnv?: () => Record<string, string>;
  /** Known secret values replaced (text that goes to the model, e.g. `!command` output). */
  readonly redact?: (text: string) => string;
  /** Switch the model for new turns (validated: throws an Error naming the problem). */
  setModel(model: string): void;
  /** A new session with the current settings. */
  newSession(): Promise<SessionRecord>;
  /** Git branch of `settings.cwd`, if any. */
  readonly gitBranch: () => string | undefined;
  /** Status of MCP servers and other plugins (for `/info`). */
  readonly pluginStatus: () => { readonly [plugin: string]: unknown };
  /** Export a session: returns the written path. */
  exportSession(sessionId: string, format: "html" | "json" | "md", outPath?: string): Promise<string>;
  /**
   * Who answers the approvals the policy asks for from now on: the TUI attaches its prompt
   * here. Ignored unless `--approval-mode` is `interactive` (the TUI's default).
   */
  readonly setApprover?: (approver: ApproverShape) => void;
  close(): Promise<void>;
}

export interface TuiOptions {
  readonly ctx: CliContext;
  /** Resume this session; a new one is created on the first prompt otherwise. */
  readonly sessionId?: string;
  /** Submitted as the first prompt. */
  readonly initialPrompt?: string;
  /** Open the session picker first (`lash --resume` without an id). */
  readonly pick?: boolean;
  /** Finish the session's cut-off turn first (like `/finish`; its approvals are asked in the TUI). */
  readonly finishPending?: boolean;
  readonly stdin?: NodeJS.ReadStream;
  readonly stdout?: NodeJS.WriteStream;
}

/** Implemented by `tui/index.ts`: resolves with the process exit code. */
export type RunTui = (options: TuiOptions) => Promise<number>;
