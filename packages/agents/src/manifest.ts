// The build's output, as a run or a deployment pins it: every agent resolved (skill
// text applied, references checked), the hash of every input, the lash version. The
// manifest's own hash is sha256 of its canonical JSON without the `hash` field, so the
// same inputs give the same manifest, byte for byte. `lash build` writes it to
// `.lash/build/<hash>.json`; `lash run` reads the newest (or `--manifest <hash>`).
//
// This file is the contract between the build (spec → manifest) and the runner
// (manifest → sessions); change it additively.
import type { JsonSchema } from "@lash/core";

export const MANIFEST_VERSION = 1;

/** A tool an agent may use, as its spec names it, with the kind the build resolved. */
export interface ResolvedTool {
  /** Built-in tool name (`read_file`, `shell` …), `mcp:<server>` or `mcp:<server>/<tool>`, or an agent's name. */
  readonly name: string;
  readonly kind: "builtin" | "mcp" | "agent";
  readonly access?: "read" | "write";
}

export interface ResolvedAgent {
  readonly name: string;
  /** Also the tool description when another agent calls this one. */
  readonly description: string;
  /** The model to use: the spec's `model`, or the first catalog model matching `compatibleModels`, or the project default. */
  readonly model?: string;
  readonly compatibleModels?: readonly string[];
  readonly mode: "standard" | "rlm";
  /** The instructions with the agent's skills' catalog applied (the system prompt's agent part). */
  readonly instructions: string;
  readonly tools: readonly ResolvedTool[];
  /** A policy layer in @lash/policy's format (absent: the project's). */
  readonly policy?: unknown;
  /** Skill names the agent may load (absent: all the project's skills). */
  readonly skills?: readonly string[];
  /** JSON Schema of the input (the shorthand is expanded by the build). */
  readonly input?: JsonSchema;
  /** JSON Schema of the output (the run ends with a value matching it). */
  readonly output?: JsonSchema;
  readonly maxTurns?: number;
  readonly budget?: { readonly tokens?: number; readonly usd?: number };
  readonly schedule?: unknown;
  /** With `schedule`: the loop's settings (what each firing sends, missed firings, limits). */
  readonly loop?: {
    readonly instruction: string;
    readonly missed: "run" | "skip";
    readonly concurrency: number;
    /** Duration string (`"10m"`). */
    readonly timeout?: string;
    readonly retry?: { readonly attempts: number; readonly backoff?: string };
  };
  readonly acl?: { readonly [principal: string]: "execute" | "read" };
  /** Where it was defined (project-relative path). */
  readonly source: string;
}

export interface ManifestSkill {
  readonly name: string;
  readonly description: string;
  /** Project-relative (or `$LASH_HOME`-relative, prefixed `~lash/`) directory of the skill. */
  readonly dir: string;
  /** sha256 over the skill's files (the `skills.lock` entry). */
  readonly sha256: string;
}

export interface Manifest {
  readonly version: typeof MANIFEST_VERSION;
  /** sha256 (hex) of the canonical JSON of this manifest without `hash`. */
  readonly hash: string;
  readonly lashVersion: string;
  /** Every file the build read, project-relative, with its sha256. Sorted by path. */
  readonly inputs: readonly { readonly path: string; readonly sha256: string }[];
  readonly project: {
    readonly defaults?: {
      readonly model?: string;
      readonly mode?: "standard" | "rlm";
      readonly approvalMode?: string;
    };
    /** The entry: an agent's name, or a TypeScript function `path.ts#name` (project-relative). */
    readonly entry?: { readonly agent: string } | { readonly function: string };
    /** MCP servers as in lash's config (`mcpServers`). */
    readonly mcpServers?: { readonly [name: string]: unknown };
    readonly policy?: unknown;
  };
  /** Sorted by name. */
  readonly agents: readonly ResolvedAgent[];
  /** Sorted by name. */
  readonly skills: readonly ManifestSkill[];
}
