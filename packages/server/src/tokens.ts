// Bearer tokens of `lash serve`, in the daemon's state db (table `tokens`). A token is
// `lash_` + 32 random bytes (base64url), shown once when it is created; only its sha256
// is stored. Checking a token compares its hash with every live token's hash in constant
// time (no early exit, no lookup by the secret), so response times say nothing about how
// close a guess was. Plain synchronous code: the CLI (`lash serve token …`) and the
// daemon's auth middleware share it.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { sha256Hex } from "@lash/sansio";
import type Database from "better-sqlite3";
import { Principal } from "./api.ts";

/** A token as `lash serve token list` shows it: never the token itself. */
export interface TokenInfo {
  readonly id: string;
  readonly principal: string;
  readonly admin: boolean;
  /** epoch ms */
  readonly createdAt: number;
  readonly lastUsedAt?: number;
  readonly revokedAt?: number;
}

export const TOKEN_PREFIX = "lash_";

/** A principal name: letters, digits, `.`, `_`, `-`, `@` (1–64 characters). */
export const PRINCIPAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

interface Row {
  readonly id: string;
  readonly principal: string;
  readonly admin: number;
  readonly hash: string;
  readonly created_at: number;
  readonly last_used_at: number | null;
  readonly revoked_at: number | null;
}

/** 1 when the two hex digests are equal, compared in constant time (different lengths: not equal). */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  // equal lengths are required by timingSafeEqual; a sha256 hex digest is always 64 characters
  if (x.length !== y.length) return false;
  return timingSafeEqual(x, y);
}

const hashOf = (token: string): string => sha256Hex(token);

/** The token table of a state db (created when missing). */
export class TokenStore {
  readonly #db: Database.Database;
  readonly #live: Database.Statement<[], Row>;
  readonly #touch: Database.Statement<[number, string]>;

  constructor(db: Database.Database) {
    this.#db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS tokens (
      id TEXT PRIMARY KEY,
      principal TEXT NOT NULL,
      admin INTEGER NOT NULL,
      hash TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER,
      revoked_at INTEGER
    )`);
    this.#live = db.prepare("SELECT * FROM tokens WHERE revoked_at IS NULL");
    this.#touch = db.prepare("UPDATE tokens SET last_used_at = ? WHERE id = ?");
  }

  /** A new token for `principal`: the token (shown once, never stored) and its record. */
  create(input: { readonly principal: string; readonly admin: boolean; readonly now: number }): {
    readonly token: string;
    readonly info: TokenInfo;
  } {
    if (!PRINCIPAL_NAME.test(input.principal))
      throw new Error(
        `invalid principal name ${JSON.stringify(input.principal)}: use 1-64 letters, digits, ".", "_", "-" or "@", starting with a letter or digit (e.g. --principal alice)`,
      );
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const id = `tok_${randomBytes(6).toString("hex")}`;
    this.#db
      .prepare("INSERT INTO tokens (id, principal, admin, hash, created_at) VALUES (?, ?, ?, ?, ?)")
      .run(id, input.principal, input.admin ? 1 : 0, hashOf(token), input.now);
    return { token, info: { id, principal: input.principal, admin: input.admin, createdAt: input.now } };
  }

  /** Every token (revoked ones too), oldest first. */
  list(): readonly TokenInfo[] {
    const rows = this.#db.prepare("SELECT * FROM tokens ORDER BY created_at, id").all() as Row[];
    return rows.map(infoOf);
  }

  /** Revoke a token by id: `false` when there is no such token (or it was revoked already). */
  revoke(id: string, now: number): boolean {
    return (
      this.#db.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(now, id)
        .changes > 0
    );
  }

  /**
   * The principal of a presented token, or `undefined` for an unknown or revoked one.
   * Every live token's hash is compared (constant time each, no early exit).
   */
  verify(token: string, now: number): Principal | undefined {
    const hash = hashOf(token);
    let found: Row | undefined;
    for (const row of this.#live.all()) if (hashesEqual(row.hash, hash) && found === undefined) found = row;
    if (found === undefined) return undefined;
    // "last used" to the second: not one write per request
    if (found.last_used_at === null || now - found.last_used_at >= 1000) this.#touch.run(now, found.id);
    return new Principal({ name: found.principal, admin: found.admin === 1 });
  }
}

function infoOf(row: Row): TokenInfo {
  return {
    id: row.id,
    principal: row.principal,
    admin: row.admin === 1,
    createdAt: row.created_at,
    ...(row.last_used_at !== null ? { lastUsedAt: row.last_used_at } : {}),
    ...(row.revoked_at !== null ? { revokedAt: row.revoked_at } : {}),
  };
}
