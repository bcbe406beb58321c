// The tool policy in the CLI: the runtime's `Governance` from config (`policy` in the user's
// and the project's config, each a layer) and `lash policy explain <tool> [args-json]`.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Manifest, ResolvedAgent } from "@lash/agents";
import type { GovernanceShape, Plugin, RiskSummary, ToolDefinition, ToolEffectKind } from "@lash/core";
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
  SESSION_LAYERS_KEY,
  SessionPolicies,
} from "@lash/policy";
import type { Capability } from "@lash/subagents";
import { Effect, Either } from "effect";
import { type LashConfig, loadConfig, policyLayersOf } from "./config.ts";
import { CliError, ExitCode } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { resolvePaths } from "./paths.ts";
import { sandboxMode } from "./sandbox.ts";

/** A risk evaluator as @lash/policy's `decide` takes it (G4's `assessRisk`, adapted to a call). */
export type RiskFn = (
  call: PolicyCall & { readonly effects: readonly ToolEffectKind[] },
) => RiskSummary | undefined;

/** The layers that may loosen the sandbox: the user's own config (`config`: one built in code). */
const SANDBOX_OWNERS: ReadonlySet<string> = new Set(["global", "config"]);

const layerPlace = (name: string): string =>
  name === "project"
    ? "the project's .lash/config.json"
    : name === "project file"
      ? "the project file (lash.yaml)"
      : name.startsWith("agent:")
        ? `the spec of agent ${name.slice("agent:".length)}`
        : `layer ${name}`;

/**
 * Only the user's config may turn the sandbox off (`sandbox.mode: "off"`) or the network on
 * (`sandbox.network: true`): a project's config, project file or agent spec is a file in the
 * workspace, which any sandboxed command could have written. Such a setting is dropped from
 * its layer, with a warning naming the key and where to set it; a layer may still tighten
 * (`mode: "bwrap"`, `network: false`).
 */
export function sandboxFromUserOnly(layers: readonly NamedLayer[]): {
  readonly layers: readonly NamedLayer[];
  readonly warnings: readonly string[];
} {
  const warnings: string[] = [];
  const out = layers.map((l): NamedLayer => {
    const sandbox = l.layer.sandbox;
    if (SANDBOX_OWNERS.has(l.name) || sandbox === undefined) return l;
    const dropped: string[] = [];
    const kept: { mode?: "bwrap" | "off"; network?: boolean } = { ...sandbox };
    if (sandbox.mode === "off") {
      delete kept.mode;
      dropped.push('policy.sandbox.mode "off"');
    }
    if (sandbox.network === true) {
      delete kept.network;
      dropped.push("policy.sandbox.network true");
    }
    if (dropped.length === 0) return l;
    warnings.push(
      `${dropped.join(" and ")} in ${layerPlace(l.name)} is ignored: only your user config ($LASH_HOME/config.json) may loosen the sandbox (a file in the workspace could have been written by a sandboxed command); set it there if you mean it`,
    );
    const { sandbox: _, ...rest } = l.layer;
    return { name: l.name, layer: Object.keys(kept).length > 0 ? { ...rest, sandbox: kept } : rest };
  });
  return { layers: out, warnings };
}

/** The effective policy of a config: its `global` and `project` layers (profiles expanded). */
export function policyOf(config: LashConfig): Policy {
  return resolvePolicy(sandboxFromUserOnly(policyLayersOf(config)).layers);
}

/** Where a session's policy layers (beyond the config's) are kept in its durable state. */
export { SESSION_LAYERS_KEY };

export interface CliGovernance {
  readonly policy: Policy;
  /** What the user must hear: a layer's sandbox setting ignored (see `sandboxFromUserOnly`). */
  readonly warnings: readonly string[];
  /**
   * Always present: with no layer anywhere it allows every call and asks nothing (as no
   * governance would), but a session's own layers (a child's, a resumed session's) still apply.
   */
  readonly governance: GovernanceShape;
  /** Register a subagent: its policy is its parent's layers plus its capability's `policy`. */
  readonly onChild: (child: {
    readonly sessionId: string;
    readonly parentSessionId: string;
    readonly capability: Capability;
  }) => void;
  /**
   * The durable state a new child starts with: its layers (its parent's plus its capability's).
   * Throws (refusing the spawn) when the capability's layer asks for what a child cannot have
   * (see {@link unenforcedKeys}).
   */
  readonly childState: (child: { readonly parentSessionId: string; readonly capability: Capability }) => {
    readonly [key: string]: unknown;
  };
  /**
   * Every layer a session's calls are decided under: the config's (and this process's extra
   * layers), then the session's own (restored from its state at each turn, or a child's).
   */
  readonly layersOf: (sessionId: string) => readonly NamedLayer[];
  /** The durable state a new root session of this process starts with: its extra layers. */
  readonly rootState: (layers?: readonly NamedLayer[]) => { readonly [key: string]: unknown };
  /**
   * Restores a session's stored layers when it is opened (resume, continue, the TUI, a child
   * resumed on its own), and refuses a turn whose layers ask for what this process does not apply.
   */
  readonly plugin: Plugin;
}

/**
 * What `layers` ask for that is applied per process, not per session, and that `base` (this
 * process's policy) does not give: `writes: "stub"`, a sandbox, a network ban, output limits,
 * redaction keys. A session's own layers can deny tools and ask for approval (`decide` sees
 * them), but those keys come only from the config, the project file and the agent `lash run`
 * runs.
 */
export function unenforcedKeys(
  base: Policy,
  layers: readonly NamedLayer[],
  options: { readonly dryRun?: boolean } = {},
): string[] {
  const out: string[] = [];
  for (const { name, layer } of layers) {
    if (layer.writes === "stub" && base.writes !== "stub" && options.dryRun !== true)
      out.push(`writes: "stub" (${name})`);
    if (layer.sandbox?.mode === "bwrap" && sandboxMode(base) === "off")
      out.push(`sandbox.mode: "bwrap" (${name})`);
    if (layer.sandbox?.network === false && base.sandbox.network === true)
      out.push(`sandbox.network: false (${name})`);
    for (const key of ["maxOutputBytes", "maxOutputLines"] as const) {
      const want = layer.limits?.[key];
      const have = base.limits[key];
      if (want !== undefined && (have === undefined || have > want))
        out.push(`limits.${key}: ${want} (${name})`);
    }
    for (const k of layer.redaction?.keys ?? [])
      if (!base.redactionKeys.includes(k)) out.push(`redaction.keys: ${JSON.stringify(k)} (${name})`);
  }
  return out;
}

const unenforcedText = (what: string, keys: readonly string[]) =>
  `${what} asks for ${keys.join(", ")}, which this lash process does not apply: a session's own policy layers (a subagent's, a resumed session's, a \`lash serve\` principal's) can deny tools and require approval, but writes, sandbox, limits and redaction come only from the config, the project file (lash.yaml) and the agent \`lash run\` or \`lash serve\` runs; set them there (for a principal: keep its \`serve.principals.<name>.policy\` to tools, deny and approval)`;

/** Decode stored layers; one that no longer decodes fails closed (nothing may run). */
function decodeStoredLayers(value: unknown): NamedLayer[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((v, i) => {
    const name =
      typeof v === "object" && v !== null && typeof (v as { name?: unknown }).name === "string"
        ? (v as { name: string }).name
        : `stored layer ${i + 1}`;
    const decoded = decodePolicyLayer((v as { layer?: unknown } | null)?.layer, `policy of ${name}`);
    return { name, layer: Either.isRight(decoded) ? decoded.right : { deny: ["*"] } };
  });
}

/**
 * The runtime's governance for this config: `decide` under the config's layers, a subagent's
 * calls under its parent's layers plus its capability's (a child never gains a tool), a
 * reopened session's under the layers stored with it.
 */
export function cliGovernance(
  config: LashConfig,
  options: {
    readonly root: string;
    readonly assessRisk?: RiskFn;
    /** Layers after the config's (a project file's and an agent spec's, for `lash run`). */
    readonly layers?: readonly NamedLayer[];
    /** Told (once per capability) when a capability's `policy` does not decode and so denies every tool. */
    readonly report?: (message: string) => void;
    /** `--dry-run`: every session's writes are stubbed. */
    readonly dryRun?: boolean;
  },
): CliGovernance {
  const extra = options.layers ?? [];
  const checked = sandboxFromUserOnly([...policyLayersOf(config), ...extra]);
  const policy = resolvePolicy(checked.layers);
  const sessions = new SessionPolicies();
  const reported = new Set<string>();
  const ownLayers = (capability: Capability): NamedLayer[] => {
    if (capability.policy === undefined) return [];
    const decoded = decodePolicyLayer(capability.policy, `policy of capability ${capability.name}`);
    // an invalid capability policy fails closed: the child may run nothing (and the user is told why)
    const layer: PolicyLayer = Either.isRight(decoded) ? decoded.right : { deny: ["*"] };
    if (Either.isLeft(decoded) && !reported.has(capability.name)) {
      reported.add(capability.name);
      options.report?.(
        `${decoded.left.message}\n  — until it is fixed, capability ${capability.name} may run no tool ("*" is denied); fix its policy`,
      );
    }
    return [{ name: `capability:${capability.name}`, layer }];
  };
  const onChild: CliGovernance["onChild"] = ({ sessionId, parentSessionId, capability }) => {
    sessions.register(sessionId, parentSessionId, ownLayers(capability));
  };
  const childState: CliGovernance["childState"] = ({ parentSessionId, capability }) => {
    const own = ownLayers(capability);
    const missing = unenforcedKeys(policy, own, options);
    if (missing.length > 0)
      throw new Error(unenforcedText(`the policy of subagent \`${capability.name}\``, missing));
    const layers = [...sessions.layersOf(parentSessionId), ...own];
    return layers.length > 0 ? { [SESSION_LAYERS_KEY]: layers } : {};
  };
  const rootState: CliGovernance["rootState"] = (layers = extra) =>
    layers.length > 0 ? { [SESSION_LAYERS_KEY]: layers } : {};
  const plugin: Plugin = {
    name: SESSION_LAYERS_KEY,
    hooks: {
      beforeTurn: (ctx) =>
        Effect.sync(() => {
          const missing = unenforcedKeys(policy, sessions.layersOf(ctx.session.id), options);
          return missing.length > 0
            ? { abort: unenforcedText(`the policy of session ${ctx.session.id}`, missing) }
            : undefined;
        }),
    },
    snapshot: (ctx) =>
      Effect.sync(() => {
        const layers = sessions.layersOf(ctx.session.id);
        return layers.length > 0 ? layers : undefined;
      }),
    restore: (ctx, state) =>
      Effect.sync(() => {
        const layers = decodeStoredLayers(state);
        if (layers !== undefined) sessions.set(ctx.session.id, layers);
      }),
  };
  // with no layer anywhere, decide allows everything and asks nothing; a session's own
  // layers (a child's, a reopened session's) are still decided
  const governance = makeGovernance(policy, {
    root: options.root,
    sessionLayers: (id) => sessions.layersOf(id),
    ...(options.assessRisk ? { assessRisk: options.assessRisk } : {}),
  });
  const layersOf = (sessionId: string): readonly NamedLayer[] => [
    ...checked.layers,
    ...sessions.layersOf(sessionId),
  ];
  return { policy, warnings: checked.warnings, governance, onChild, childState, rootState, layersOf, plugin };
}

const USAGE = `Usage
  lash policy explain <tool> [args-json] [--agent <name>] [--cwd <dir>]
      which layers apply (user config, project config, their profiles, the project file's
      policy from the build — lash.yaml / lash.json — and with --agent that agent's spec), the
      verdict for this call (allow / deny / ask), which layer and rule decided and why, the
      tool's effects and, when a risk evaluator is available, the risk. Example:
        lash policy explain write_file '{"path": ".env", "content": "x"}' --agent reviewer
`;

/** The decode errors already printed, per manifest (an entry function opens many sessions). */
const reportedLayerErrors = new WeakMap<Manifest, Set<string>>();

/**
 * The policy layers a run adds after the config's: the project file's `policy`, then the
 * agent's own (`agent:<name>`). The build decoded both; a layer that no longer decodes
 * (a manifest written by another lash, or edited by hand) fails closed — nothing may run —
 * and the decode error (the file, the bad key, the likeliest one) goes to `report` once.
 */
export function runLayers(
  manifest: Manifest,
  agent: ResolvedAgent | undefined,
  report: (message: string) => void = (m) => process.stderr.write(m),
): NamedLayer[] {
  const reported = reportedLayerErrors.get(manifest) ?? new Set<string>();
  reportedLayerErrors.set(manifest, reported);
  const layer = (value: unknown, name: string, file: string): NamedLayer => {
    const decoded = decodePolicyLayer(value, `policy of ${name}`);
    if (Either.isRight(decoded)) return { name, layer: decoded.right };
    const message = `[lash] error: ${decoded.left.message}\n  (from ${file}; the build in .lash/build no longer decodes) — until it is fixed this layer denies every tool ("*"). Fix it in ${file} and run \`lash build\`.\n`;
    if (!reported.has(message)) {
      reported.add(message);
      report(message);
    }
    return { name, layer: { deny: ["*"] } satisfies PolicyLayer };
  };
  const projectFile =
    manifest.inputs.map((i) => i.path).find((p) => /^lash\.(ya?ml|json)$/.test(p)) ??
    "the project file (lash.yaml)";
  const out: NamedLayer[] = [];
  if (manifest.project.policy !== undefined)
    out.push(layer(manifest.project.policy, "project file", projectFile));
  if (agent?.policy !== undefined) out.push(layer(agent.policy, `agent:${agent.name}`, agent.source));
  return out;
}

const PROJECT_FILES = ["lash.yaml", "lash.yml", "lash.json"];

/**
 * The layers a run adds after the config's, as `lash run [agent]` and `lash serve`'s agent
 * sessions take them from the workspace's build: the project file's `policy`, then the
 * agent's (`--agent`). Also what to tell the user about them.
 */
async function buildLayers(
  cwd: string,
  home: string,
  agentName: string | undefined,
  io: MainIO,
): Promise<{ readonly layers: readonly NamedLayer[]; readonly notes: readonly string[] }> {
  const { BuildError, findAgent, readManifest, RunRequestError } = await import("@lash/agents");
  let manifest: Manifest | undefined;
  try {
    manifest = readManifest(cwd, { home });
  } catch (e) {
    if (e instanceof BuildError)
      throw new CliError(
        `lash policy explain: ${e.message} (the layers of a run come from the build)`,
        ExitCode.failed,
      );
    throw e;
  }
  const source = PROJECT_FILES.find((f) => existsSync(join(cwd, f)));
  if (!manifest) {
    if (agentName !== undefined)
      throw new CliError(
        `lash policy explain: --agent ${agentName}: ${cwd} has no build; define the agent (agents/*.agent.md or *.yaml) and run \`lash build\``,
        ExitCode.usage,
      );
    return {
      layers: [],
      notes: source
        ? [`${source} is not built: its policy applies to \`lash run\` once you run \`lash build\``]
        : [],
    };
  }
  let agent: ResolvedAgent | undefined;
  if (agentName !== undefined) {
    try {
      agent = findAgent(manifest, agentName);
    } catch (e) {
      if (e instanceof RunRequestError)
        throw new CliError(`lash policy explain: ${e.message}`, ExitCode.usage);
      throw e;
    }
  }
  const layers = runLayers(manifest, agent, (m) => io.stderr.write(m));
  const notes = [`build: ${manifest.hash.slice(0, 12)}${source ? ` (project file ${source})` : ""}`];
  if (agent === undefined && layers.length > 0)
    notes.push(
      "the project file's layer applies to `lash run` and to agent sessions of `lash serve`; plain `lash` sessions have the config's layers only",
    );
  return { layers, notes };
}

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
        options: {
          cwd: { type: "string" },
          agent: { type: "string" },
          help: { type: "boolean", short: "h" },
        },
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
  // every layer the runtime would decide with: the config's, then the build's (project file, agent)
  const built = await buildLayers(cwd, paths.home, values.agent, io);
  const checked = sandboxFromUserOnly([...policyLayersOf(loaded.config), ...built.layers]);
  const policy = resolvePolicy(checked.layers);
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
  for (const n of built.notes) io.stdout.write(`${n}\n`);
  if (values.agent !== undefined) io.stdout.write(`agent: ${values.agent}\n`);
  for (const w of checked.warnings) io.stdout.write(`warning: ${w}\n`);
  if (note) io.stdout.write(`note: ${note}\n`);
  io.stdout.write(explain(policy, call, { root: cwd, assessRisk: riskAssessor(cwd) }));
  if (!tool && !name.startsWith("mcp__"))
    io.stdout.write(
      `(no built-in tool is called ${JSON.stringify(name)}; built-ins: ${[...tools.keys()].join(", ")})\n`,
    );
  return ExitCode.ok;
}
