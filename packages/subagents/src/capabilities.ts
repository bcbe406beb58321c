import type { SessionMode, SessionRecord, ToolDefinition } from "@lash/core";

/** What a capability is asked to decide for one child. */
export interface CapabilityContext {
  /** The session that calls `spawn_agent`. */
  readonly parent: SessionRecord;
  /** The tools the parent sees now (its own child-only tools removed). */
  readonly parentTools: readonly ToolDefinition[];
  /** The child's depth (the root's children are at 1). */
  readonly depth: number;
}

/**
 * A kind of child agent. The child's tool set is what `tools` picks from the
 * parent's tools; it is always intersected with the parent's tools afterwards,
 * so a capability can narrow the parent's affordances but never widen them.
 */
export interface Capability {
  readonly name: string;
  /** One line for the model: when to use this kind of child. */
  readonly description: string;
  /** The child's model (default: the parent's). */
  readonly model?: string;
  /** The child's protocol mode (default: the parent's). */
  readonly mode?: SessionMode;
  /** The child's system prompt (default: a short subagent prompt). */
  readonly systemPrompt?: string;
  /** Model calls per child turn (default: the runtime's). */
  readonly maxTurns?: number;
  /** May the child spawn children of its own (default true; always false at the depth limit). */
  readonly spawn?: boolean;
  /** Names of the parent's tools the child gets. */
  readonly tools: (context: CapabilityContext) => readonly string[];
  /**
   * A tool-policy layer (@lash/policy's `PolicyLayer` format) the child adds to its parent's
   * layers: it can narrow what the parent may do, never widen it (see `SubagentsOptions.onChild`).
   */
  readonly policy?: { readonly [key: string]: unknown };
}

export interface CapabilityOptions {
  readonly model?: string;
  readonly mode?: SessionMode;
  readonly systemPrompt?: string;
  readonly maxTurns?: number;
}

const withOptions = (base: Capability, options: CapabilityOptions): Capability => ({
  ...base,
  ...(options.model !== undefined ? { model: options.model } : {}),
  ...(options.mode !== undefined ? { mode: options.mode } : {}),
  ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
  ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
});

/** `explore`: a read-only investigator — only the parent's `readOnly` tools, no further spawning. */
export function exploreCapability(options: CapabilityOptions = {}): Capability {
  return withOptions(
    {
      name: "explore",
      description: "a read-only investigator: reads and searches, changes nothing, cannot spawn agents",
      spawn: false,
      tools: ({ parentTools }) => parentTools.filter((t) => t.readOnly === true).map((t) => t.name),
      // the same rule as a policy layer: whatever its tool set, the child's calls must only read
      policy: { profile: "readonly" },
    },
    options,
  );
}

/** `peer`: the parent's tools (spawning included, below the depth limit) in a fresh context window. */
export function peerCapability(options: CapabilityOptions = {}): Capability {
  return withOptions(
    {
      name: "peer",
      description: "a peer with the same tools as you, in a fresh context window",
      spawn: true,
      tools: ({ parentTools }) => parentTools.map((t) => t.name),
    },
    options,
  );
}

/** Define a capability from scratch (e.g. a fixed tool list). */
export function defineCapability(capability: Capability): Capability {
  return capability;
}

/** Capabilities by name, in registration order; registering a name again replaces the entry in place. */
export class CapabilityRegistry {
  private readonly entries: Capability[] = [];

  constructor(capabilities: Iterable<Capability> = []) {
    for (const c of capabilities) this.register(c);
  }

  /** The built-ins: `explore` and `peer`, with optional model overrides. */
  static defaults(models: { readonly explore?: string; readonly peer?: string } = {}): CapabilityRegistry {
    return new CapabilityRegistry([
      exploreCapability(models.explore !== undefined ? { model: models.explore } : {}),
      peerCapability(models.peer !== undefined ? { model: models.peer } : {}),
    ]);
  }

  register(capability: Capability): this {
    const i = this.entries.findIndex((c) => c.name === capability.name);
    if (i >= 0) this.entries[i] = capability;
    else this.entries.push(capability);
    return this;
  }

  get(name: string): Capability | undefined {
    return this.entries.find((c) => c.name === name);
  }

  names(): readonly string[] {
    return this.entries.map((c) => c.name);
  }

  list(): readonly Capability[] {
    return [...this.entries];
  }
}
