// The formats of agents as files, as Effect Schemas (the one source of truth: decoding,
// error messages, and the JSON Schema for editors in `agent-spec.schema.json`).
//
// - `AgentSpec`: an agent, from `*.agent.md` / `*.agent` (YAML front matter + Markdown body,
//   the body being `instructions`) or `agents/*.yaml`.
// - `ProjectFile`: `lash.yaml` / `lash.json`.
import { PolicyLayer } from "@lash/policy";
import { JSONSchema, Schema } from "effect";

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true });

const expected = <A, I>(schema: Schema.Schema<A, I>, what: string, override = true): Schema.Schema<A, I> =>
  schema.annotations({
    message: (issue) => ({
      message: `expected ${what}, got ${show((issue as { actual?: unknown }).actual)}`,
      override,
    }),
  });

function show(v: unknown): string {
  if (v === undefined) return "nothing";
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

export const AGENT_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

export const AgentName = expected(
  Schema.String.pipe(Schema.pattern(AGENT_NAME_PATTERN)),
  "a name of lowercase letters, digits and dashes (^[a-z0-9][a-z0-9-]*$)",
).annotations({
  description: "The agent's name: lowercase letters, digits and dashes; the tool name when used as a tool.",
});

const NonEmpty = expected(Schema.String.pipe(Schema.minLength(1)), "a non-empty string");

export const AgentMode = expected(Schema.Literal("standard", "rlm"), '"standard" or "rlm"');

/** A tool entry: a name, or `{ name, access }`. */
export const ToolRef = Schema.Union(
  NonEmpty,
  Schema.Struct({
    name: NonEmpty,
    access: opt(expected(Schema.Literal("read", "write"), '"read" or "write"')),
  }),
).annotations({
  description:
    "A built-in tool (read_file, shell …), an MCP server or tool (mcp:<server> or mcp:<server>/<tool>), or another agent's name; optionally { name, access: read | write }.",
});
export type ToolRef = typeof ToolRef.Type;

/** A JSON Schema, or the record shorthand `spawn_agent` accepts ({ "summary": "str", "files": "list[str]" }). */
export const IoSchema = expected(
  Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  'a JSON Schema or a shorthand record ({ "summary": "str", "files": "list[str]" })',
).annotations({
  description:
    'A JSON Schema, or a shorthand record: { "field": "str" | "int" | "float" | "bool" | "record" | "any" | "list[T]" } (a trailing ? makes a field optional).',
});

const PosInt = expected(Schema.Int.pipe(Schema.positive()), "a positive integer");
const PosNumber = expected(Schema.Number.pipe(Schema.positive()), "a positive number");

/** `"0 9 * * 1"`, `{ cron: "0 9 * * 1", tz: "Europe/Berlin" }` or `{ every: "15m" }`. */
export const Schedule = Schema.Union(
  NonEmpty,
  Schema.Struct({ cron: NonEmpty, tz: opt(NonEmpty) }),
  Schema.Struct({
    every: expected(
      Schema.String.pipe(Schema.pattern(/^[1-9][0-9]*(s|m|h|d)$/)),
      'a duration such as "30s", "15m", "2h" or "1d"',
    ),
  }),
).annotations({
  description:
    'When the daemon runs the agent: a cron string ("0 9 * * 1"), { cron, tz } or { every: "15m" }.',
});
export type Schedule = typeof Schedule.Type;

/** A duration: `"30s"`, `"10m"`, `"2h"`, `"1d"` (also `"500ms"`). */
export const Duration = expected(
  Schema.String.pipe(Schema.pattern(/^[1-9][0-9]*(ms|s|m|h|d)$/)),
  'a duration such as "30s", "10m", "2h" or "1d"',
);

export const AgentSpec = Schema.Struct({
  name: AgentName,
  description: expected(Schema.String, "a string").annotations({
    description: "What the agent does; also the tool description when another agent calls it.",
  }),
  model: opt(NonEmpty.annotations({ description: "The model (a catalog id such as claude-sonnet-4-5)." })),
  compatibleModels: opt(
    expected(Schema.Array(NonEmpty), 'an array of model globs (["claude-*", "gpt-5*"])', false).annotations({
      description: "Globs of models the agent works with; the first catalog model matching is used.",
    }),
  ),
  mode: opt(AgentMode.annotations({ description: "standard (tool calls) or rlm (Lashlang programs)." })),
  instructions: opt(
    expected(Schema.String, "a string").annotations({
      description: "The agent's instructions (in a .agent.md file: the Markdown body).",
    }),
  ),
  tools: opt(expected(Schema.Array(ToolRef), "an array of tools", false)),
  policy: opt(PolicyLayer),
  skills: opt(
    expected(Schema.Array(NonEmpty), "an array of skill names", false).annotations({
      description: "The skills the agent may load (absent: all the project's skills).",
    }),
  ),
  input: opt(IoSchema),
  output: opt(IoSchema),
  maxTurns: opt(PosInt.annotations({ description: "The most model turns one run may take." })),
  budget: opt(
    Schema.Struct({
      tokens: opt(PosInt),
      usd: opt(PosNumber),
    }).annotations({ description: "Limits of one run: tokens and/or USD." }),
  ),
  schedule: opt(Schedule),
  instruction: opt(
    NonEmpty.annotations({
      description: "What each firing of the schedule sends the agent (required with schedule).",
    }),
  ),
  missed: opt(
    expected(Schema.Literal("run", "skip"), '"run" or "skip"').annotations({
      description:
        "Firings missed while the daemon was down: run each once at start (run, the default) or record them skipped.",
    }),
  ),
  concurrency: opt(
    PosInt.annotations({
      description: "The most runs of the schedule at once (default 1); later firings wait.",
    }),
  ),
  timeout: opt(
    Duration.annotations({
      description:
        'Wall-clock limit of one firing\'s run ("10m"): the run is cancelled, the firing recorded timeout.',
    }),
  ),
  retry: opt(
    Schema.Struct({
      attempts: PosInt.annotations({ description: "Runs of a failing firing in all (1: no retry)." }),
      backoff: opt(
        Duration.annotations({
          description: "Wait before the second run, doubled for each later one (default 10s).",
        }),
      ),
    }).annotations({ description: "Run a failed firing again: attempts in all, backoff between them." }),
  ),
  acl: opt(
    expected(
      Schema.Record({
        key: Schema.String,
        value: expected(Schema.Literal("execute", "read"), '"execute" or "read"'),
      }),
      'an object of principals to "execute" or "read"',
      false,
    ).annotations({ description: "Who may run (execute) or see (read) the agent." }),
  ),
}).annotations({
  identifier: "AgentSpec",
  title: "lash agent spec",
  description: "An agent as a file: *.agent.md (YAML front matter + Markdown instructions) or agents/*.yaml.",
});
export type AgentSpec = typeof AgentSpec.Type;

export const APPROVAL_MODES = ["approve-all", "reject-all", "fail", "interactive"] as const;

export const ProjectFile = Schema.Struct({
  agents: opt(
    expected(Schema.Array(NonEmpty), 'an array of directories (["agents", "."])', false).annotations({
      description: "Directories holding agent specs (default: agents and the project root).",
    }),
  ),
  defaults: opt(
    Schema.Struct({
      model: opt(NonEmpty),
      mode: opt(AgentMode),
      approvalMode: opt(
        expected(Schema.Literal(...APPROVAL_MODES), '"approve-all", "reject-all", "fail" or "interactive"'),
      ),
    }).annotations({ description: "Defaults for agents that do not say." }),
  ),
  mcpServers: opt(
    expected(
      Schema.Record({ key: Schema.String, value: Schema.Unknown }),
      'an object of servers ({ "name": { "command": … } })',
      false,
    ).annotations({ description: "MCP servers, in the format of lash's config.json mcpServers." }),
  ),
  skills: opt(
    expected(Schema.Array(NonEmpty), "an array of directories", false).annotations({
      description: "Extra skill roots (besides .lash/skills, .agents/skills, .claude/skills).",
    }),
  ),
  entry: opt(
    NonEmpty.annotations({
      description: "What `lash run` runs by default: an agent's name, or a TypeScript function path.ts#name.",
    }),
  ),
  policy: opt(PolicyLayer),
}).annotations({
  identifier: "LashProject",
  title: "lash project file",
  description: "lash.yaml / lash.json: agent directories, defaults, MCP servers, skill roots, entry, policy.",
});
export type ProjectFile = typeof ProjectFile.Type;

/** The JSON Schema of an agent spec (committed as packages/agents/agent-spec.schema.json). */
export function agentSpecJsonSchema(): object {
  return JSONSchema.make(AgentSpec);
}

/** The JSON Schema of the project file. */
export function projectFileJsonSchema(): object {
  return JSONSchema.make(ProjectFile);
}
