// The tool policy in the CLI: the runtime's `Governance` from config (`policy` in the user's
// and the project's config, each a layer) and `lash policy explain <tool> [args-json]`.
import { parseArgs } from "node:util";
import type { GovernanceShape, RiskSummary, ToolDefinition, ToolEffectKind } from "@lash/core";
import {
  decodePolicyLayer,
  explain,
  makeGovernance,
  type NamedLayer,
  type Policy,
  type PolicyCall,
  type PolicyLayer,
  resolvePolicy,
  riskAssessor,
  SessionPolicies,
} from "@lash/policy";
import type { Capability } from "@lash/subagents";
import { Either } from "effect";
import { type LashConfig, loadConfig, policyLayersOf } from "./config.ts";
import { CliError, ExitCode } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { resolvePaths } from "./paths.ts";

/** A risk evaluator as @lash/policy's `decide` takes it (G4's `assessRisk`, adapted to a call). */
export type RiskFn = (
  call: PolicyCall & { readonly effects: readonly ToolEffectKind[] },
) => RiskSummary | undefined;

/** The effective policy of a config: its `global` and `project` layers (profiles expanded). */
export function policyOf(config: LashConfig): Policy {
  return resolvePolicy(policyLayersOf(config));
}

export interface CliGovernance {
  readonly policy: Policy;
  /** `undefined` when no config sets a policy: the runtime then has no approval step at all. */
  readonly governance: GovernanceShape | undefined;
  /** Register a subagent: its policy is its parent's layers plus its capability's `policy`. */
  readonly onChild: (child: {
    readonly sessionId: string;
    readonly parentSessionId: string;
    readonly capability: Capability;
  }) => void;
}

/**
 * The runtime's governance for this config: `decide` under the config's layers, a subagent's
 * calls under its parent's layers plus its capability's (a child never gains a tool).
 */
export function cliGovernance(
  config: LashConfig,
  options: {
    readonly root: string;
    readonly assessRisk?: RiskFn;
    /** Layers after the config's (a project file's and an agent spec's, for `lash run`). */
    readonly layers?: readonly NamedLayer[];
  },
): CliGovernance {
  const policy = options.layers?.length
    ? resolvePolicy([...policyLayersOf(config), ...options.layers])
    : policyOf(config);
  const sessions = new SessionPolicies();
  const onChild: CliGovernance["onChild"] = ({ sessionId, parentSessionId, capability }) => {
    const own: NamedLayer[] = [];
    if (capability.policy !== undefined) {
      const decoded = decodePolicyLayer(capability.policy, `policy of capability ${capability.name}`);
      // an invalid capability policy fails closed: the child may run nothing
      const layer: PolicyLayer = Either.isRight(decoded) ? decoded.right : { deny: ["*"] };
      own.push({ name: `capability:${capability.name}`, layer });
    }
    sessions.register(sessionId, parentSessionId, own);
  };
  // no policy in any config: no approval step at all (a child's tools are still the
  // capability's pick from its parent's, as without governance)
  const governance =
    policy.layers.length > 0
      ? makeGovernance(policy, {
          root: options.root,
          sessionLayers: (id) => sessions.layersOf(id),
          ...(options.assessRisk ? { assessRisk: options.assessRisk } : {}),
        })
      : undefined;
  return { policy, governance, onChild };
}

const USAGE = `Usage
  lash policy explain <tool> [args-json] [--cwd <dir>]
      which layers apply (user config, project config, their profiles), the verdict for this
      call (allow / deny / ask), which layer and rule decided and why, the tool's effects and,
      when a risk evaluator is available, the risk. Example:
        lash policy explain write_file '{"path": ".env", "content": "x"}'
`;

/** The tool definitions `explain` knows without starting anything: the built-ins and spawn_agent. */
async function knownTools(root: string): Promise<Map<string, ToolDefinition>> {
  const { toolsPlugin } = await import("@lash/tools");
  const { subagentsPlugin } = await import("@lash/subagents");
  const tools = [...toolsPlugin({ root }).tools, ...(subagentsPlugin().tools ?? [])];
  return new Map(tools.map((t) => [t.name, t]));
}

/** `lash policy …` */
export async function runPolicyCommand(argv: readonly string[], io: MainIO): Promise<number> {
  const { values, positionals } = (() => {
    try {
      return parseArgs({
        args: [...argv],
        options: { cwd: { type: "string" }, help: { type: "boolean", short: "h" } },
        allowPositionals: true,
        strict: true,
      });
    } catch (e) {
      throw new CliError(`lash policy: ${(e as Error).message}\n${USAGE}`, ExitCode.usage);
    }
  })();
  const [action, name, argsJson, ...extra] = positionals;
  if (values.help || action === undefined || action === "help") {
    io.stdout.write(USAGE);
    return values.help || action === "help" ? ExitCode.ok : ExitCode.usage;
  }
  if (action !== "explain")
    throw new CliError(`lash policy: unknown action "${action}" (known: explain)\n${USAGE}`, ExitCode.usage);
  if (name === undefined)
    throw new CliError(
      `lash policy explain: which tool? e.g. lash policy explain shell '{"command": "ls"}'`,
      ExitCode.usage,
    );
  if (extra.length > 0)
    throw new CliError(
      `lash policy explain: unexpected ${JSON.stringify(extra[0])}; give the arguments as one JSON object (quote it)`,
      ExitCode.usage,
    );
  let args: unknown = {};
  if (argsJson !== undefined) {
    try {
      args = JSON.parse(argsJson);
    } catch (e) {
      throw new CliError(
        `lash policy explain: the arguments are not JSON (${(e as Error).message}); give one object, e.g. '{"path": "src/a.ts"}'`,
        ExitCode.usage,
      );
    }
    if (args === null || typeof args !== "object" || Array.isArray(args))
      throw new CliError("lash policy explain: the arguments must be a JSON object", ExitCode.usage);
  }
  const cwd = values.cwd ?? process.cwd();
  const paths = resolvePaths(io.env, cwd);
  const loaded = loadConfig(paths.config, paths.projectConfig);
  const policy = policyOf(loaded.config);
  const tools = await knownTools(cwd);
  const tool = tools.get(name);
  let effects: readonly ToolEffectKind[] | undefined;
  let note: string | undefined;
  if (!tool && name.startsWith("mcp__")) {
    // MCP tools are not started here: their effects are `write` unless the server is trusted
    // (then they come from the tool's annotations, known only once it runs)
    const server = Object.keys(loaded.config.mcpServers ?? {}).find((s) =>
      name.startsWith(`mcp__${s.replace(/[^a-zA-Z0-9_-]/g, "_")}__`),
    );
    effects = ["write"];
    note =
      server === undefined
        ? "an MCP tool of no configured server: effects write"
        : loaded.config.mcpServers?.[server]?.trusted === true
          ? `an MCP tool of the trusted server "${server}": its effects come from its annotations when the server runs; shown as write here`
          : `an MCP tool of the untrusted server "${server}": effects write (set "trusted": true on the server to use its annotations)`;
  }
  const files = loaded.files.length > 0 ? loaded.files.join(", ") : "none";
  const call: PolicyCall = { name, args, ...(tool ? { tool } : {}), ...(effects ? { effects } : {}) };
  io.stdout.write(`config files: ${files}\n`);
  if (note) io.stdout.write(`note: ${note}\n`);
  io.stdout.write(explain(policy, call, { root: cwd, assessRisk: riskAssessor(cwd) }));
  if (!tool && !name.startsWith("mcp__"))
    io.stdout.write(
      `(no built-in tool is called ${JSON.stringify(name)}; built-ins: ${[...tools.keys()].join(", ")})\n`,
    );
  return ExitCode.ok;
}
