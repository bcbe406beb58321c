// Who may see a session or run an agent, and the policy a principal adds to its sessions.
//
// - Sessions belong to the principal that created them: `serve.owner` in the session's
//   durable state (written at creation). A subagent's child session belongs to the owner of
//   its parent; a session the daemon did not create (no owner) counts as `local`'s. Only the
//   owner and admins see a session: anyone else gets 403, an unknown session 404.
// - Agents: the build's `acl` (principal → `execute` | `read`). No `acl`: every authenticated
//   principal may execute the agent. An `acl`: only the principals it lists (and admins);
//   `execute` includes `read`.
// - Principal layers: config's `serve.principals.<name>.policy`, added after the session's
//   other layers, so it can only narrow them (allow = intersection, deny = union).
import { SessionStore } from "@lash/core";
import { type NamedLayer, SESSION_LAYERS_KEY } from "@lash/policy";
import { Cause, Effect, Exit, Layer, Option } from "effect";
import { Forbidden, NotFound, type Principal } from "./api.ts";
import { Access, Host, type ServeHost } from "./services.ts";

/** The durable-state keys the daemon writes at session creation. */
export const OWNER_KEY = "serve.owner";
export const AGENT_KEY = "serve.agent";

/** The owner of a session the daemon did not create (e.g. one `lash` made in the same database). */
export const DEFAULT_OWNER = "local";

/** The layers of principal `name` (config's `serve.principals.<name>.policy`), named `principal:<name>`. */
export const principalLayersOf = (host: ServeHost, name: string): readonly NamedLayer[] => {
  const layer = host.principals?.[name]?.policy;
  return layer ? [{ name: `principal:${name}`, layer }] : [];
};

/**
 * The durable state that keeps a session's own policy layers (its agent's, then its
 * principal's): the host's governance restores them at every turn, so they hold for every run
 * of the session, after a daemon restart and in a resumed run.
 */
export const layersState = (layers: readonly NamedLayer[]): { readonly [key: string]: unknown } =>
  layers.length > 0 ? { [SESSION_LAYERS_KEY]: layers } : {};

/** The policy layers stored in a session's state (none: `[]`). */
export const storedLayers = (state: { readonly [key: string]: unknown }): readonly NamedLayer[] => {
  const v = state[SESSION_LAYERS_KEY];
  return Array.isArray(v) ? (v as NamedLayer[]) : [];
};

/** `layers` then those of `more` whose name is not among them yet (a principal's layer once). */
export const withLayers = (
  layers: readonly NamedLayer[],
  more: readonly NamedLayer[],
): readonly NamedLayer[] => [...layers, ...more.filter((m) => !layers.some((l) => l.name === m.name))];

/** May `principal` see a session (or approval) of `owner`? */
export const canSee = (principal: Principal, owner: string): boolean =>
  principal.admin || principal.name === owner;

const sessionNotFound = (id: string) =>
  new NotFound({
    code: "session_not_found",
    message: `no session ${JSON.stringify(id)}: list the sessions you can see with GET /v1/sessions`,
  });

/** A session's parent chain ends within this many links (subagents nest at most 5 deep). */
const MAX_PARENT_LINKS = 16;

/** The owner and agent of a session, from its durable state (a child's: its root's owner). */
export const sessionInfoOf = (
  host: ServeHost,
  sessionId: string,
): Effect.Effect<{ readonly owner: string; readonly agent?: string }, NotFound> =>
  Effect.gen(function* () {
    let id = sessionId;
    for (let depth = 0; depth <= MAX_PARENT_LINKS; depth++) {
      const exit = yield* Effect.promise(() =>
        host.runtime.runPromiseExit(Effect.flatMap(SessionStore, (store) => store.getSession(id))),
      );
      if (Exit.isFailure(exit)) {
        const failure = Cause.failureOption(exit.cause);
        if (Option.isSome(failure) && (failure.value as { _tag?: string })._tag === "SessionNotFound")
          return yield* Effect.fail(sessionNotFound(sessionId));
        return yield* Effect.die(Cause.squash(exit.cause));
      }
      const record = exit.value;
      const owner = record.state[OWNER_KEY];
      const agent = record.state[AGENT_KEY];
      if (typeof owner === "string") return { owner, ...(typeof agent === "string" ? { agent } : {}) };
      if (!record.parentLink)
        return { owner: DEFAULT_OWNER, ...(typeof agent === "string" ? { agent } : {}) };
      id = record.parentLink.sessionId;
    }
    return { owner: DEFAULT_OWNER };
  });

/** `Access` over a host: its session store, its build's ACLs, its principals' policy layers. */
export const makeAccess = (host: ServeHost) =>
  Access.of({
    sessionInfo: (sessionId) => sessionInfoOf(host, sessionId),
    checkSession: (principal, sessionId) =>
      Effect.gen(function* () {
        const { owner } = yield* sessionInfoOf(host, sessionId);
        if (canSee(principal, owner)) return;
        return yield* Effect.fail(
          new Forbidden({
            code: "forbidden",
            message: `session ${JSON.stringify(sessionId)} belongs to another principal: a session is visible only to the principal that created it and to admins (use that principal's token or an admin token)`,
          }),
        );
      }),
    checkAgent: (principal, name, need) =>
      Effect.gen(function* () {
        const agents = host.manifest?.agents ?? [];
        const agent = agents.find((a) => a.name === name);
        if (!agent)
          return yield* Effect.fail(
            new NotFound({
              code: "agent_not_found",
              message: host.manifest
                ? `no agent named ${JSON.stringify(name)} in the build this daemon serves (agents: ${agents.map((a) => a.name).join(", ") || "none"}); define it (an *.agent.md or agents/*.yaml) and run \`lash build\` in the daemon's workspace`
                : `no agent named ${JSON.stringify(name)}: the daemon's workspace has no build; define agents (*.agent.md or agents/*.yaml) and run \`lash build\` there`,
            }),
          );
        if (principal.admin || agent.acl === undefined) return;
        const grant = agent.acl[principal.name];
        if (grant === "execute" || (grant === "read" && need === "read")) return;
        return yield* Effect.fail(
          new Forbidden({
            code: "forbidden",
            message: `principal ${JSON.stringify(principal.name)} may not ${need} agent ${JSON.stringify(name)}: its acl ${grant ? `grants it only "${grant}"` : "does not list it"}. Add \`${principal.name}: ${need}\` to \`acl:\` in ${agent.source} and run \`lash build\``,
          }),
        );
      }),
    principalLayers: (principal): readonly NamedLayer[] => principalLayersOf(host, principal.name),
  });

export const AccessLive = Layer.effect(Access, Effect.map(Host, makeAccess));
