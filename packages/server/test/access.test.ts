// Who may see a session (its durable owner; admins see all; a child session belongs to its
// root's owner), who may run an agent (the build's `acl`), and the policy layer a principal
// adds to its sessions — over a real runtime and SQLite session store.
import { join } from "node:path";
import type { Manifest, ResolvedAgent } from "@lash/agents";
import { Effect, Either } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { makeAccess } from "../src/access.ts";
import { Principal } from "../src/api.ts";
import { type TestHost, tempDir, testHost } from "./access-fixture.ts";

const alice = new Principal({ name: "alice", admin: false });
const bob = new Principal({ name: "bob", admin: false });
const root = new Principal({ name: "root", admin: true });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function host(options: Omit<Parameters<typeof testHost>[0], "dbFile"> = {}): TestHost {
  const { dir, cleanup } = tempDir("lash-access-");
  const h = testHost({ dbFile: join(dir, "lash.db"), ...options });
  cleanups.push(cleanup, () => h.close());
  return h;
}

const agent = (name: string, acl?: ResolvedAgent["acl"]): ResolvedAgent => ({
  name,
  description: name,
  mode: "standard",
  instructions: "",
  tools: [],
  source: `agents/${name}.agent.md`,
  ...(acl ? { acl } : {}),
});

const manifest = (...agents: ResolvedAgent[]): Manifest => ({
  version: 1,
  hash: "h",
  lashVersion: "0",
  inputs: [],
  project: {},
  agents,
  skills: [],
});

const either = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e));

describe("sessions", () => {
  it("the owner and admins see a session; another principal gets 403 naming the rule; unknown is 404", async () => {
    const h = host();
    const access = makeAccess(h);
    const id = await h.createSession("alice", { agent: "reviewer" });
    expect(await Effect.runPromise(access.sessionInfo(id))).toEqual({ owner: "alice", agent: "reviewer" });
    expect(Either.isRight(await either(access.checkSession(alice, id)))).toBe(true);
    expect(Either.isRight(await either(access.checkSession(root, id)))).toBe(true);
    const other = await either(access.checkSession(bob, id));
    expect(Either.isLeft(other) && other.left._tag).toBe("Forbidden");
    if (Either.isLeft(other)) {
      expect(other.left.code).toBe("forbidden");
      expect(other.left.message).toContain("visible only to the principal that created it and to admins");
    }
    const missing = await either(access.checkSession(root, "nope"));
    expect(Either.isLeft(missing) && missing.left._tag).toBe("NotFound");
    if (Either.isLeft(missing)) expect(missing.left.code).toBe("session_not_found");
  });

  it("a subagent's child session belongs to its root's owner; a session without an owner is local's", async () => {
    const h = host();
    const access = makeAccess(h);
    const parent = await h.createSession("alice");
    const child = await h.createSession(undefined, { parent });
    expect((await Effect.runPromise(access.sessionInfo(child))).owner).toBe("alice");
    expect(Either.isRight(await either(access.checkSession(alice, child)))).toBe(true);
    expect(Either.isLeft(await either(access.checkSession(bob, child)))).toBe(true);
    const orphan = await h.createSession(undefined);
    expect((await Effect.runPromise(access.sessionInfo(orphan))).owner).toBe("local");
    expect(Either.isLeft(await either(access.checkSession(alice, orphan)))).toBe(true);
  });
});

describe("agents", () => {
  it("no acl: every principal may execute; an acl: only the listed principals (and admins)", async () => {
    const h = host({
      manifest: manifest(agent("open"), agent("reviewer", { alice: "execute", bob: "read" })),
    });
    const access = makeAccess(h);
    const ok = async (p: Principal, name: string, need: "execute" | "read") =>
      Either.isRight(await either(access.checkAgent(p, name, need)));
    expect(await ok(bob, "open", "execute")).toBe(true);
    expect(await ok(alice, "reviewer", "execute")).toBe(true);
    expect(await ok(alice, "reviewer", "read")).toBe(true);
    expect(await ok(bob, "reviewer", "read")).toBe(true);
    expect(await ok(bob, "reviewer", "execute")).toBe(false);
    expect(await ok(root, "reviewer", "execute")).toBe(true);
    expect(await ok(new Principal({ name: "carol", admin: false }), "reviewer", "read")).toBe(false);
  });

  it("403 names the agent and the fix; 404 names lash build", async () => {
    const h = host({ manifest: manifest(agent("reviewer", { alice: "execute", bob: "read" })) });
    const access = makeAccess(h);
    const denied = await either(access.checkAgent(bob, "reviewer", "execute"));
    expect(Either.isLeft(denied) && denied.left._tag).toBe("Forbidden");
    if (Either.isLeft(denied))
      expect(denied.left.message).toBe(
        'principal "bob" may not execute agent "reviewer": its acl grants it only "read". Add `bob: execute` to `acl:` in agents/reviewer.agent.md and run `lash build`',
      );
    const unlisted = await either(
      access.checkAgent(new Principal({ name: "carol", admin: false }), "reviewer", "read"),
    );
    if (Either.isLeft(unlisted)) expect(unlisted.left.message).toContain("its acl does not list it");
    const missing = await either(access.checkAgent(alice, "nope", "read"));
    expect(Either.isLeft(missing) && missing.left._tag).toBe("NotFound");
    if (Either.isLeft(missing)) {
      expect(missing.left.code).toBe("agent_not_found");
      expect(missing.left.message).toContain("agents: reviewer");
      expect(missing.left.message).toContain("lash build");
    }
    const nobuild = await either(makeAccess(host()).checkAgent(alice, "x", "read"));
    if (Either.isLeft(nobuild)) expect(nobuild.left.message).toContain("has no build");
    expect(Either.isLeft(nobuild)).toBe(true);
  });
});

describe("principal layers", () => {
  it("a principal's config policy becomes a layer named principal:<name>; others get none", () => {
    const h = host({ principals: { alice: { policy: { deny: ["shell"] } }, bob: {} } });
    const access = makeAccess(h);
    expect(access.principalLayers(alice)).toEqual([{ name: "principal:alice", layer: { deny: ["shell"] } }]);
    expect(access.principalLayers(bob)).toEqual([]);
    expect(access.principalLayers(root)).toEqual([]);
  });
});
