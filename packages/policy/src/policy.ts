// The layered tool policy: resolve layers into one `Policy`, decide one call, explain a
// decision. Plain synchronous code (the host calls `decide` for every tool call).
import type {
  GovernanceShape,
  GovernedCall,
  RiskSummary,
  ToolDefinition,
  ToolEffectKind,
  Verdict,
} from "@lash/core";
import { toolEffects } from "@lash/core";
import picomatch from "picomatch";
import { matchesPattern, PROFILE_LAYERS, type ToolFacts } from "./groups.ts";
import type { ApprovalRule, PolicyLayer, RiskLevel } from "./schema.ts";

/** A layer and the name it is reported under (`global`, `project`, `agent:reviewer`, `capability:explore`). */
export interface NamedLayer {
  readonly name: string;
  readonly layer: PolicyLayer;
}

/** The effective policy: its layers (profiles expanded) and what they add up to. */
export interface Policy {
  /** Every layer in order, each profile right after the layer that named it (`profile:coding (global)`). */
  readonly layers: readonly NamedLayer[];
  /** Union of every layer's `workspace.denyPatterns`, each with the layer that set it. */
  readonly denyPatterns: readonly { readonly pattern: string; readonly layer: string }[];
  /** The smallest of each limit any layer sets. */
  readonly limits: { readonly maxOutputBytes?: number; readonly maxOutputLines?: number };
  /** Union of every layer's `redaction.keys`. */
  readonly redactionKeys: readonly string[];
  /** `stub` when any layer says so. */
  readonly writes: "live" | "stub";
  /** `bwrap` when any layer asks for it, `off` when a layer opts out and none asks; network only when no layer forbids it. */
  readonly sandbox: { readonly mode?: "bwrap" | "off"; readonly network?: boolean };
  /** `approval: "risk"` asks at or above this level: the strictest (lowest) any layer sets, default `medium`. */
  readonly riskThreshold: RiskLevel;
  /** The two-step rule: the strictest (lowest) `secondApprover` any layer sets; absent = no rule. */
  readonly secondApprover?: RiskLevel;
}

export const DEFAULT_RISK_THRESHOLD: RiskLevel = "medium";

/** Tools a child session needs to end its task: never governed (they change nothing). */
export const CONTROL_TOOLS: readonly string[] = ["submit_result", "submit_error"];

const LEVELS: readonly RiskLevel[] = ["low", "medium", "high"];
const STRICTNESS: { readonly [A in ApprovalRule]: number } = { never: 0, risk: 1, always: 2 };

/**
 * Combine layers (global config → project config → profile → agent spec → subagent capability).
 * The effective allow set is the intersection of every layer's allow (absent or `[]` = all),
 * the deny set the union, approval the strictest; a `profile` adds its layer after the one naming it.
 */
export function resolvePolicy(layers: readonly NamedLayer[]): Policy {
  const expanded: NamedLayer[] = [];
  for (const l of layers) {
    expanded.push(l);
    if (l.layer.profile)
      expanded.push({
        name: `profile:${l.layer.profile} (${l.name})`,
        layer: PROFILE_LAYERS[l.layer.profile],
      });
  }
  const denyPatterns: { pattern: string; layer: string }[] = [];
  const keys = new Set<string>();
  let maxOutputBytes: number | undefined;
  let maxOutputLines: number | undefined;
  let writes: "live" | "stub" = "live";
  let mode: "bwrap" | "off" | undefined;
  let network: boolean | undefined;
  let riskThreshold: RiskLevel | undefined;
  let secondApprover: RiskLevel | undefined;
  const min = (a: number | undefined, b: number | undefined) =>
    a === undefined ? b : b === undefined ? a : Math.min(a, b);
  for (const { name, layer } of expanded) {
    for (const pattern of layer.workspace?.denyPatterns ?? [])
      if (!denyPatterns.some((d) => d.pattern === pattern)) denyPatterns.push({ pattern, layer: name });
    for (const k of layer.redaction?.keys ?? []) keys.add(k);
    maxOutputBytes = min(maxOutputBytes, layer.limits?.maxOutputBytes);
    maxOutputLines = min(maxOutputLines, layer.limits?.maxOutputLines);
    if (layer.writes === "stub") writes = "stub";
    if (layer.sandbox?.mode === "bwrap") mode = "bwrap";
    else if (layer.sandbox?.mode === "off" && mode === undefined) mode = "off";
    if (layer.sandbox?.network === false) network = false;
    else if (layer.sandbox?.network === true && network === undefined) network = true;
    secondApprover = stricter(secondApprover, layer.secondApprover);
    const t = layer.risk?.threshold;
    if (t && (riskThreshold === undefined || LEVELS.indexOf(t) < LEVELS.indexOf(riskThreshold)))
      riskThreshold = t;
  }
  return {
    layers: expanded,
    denyPatterns,
    limits: {
      ...(maxOutputBytes !== undefined ? { maxOutputBytes } : {}),
      ...(maxOutputLines !== undefined ? { maxOutputLines } : {}),
    },
    redactionKeys: [...keys],
    writes,
    sandbox: { ...(mode ? { mode } : {}), ...(network !== undefined ? { network } : {}) },
    riskThreshold: riskThreshold ?? DEFAULT_RISK_THRESHOLD,
    ...(secondApprover ? { secondApprover } : {}),
  };
}

/** The lower (stricter) of two risk levels; `undefined` stands for "no level set". */
function stricter(a: RiskLevel | undefined, b: RiskLevel | undefined): RiskLevel | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return LEVELS.indexOf(b) < LEVELS.indexOf(a) ? b : a;
}

/**
 * The two-step rule of a set of layers: the strictest (lowest) `secondApprover` any of
 * them sets (profiles never set one), or `undefined` when none does.
 */
export function secondApproverThreshold(layers: readonly NamedLayer[]): RiskLevel | undefined {
  let level: RiskLevel | undefined;
  for (const { layer } of layers) level = stricter(level, layer.secondApprover);
  return level;
}

/**
 * Whether an approval of a call at `risk` needs a principal other than the run's starter
 * under `threshold`: a call without a risk counts as high; no threshold, no rule.
 */
export function needsSecondApprover(threshold: RiskLevel | undefined, risk: RiskLevel | undefined): boolean {
  if (threshold === undefined) return false;
  return LEVELS.indexOf(risk ?? "high") >= LEVELS.indexOf(threshold);
}

/**
 * A child's policy: its parent's layers plus its own (the capability's, the agent spec's),
 * so a child can never gain a tool its parent lacks.
 */
export function childPolicy(parent: Policy, own: readonly NamedLayer[]): Policy {
  // the parent's layers already have their profiles expanded: keep them, add the child's
  const parentOwn = parent.layers.filter((l) => !l.name.startsWith("profile:"));
  return resolvePolicy([...parentOwn, ...own]);
}

/** One call as `decide` sees it: a name, arguments, and what is known of the tool. */
export interface PolicyCall {
  readonly name: string;
  readonly args?: unknown;
  readonly tool?: ToolDefinition;
  /** Default: the tool's declared effects (`toolEffects`), or `write` for an unknown tool. */
  readonly effects?: readonly ToolEffectKind[];
}

export interface DecideOptions {
  /** The risk of the call (G4's evaluator); consulted only when a layer's approval is `risk`. */
  readonly assessRisk?: (
    call: PolicyCall & { readonly effects: readonly ToolEffectKind[] },
  ) => RiskSummary | undefined;
  /** The workspace root: absolute path arguments under it are matched against `denyPatterns` relative to it. */
  readonly root?: string;
}

/** A verdict with the layer and rule that decided it. */
export type PolicyVerdict = Verdict & {
  readonly layer: string;
  readonly reason: string;
  /** The rule: `deny "shell"`, `allow [group:fs]`, `approval "risk"`, `workspace.denyPatterns ".env*"`. */
  readonly rule?: string;
  readonly effects: readonly ToolEffectKind[];
  readonly risk?: RiskSummary;
  /** Approval in effect (strictest across layers). */
  readonly approval: ApprovalRule;
};

const factsOf = (call: PolicyCall): ToolFacts => {
  const effects = call.effects ?? (call.tool ? toolEffects(call.tool) : (["write"] as const));
  return { name: call.name, effects, ...(call.tool ? { tool: call.tool } : {}) };
};

const quote = (s: string) => JSON.stringify(s);

/** The file paths a call's arguments name, for `workspace.denyPatterns`. */
export function pathArguments(name: string, args: unknown): string[] {
  if (args === null || typeof args !== "object") return [];
  const a = args as Record<string, unknown>;
  const out: string[] = [];
  const str = (v: unknown) => {
    if (typeof v === "string" && v.trim() !== "") out.push(v.trim());
  };
  switch (name) {
    case "read_file":
    case "write_file":
    case "edit":
    case "glob":
    case "grep":
    case "list":
    case "search":
      str(a.path);
      str(a.file_path);
      if (name === "glob") str(a.pattern);
      break;
    case "apply_patch":
      if (typeof a.patch === "string") out.push(...patchPaths(a.patch));
      break;
  }
  return out;
}

/** The paths a unified diff touches (`--- a/x`, `+++ b/x`, git rename lines). */
export function patchPaths(patch: string): string[] {
  const out = new Set<string>();
  for (const raw of patch.split(/\r?\n/)) {
    const header = /^(?:---|\+\+\+) (.+)$/.exec(raw);
    const rename = header ? undefined : /^(?:rename|copy) (?:from|to) (.+)$/.exec(raw);
    let p: string | undefined;
    if (header) {
      p = (header[1] as string).split("\t")[0]?.trim();
      if (p === undefined || p === "/dev/null") continue;
      if (/^[ab]\//.test(p)) p = p.slice(2);
    } else if (rename) p = (rename[1] as string).trim();
    if (p) out.add(p);
  }
  return [...out];
}

const pathMatcherCache = new Map<string, (p: string) => boolean>();
/** A matcher for one deny pattern: globs relative to the workspace; a pattern without `/` matches the file name anywhere. */
export function denyPatternMatcher(pattern: string): (path: string) => boolean {
  let m = pathMatcherCache.get(pattern);
  if (!m) {
    const bare = !pattern.includes("/");
    const full = picomatch(pattern, { dot: true });
    const base = bare ? picomatch(pattern, { dot: true, basename: true }) : undefined;
    m = (p: string) => full(p) || (base?.(p) ?? false);
    pathMatcherCache.set(pattern, m);
  }
  return m;
}

/** `p` as a workspace-relative POSIX path when it is under `root` (else as given, normalised). */
function relativePath(p: string, root: string | undefined): string {
  let s = p.replace(/\\/g, "/");
  if (root) {
    const r = root.replace(/\\/g, "/").replace(/\/+$/, "");
    if (s === r) return ".";
    if (s.startsWith(`${r}/`)) s = s.slice(r.length + 1);
  }
  s = s.replace(/^(\.\/)+/, "");
  // `a/../b` → `b` (the tools refuse escapes anyway; this keeps `x/../.env` from slipping past)
  const parts: string[] = [];
  for (const part of s.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && parts.length > 0 && parts.at(-1) !== "..") parts.pop();
    else parts.push(part);
  }
  return (s.startsWith("/") ? "/" : "") + parts.join("/");
}

/** The first deny pattern a path matches, if any. */
export function deniedPath(
  policy: Pick<Policy, "denyPatterns">,
  path: string,
  root?: string,
): { readonly pattern: string; readonly layer: string; readonly path: string } | undefined {
  const rel = relativePath(path, root);
  for (const d of policy.denyPatterns) if (denyPatternMatcher(d.pattern)(rel)) return { ...d, path };
  return undefined;
}

/** The approval one layer sets for a tool: an exact `tools` key, else the strictest matching glob/group, else its `approval`. */
function layerApproval(layer: PolicyLayer, t: ToolFacts): { mode: ApprovalRule; rule: string } | undefined {
  const tools = layer.tools ?? {};
  const exact = tools[t.name]?.approval;
  if (exact) return { mode: exact, rule: `tools.${t.name}.approval = ${quote(exact)}` };
  let best: { mode: ApprovalRule; rule: string } | undefined;
  for (const [key, rule] of Object.entries(tools)) {
    if (!rule.approval || key === t.name || !matchesPattern(key, t)) continue;
    if (!best || STRICTNESS[rule.approval] > STRICTNESS[best.mode])
      best = { mode: rule.approval, rule: `tools[${quote(key)}].approval = ${quote(rule.approval)}` };
  }
  if (best) return best;
  if (layer.approval) return { mode: layer.approval, rule: `approval = ${quote(layer.approval)}` };
  return undefined;
}

/**
 * Decide one call. Order: a control tool is allowed; a `deny` match in any layer denies;
 * a layer with a non-empty `allow` that does not cover the tool denies; a path argument
 * matching `workspace.denyPatterns` denies; then approval (strictest across layers):
 * `always` asks, `risk` asks when the risk is at or above `riskThreshold` (without an
 * evaluator: when the tool's effects include write or exec), `never` (or no rule) allows.
 */
export function decide(policy: Policy, call: PolicyCall, options: DecideOptions = {}): PolicyVerdict {
  const t = factsOf(call);
  const effects = t.effects;
  if (CONTROL_TOOLS.includes(call.name) && call.tool?.family === "agent")
    return {
      action: "allow",
      layer: "(built-in)",
      reason: `${call.name} ends a subagent's task; it is never governed`,
      effects,
      approval: "never",
    };
  for (const { name, layer } of policy.layers)
    for (const pattern of layer.deny ?? [])
      if (matchesPattern(pattern, t))
        return {
          action: "deny",
          layer: name,
          rule: `deny ${quote(pattern)}`,
          reason: `${call.name} is denied by ${quote(pattern)} in the deny list of layer ${name} (deny always wins)`,
          effects,
          approval: "never",
        };
  for (const { name, layer } of policy.layers) {
    const allow = layer.allow ?? [];
    if (allow.length === 0 || allow.some((p) => matchesPattern(p, t))) continue;
    return {
      action: "deny",
      layer: name,
      rule: `allow ${JSON.stringify(allow)}`,
      reason: `${call.name} is not in the allow list of layer ${name} (${allow.join(", ")}); every layer's allow list must admit a tool`,
      effects,
      approval: "never",
    };
  }
  for (const path of pathArguments(call.name, call.args)) {
    const hit = deniedPath(policy, path, options.root);
    if (hit)
      return {
        action: "deny",
        layer: "workspace.denyPatterns",
        rule: `workspace.denyPatterns ${quote(hit.pattern)} (${hit.layer})`,
        reason: `${quote(path)} matches ${quote(hit.pattern)} of workspace.denyPatterns (layer ${hit.layer}): the file tools may not touch it`,
        effects,
        approval: "never",
      };
  }
  let approval: ApprovalRule = "never";
  let decidedBy: { layer: string; rule: string } | undefined;
  for (const { name, layer } of policy.layers) {
    const a = layerApproval(layer, t);
    if (a && (decidedBy === undefined || STRICTNESS[a.mode] > STRICTNESS[approval])) {
      approval = a.mode;
      decidedBy = { layer: name, rule: a.rule };
    }
  }
  const layer = decidedBy?.layer ?? "(default)";
  const rule = decidedBy?.rule ?? 'approval = "never" (no layer sets one)';
  if (approval === "always")
    return {
      action: "ask",
      layer,
      rule,
      reason: `${call.name} needs approval: ${rule} in layer ${layer}`,
      effects,
      approval,
    };
  if (approval === "risk") {
    const risk = options.assessRisk?.({ ...call, effects });
    if (risk) {
      const at = LEVELS.indexOf(risk.level) >= LEVELS.indexOf(policy.riskThreshold);
      const why = `risk ${risk.level} (${risk.category}${risk.reasons.length ? `: ${risk.reasons.join("; ")}` : ""})`;
      return at
        ? {
            action: "ask",
            layer,
            rule,
            reason: `${call.name} needs approval: ${why} is at or above the threshold ${policy.riskThreshold} (${rule} in layer ${layer})`,
            risk,
            effects,
            approval,
          }
        : {
            action: "allow",
            layer,
            rule,
            reason: `${why} is below the threshold ${policy.riskThreshold} (${rule} in layer ${layer})`,
            risk,
            effects,
            approval,
          };
    }
    const mutates = effects.includes("write") || effects.includes("exec");
    return mutates
      ? {
          action: "ask",
          layer,
          rule,
          reason: `${call.name} needs approval: its effects (${effects.join(", ")}) include write or exec and no risk evaluator is configured (${rule} in layer ${layer})`,
          effects,
          approval,
        }
      : {
          action: "allow",
          layer,
          rule,
          reason: `its effects (${effects.join(", ")}) do not write or execute (${rule} in layer ${layer})`,
          effects,
          approval,
        };
  }
  return {
    action: "allow",
    layer,
    rule,
    reason: decidedBy
      ? `allowed without approval (${rule} in layer ${layer})`
      : "allowed: no layer denies it and none asks for approval",
    effects,
    approval,
  };
}

/** What `makeGovernance` may be given. */
export interface GovernanceOptions extends DecideOptions {
  /**
   * The layers a session adds to `policy` (a subagent's capability and agent-spec layers,
   * its ancestors' first): its calls are decided under `childPolicy(policy, layers)`, so a
   * child never gains a tool its parent lacks. Default: none (every session gets `policy`).
   */
  readonly sessionLayers?: (sessionId: string) => readonly NamedLayer[];
}

/** Core's `GovernanceShape` for this policy: `decide` for each governed call. */
export function makeGovernance(policy: Policy, options: GovernanceOptions = {}): GovernanceShape {
  const cache = new Map<string, { readonly own: readonly NamedLayer[]; readonly policy: Policy }>();
  const policyOf = (sessionId: string): Policy => {
    const own = options.sessionLayers?.(sessionId) ?? [];
    if (own.length === 0) return policy;
    const hit = cache.get(sessionId);
    if (hit && hit.own === own) return hit.policy;
    const p = childPolicy(policy, own);
    cache.set(sessionId, { own, policy: p });
    return p;
  };
  return {
    decide: (call: GovernedCall): Verdict => {
      const v = decide(
        policyOf(call.sessionId),
        { name: call.name, args: call.args, tool: call.tool, effects: call.effects },
        options,
      );
      const layer = v.rule ? `${v.layer}: ${v.rule}` : v.layer;
      if (v.action === "allow") return { action: "allow", layer, reason: v.reason };
      if (v.action === "deny") return { action: "deny", layer, reason: v.reason };
      return {
        action: "ask",
        layer,
        reason: v.reason,
        ...(v.risk ? { risk: v.risk } : {}),
        ...(v.approval === "always" ? { always: true } : {}),
      };
    },
  };
}

/** The layers of a policy, one per line, with what each says (for `lash policy explain`). */
export function describeLayers(policy: Policy): string[] {
  if (policy.layers.length === 0) return ["  (none: every tool is allowed, nothing is asked)"];
  return policy.layers.map(({ name, layer }) => {
    const json = JSON.stringify(layer);
    return `  ${name}: ${json === "{}" ? "{} (adds nothing)" : json}`;
  });
}

/** A human explanation of the decision for one call: the layers, the verdict, the deciding layer and rule, the effects, the risk. */
export function explain(policy: Policy, call: PolicyCall, options: DecideOptions = {}): string {
  const v = decide(policy, call, options);
  const lines = [
    `tool: ${call.name}${call.tool ? "" : " (not a known tool here: treated as effects write)"}`,
    `arguments: ${call.args === undefined ? "(none)" : JSON.stringify(call.args)}`,
    `effects: ${v.effects.join(", ")}`,
    "layers (in order; allow = intersection, deny = union, approval = strictest):",
    ...describeLayers(policy),
    `verdict: ${v.action}`,
    `decided by: ${v.layer}${v.rule ? ` — ${v.rule}` : ""}`,
    `why: ${v.reason}`,
  ];
  if (v.action !== "deny")
    lines.push(
      `approval in effect: ${v.approval}${v.approval === "risk" ? ` (asks at risk ${policy.riskThreshold} or above)` : ""}`,
    );
  if (v.risk)
    lines.push(
      `risk: ${v.risk.level} (${v.risk.category})${v.risk.reasons.length ? ` — ${v.risk.reasons.join("; ")}` : ""}`,
    );
  else if (v.approval === "risk") lines.push("risk: not assessed (no risk evaluator)");
  if (policy.secondApprover && v.action === "ask")
    lines.push(
      `two-step rule: ${needsSecondApprover(policy.secondApprover, v.risk?.level) ? "applies" : "does not apply"} (secondApprover ${policy.secondApprover}: under lash serve, a principal other than the run's starter must approve calls at that risk or above; unassessed = high)`,
    );
  return `${lines.join("\n")}\n`;
}

/**
 * Which policy layers each subagent session adds, by session id: a child's are its
 * parent's plus its own (capability, agent spec). Feed `layersOf` to `makeGovernance`'s
 * `sessionLayers`; register a child when it is spawned (or resumed).
 */
/**
 * Where a session's own policy layers (beyond its host's config: an agent's, a principal's,
 * a subagent's capability) are kept in its durable state. A host's governance restores them
 * at every turn, so they hold after a restart; a daemon writes them at session creation.
 */
export const SESSION_LAYERS_KEY = "policy-layers";

export class SessionPolicies {
  readonly #layers = new Map<string, readonly NamedLayer[]>();

  /** Record a child: its parent's layers, then `own`. Returns the child's layers. */
  register(
    childSessionId: string,
    parentSessionId: string,
    own: readonly NamedLayer[],
  ): readonly NamedLayer[] {
    const layers = [...this.layersOf(parentSessionId), ...own];
    const prev = this.#layers.get(childSessionId);
    // the same layers again (a resume) keep their identity, so a cached policy stays valid
    if (prev && JSON.stringify(prev) === JSON.stringify(layers)) return prev;
    this.#layers.set(childSessionId, layers);
    return layers;
  }

  /** Record a session's layers as they are (a session reopened: the layers stored with it). */
  set(sessionId: string, layers: readonly NamedLayer[]): readonly NamedLayer[] {
    const prev = this.#layers.get(sessionId);
    if (prev && JSON.stringify(prev) === JSON.stringify(layers)) return prev;
    this.#layers.set(sessionId, layers);
    return layers;
  }

  /** The layers a session adds to the base policy (none for a root session). */
  layersOf(sessionId: string): readonly NamedLayer[] {
    return this.#layers.get(sessionId) ?? [];
  }
}
