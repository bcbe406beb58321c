// Bearer tokens over a real state db file: stored hashed (the token text is nowhere in the
// files), revocable, compared in constant time; `authenticate` and the `Authorization`
// middleware's layer map them to principals (401 `missing_token` / `invalid_token`).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Effect, Either, Layer, Redacted } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { Authorization, Principal, type Unauthorized } from "../src/api.ts";
import { AuthorizationLive, authenticate, bearerToken } from "../src/auth.ts";
import { type ServeSettings, Settings, StateDb } from "../src/services.ts";
import { hashesEqual, TokenStore } from "../src/tokens.ts";
import { stateDb, tempDir } from "./access-fixture.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function fresh() {
  const { dir, cleanup } = tempDir("lash-auth-");
  const file = join(dir, "serve.db");
  const db = stateDb(file);
  cleanups.push(() => {
    db.close();
    cleanup();
  });
  return { dir, file, db, tokens: new TokenStore(db) };
}

const settings = (auth: "tokens" | "none"): ServeSettings => ({
  host: "127.0.0.1",
  port: 0,
  stateDb: "",
  maxConcurrentRuns: 8,
  maxQueuedRuns: 1000,
  maxBodyBytes: 1 << 20,
  sseBufferEvents: 10_000,
  drainTimeoutMs: 10_000,
  auth,
});

const services = (db: ReturnType<typeof stateDb>, auth: "tokens" | "none") =>
  Layer.mergeAll(Layer.succeed(Settings, settings(auth)), Layer.succeed(StateDb, db));

const run = <A>(
  effect: Effect.Effect<A, Unauthorized, Settings | StateDb>,
  db: ReturnType<typeof stateDb>,
  auth: "tokens" | "none" = "tokens",
) => Effect.runPromise(Effect.either(effect.pipe(Effect.provide(services(db, auth)))));

describe("tokens", () => {
  it("a token is lash_ + 43 base64url characters, shown once; only its hash is in the files", () => {
    const { dir, db, tokens } = fresh();
    const { token, info } = tokens.create({ principal: "alice", admin: false, now: 1000 });
    expect(token).toMatch(/^lash_[A-Za-z0-9_-]{43}$/);
    expect(info).toEqual({ id: info.id, principal: "alice", admin: false, createdAt: 1000 });
    db.pragma("wal_checkpoint(FULL)");
    const secret = token.slice("lash_".length);
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f)).includes(secret), f).toBe(false);
    // list never shows the token, and says who and when
    expect(JSON.stringify(tokens.list())).not.toContain(secret);
    expect(tokens.list()).toEqual([info]);
  });

  it("verify maps a token to its principal and records its last use; revoke ends it", () => {
    const { tokens } = fresh();
    const alice = tokens.create({ principal: "alice", admin: false, now: 1000 });
    const root = tokens.create({ principal: "root", admin: true, now: 1001 });
    expect(tokens.verify(alice.token, 5000)).toEqual(new Principal({ name: "alice", admin: false }));
    expect(tokens.verify(root.token, 6000)).toEqual(new Principal({ name: "root", admin: true }));
    expect(tokens.list().find((t) => t.id === alice.info.id)?.lastUsedAt).toBe(5000);
    expect(tokens.revoke(alice.info.id, 7000)).toBe(true);
    expect(tokens.revoke(alice.info.id, 7001)).toBe(false);
    expect(tokens.revoke("tok_nope", 7001)).toBe(false);
    expect(tokens.verify(alice.token, 8000)).toBeUndefined();
    expect(tokens.list().find((t) => t.id === alice.info.id)?.revokedAt).toBe(7000);
    // the other token still works
    expect(tokens.verify(root.token, 8000)?.name).toBe("root");
  });

  it("a look-alike token (one character off) is refused", () => {
    const { tokens } = fresh();
    const { token } = tokens.create({ principal: "alice", admin: false, now: 1 });
    const last = token.at(-1) === "A" ? "B" : "A";
    expect(tokens.verify(token.slice(0, -1) + last, 2)).toBeUndefined();
    expect(tokens.verify(token.slice(0, -1), 2)).toBeUndefined();
    expect(tokens.verify(`${token}x`, 2)).toBeUndefined();
  });

  it("hashes are compared in constant time: equal only when every byte is; other lengths are unequal, not an error", () => {
    const a = "a".repeat(64);
    expect(hashesEqual(a, a)).toBe(true);
    expect(hashesEqual(a, `${"a".repeat(63)}b`)).toBe(false);
    expect(hashesEqual(a, "a".repeat(63))).toBe(false);
    expect(hashesEqual("", "")).toBe(true);
  });

  it("a principal name must be a plain name", () => {
    const { tokens } = fresh();
    expect(() => tokens.create({ principal: "al ice", admin: false, now: 1 })).toThrow(
      /invalid principal name "al ice".*--principal alice/,
    );
  });
});

describe("authenticate", () => {
  it("no header or an empty bearer → 401 missing_token naming the header and the command", async () => {
    const { db } = fresh();
    for (const header of [undefined, "", "Bearer ", "bearer   "]) {
      const r = await run(authenticate(header), db);
      expect(Either.isLeft(r) && r.left.code, String(header)).toBe("missing_token");
      if (Either.isLeft(r)) {
        expect(r.left.message).toContain("Authorization: Bearer <token>");
        expect(r.left.message).toContain("lash serve token create --principal <name>");
      }
    }
  });

  it("an unknown or revoked token → 401 invalid_token; a live one → its principal", async () => {
    const { db, tokens } = fresh();
    const { token, info } = tokens.create({ principal: "alice", admin: false, now: 1 });
    expect(await run(authenticate(`Bearer ${token}`), db)).toEqual(
      Either.right(new Principal({ name: "alice", admin: false })),
    );
    expect(await run(authenticate(`bearer ${token}`), db)).toEqual(
      Either.right(new Principal({ name: "alice", admin: false })),
    );
    const wrong = await run(authenticate("Bearer lash_nope"), db);
    expect(Either.isLeft(wrong) && wrong.left.code).toBe("invalid_token");
    const basic = await run(authenticate("Basic YWxpY2U6eA=="), db);
    expect(Either.isLeft(basic) && basic.left.code).toBe("invalid_token");
    tokens.revoke(info.id, 2);
    const revoked = await run(authenticate(`Bearer ${token}`), db);
    expect(Either.isLeft(revoked) && revoked.left.code).toBe("invalid_token");
    if (Either.isLeft(revoked)) expect(revoked.left.message).toContain("unknown or revoked");
  });

  it("auth none: every caller is the admin principal local", async () => {
    const { db } = fresh();
    expect(await run(authenticate(undefined), db, "none")).toEqual(
      Either.right(new Principal({ name: "local", admin: true })),
    );
  });

  it("bearerToken takes the token out of the header", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("BEARER  abc")).toBe("abc");
    expect(bearerToken(undefined)).toBe("");
    expect(bearerToken("Token abc")).toBe("Token abc");
  });
});

describe("AuthorizationLive", () => {
  const bearer = (db: ReturnType<typeof stateDb>, token: string, auth: "tokens" | "none" = "tokens") =>
    Effect.runPromise(
      Effect.either(
        Effect.flatMap(
          Authorization,
          // the handler may use the request's context; this one needs none of it
          (a) => a.bearer(Redacted.make(token)) as Effect.Effect<Principal, Unauthorized>,
        ).pipe(Effect.provide(AuthorizationLive.pipe(Layer.provide(services(db, auth))))),
      ),
    );

  it("the middleware's bearer handler: a live token → principal, none → missing_token, other → invalid_token", async () => {
    const { db, tokens } = fresh();
    const { token } = tokens.create({ principal: "bob", admin: true, now: 1 });
    expect(await bearer(db, token)).toEqual(Either.right(new Principal({ name: "bob", admin: true })));
    const none = await bearer(db, "");
    expect(Either.isLeft(none) && none.left.code).toBe("missing_token");
    const bad = await bearer(db, "lash_bad");
    expect(Either.isLeft(bad) && bad.left.code).toBe("invalid_token");
    expect(await bearer(db, "", "none")).toEqual(Either.right(new Principal({ name: "local", admin: true })));
  });

  it("a token created by another connection (the CLI) works at once, and a revoke there too", async () => {
    const { file, db } = fresh();
    const cli = stateDb(file);
    const other = new TokenStore(cli);
    const { token, info } = other.create({ principal: "carol", admin: false, now: 1 });
    expect(await bearer(db, token)).toEqual(Either.right(new Principal({ name: "carol", admin: false })));
    other.revoke(info.id, 2);
    cli.close();
    const after = await bearer(db, token);
    expect(Either.isLeft(after) && after.left.code).toBe("invalid_token");
  });
});
