import * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import type { NamedHooks } from "./dispatch.ts";
import type { Plugin, PluginHooks } from "./plugin.ts";
import type { SessionRecord } from "./store.ts";
import type { ToolDefinition } from "./tool.ts";

/**
 * The plugins of a runtime in registration order, plus per-session additions
 * (plugins attached to one session by this process). Hooks run in this order.
 */
export interface PluginHostShape {
  /** Runtime plugins followed by the session's own. */
  plugins(sessionId: string): readonly Plugin[];
  /** Replace the plugins attached to one session. */
  attach(sessionId: string, plugins: readonly Plugin[]): void;
  /** Forget a session's attached plugins. */
  detach(sessionId: string): void;
  hooks(sessionId: string): readonly NamedHooks[];
  /** The one `projectToolResult` hook, if any plugin has it. */
  projector(sessionId: string): PluginHooks["projectToolResult"];
  /** The session's system prompt followed by the plugins' prompt text. */
  systemPrompt(session: SessionRecord): string | undefined;
  /** Status of every runtime plugin that reports one. */
  status(): { readonly [plugin: string]: unknown };
}

export class PluginHost extends Context.Tag("@lash/core/PluginHost")<PluginHost, PluginHostShape>() {
  /** Fails (dies) when more than one plugin projects tool results: that hook is exclusive. */
  static make(plugins: readonly Plugin[]): PluginHostShape {
    const projectors = plugins.filter((p) => p.hooks?.projectToolResult);
    if (projectors.length > 1) {
      throw new Error(
        `only one plugin may project tool results; found ${projectors.map((p) => p.name).join(", ")}`,
      );
    }
    const attached = new Map<string, readonly Plugin[]>();
    const all = (sessionId: string): readonly Plugin[] => {
      const extra = attached.get(sessionId);
      return extra?.length ? [...plugins, ...extra] : plugins;
    };
    return {
      plugins: all,
      attach: (sessionId, extra) => {
        attached.set(sessionId, extra);
      },
      detach: (sessionId) => {
        attached.delete(sessionId);
      },
      hooks: (sessionId) =>
        all(sessionId).flatMap((p) => (p.hooks ? [{ plugin: p.name, hooks: p.hooks }] : [])),
      projector: (sessionId) =>
        all(sessionId).find((p) => p.hooks?.projectToolResult)?.hooks?.projectToolResult,
      systemPrompt: (session) => {
        const parts = [session.systemPrompt, ...all(session.id).map((p) => p.prompt)].filter(
          (s): s is string => typeof s === "string" && s.trim() !== "",
        );
        return parts.length ? parts.join("\n\n") : undefined;
      },
      status: () => {
        const out: { [plugin: string]: unknown } = {};
        for (const p of plugins) if (p.status) out[p.name] = p.status();
        return out;
      },
    };
  }

  static layer(plugins: readonly Plugin[]): Layer.Layer<PluginHost> {
    return Layer.sync(PluginHost, () => PluginHost.make(plugins));
  }
}

/** The tools a session sees this turn: every plugin's tools, narrowed by the session's allow-list. */
export interface ToolCatalogShape {
  forSession(session: SessionRecord): Effect.Effect<Map<string, ToolDefinition>>;
  /** `forSession` without an effect, when it needs none (no plugin has dynamic tools); else undefined. */
  forSessionNow?(session: SessionRecord): Map<string, ToolDefinition> | undefined;
}

/** Session-state key of a session's tool allow-list (`createSession({ tools })`). */
export const TOOL_ALLOW_KEY = "lash.tools";

/** Per session record (one per turn): what its catalog was built from, and the map. */
const built = new WeakMap<
  SessionRecord,
  {
    readonly plugins: readonly Plugin[];
    readonly dynamics: readonly (readonly ToolDefinition[])[];
    readonly tools: readonly (readonly ToolDefinition[] | undefined)[];
    readonly map: Map<string, ToolDefinition>;
  }
>();

const sameList = <A>(a: readonly A[], b: readonly A[]): boolean => {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

export class ToolCatalog extends Context.Tag("@lash/core/ToolCatalog")<ToolCatalog, ToolCatalogShape>() {
  static make(host: PluginHostShape): ToolCatalogShape {
    const build = (
      session: SessionRecord,
      plugins: readonly Plugin[],
      dynamics: (readonly ToolDefinition[])[],
    ) => {
      // the same plugins, tool lists and allow-list as the last call for this record: the same map
      const last = built.get(session);
      if (last && sameList(last.plugins, plugins) && sameList(last.dynamics, dynamics)) {
        let same = true;
        for (let i = 0; i < plugins.length && same; i++) same = last.tools[i] === plugins[i]!.tools;
        if (same) return last.map;
      }
      const map = new Map<string, ToolDefinition>();
      let d = 0;
      for (const plugin of plugins) {
        for (const tool of plugin.tools ?? []) if (!map.has(tool.name)) map.set(tool.name, tool);
        if (plugin.dynamicTools) {
          const dynamic = dynamics[d++]!;
          for (const tool of dynamic) if (!map.has(tool.name)) map.set(tool.name, tool);
        }
      }
      const allow = session.state[TOOL_ALLOW_KEY] as readonly string[] | undefined;
      if (allow) {
        const allowed = new Set(allow);
        // a trailing `*` grants a prefix (`mcp__github__*`: every tool of that MCP server)
        const prefixes = allow.filter((a) => a.endsWith("*")).map((a) => a.slice(0, -1));
        // helper tools (`helper: true`, e.g. read_output) follow their plugin's availability
        for (const [name, tool] of [...map])
          if (!allowed.has(name) && !prefixes.some((p) => name.startsWith(p)) && tool.helper !== true)
            map.delete(name);
      }
      built.set(session, { plugins, dynamics, tools: plugins.map((p) => p.tools), map });
      return map;
    };
    return {
      forSession: (session) =>
        Effect.gen(function* () {
          const plugins = host.plugins(session.id);
          const dynamics: (readonly ToolDefinition[])[] = [];
          for (const plugin of plugins) if (plugin.dynamicTools) dynamics.push(yield* plugin.dynamicTools());
          return build(session, plugins, dynamics);
        }),
      forSessionNow: (session) => {
        const plugins = host.plugins(session.id);
        for (const plugin of plugins) if (plugin.dynamicTools) return undefined;
        return build(session, plugins, []);
      },
    };
  }

  static readonly layer: Layer.Layer<ToolCatalog, never, PluginHost> = Layer.effect(
    ToolCatalog,
    Effect.map(PluginHost, (host) => ToolCatalog.make(host)),
  );
}
