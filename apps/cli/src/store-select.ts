// Which SessionStore the CLI and the daemon open: `--store` / config `store`.
//   (absent) or "sqlite"          the default: one SQLite file, $LASH_HOME/lash.db
//   postgres://… / postgresql://… @lash/store-postgres (loaded only when chosen)
import { usageError } from "./errors.ts";

export type StoreChoice = { readonly kind: "sqlite" } | { readonly kind: "postgres"; readonly url: string };

/** Parse a `--store` / config `store` value; a bad one is a usage error naming the forms. */
export function checkStoreSetting(value: string, where: string): { setting: string; choice: StoreChoice } {
  const v = value.trim();
  if (v === "" || v === "sqlite") return { setting: "sqlite", choice: { kind: "sqlite" } };
  if (/^postgres(ql)?:\/\//i.test(v)) {
    try {
      new URL(v);
    } catch {
      throw usageError(
        `${where}: ${redactStoreUrl(v)} is not a valid URL; write postgres://user:password@host:5432/database`,
      );
    }
    return { setting: v, choice: { kind: "postgres", url: v } };
  }
  throw usageError(
    `${where}: "${redactStoreUrl(v)}" is not a store; use postgres://user:password@host:5432/database (a shared Postgres store) or "sqlite" (the default, one file in LASH_HOME)`,
  );
}

/** A store URL as messages may show it: the password replaced. */
export function redactStoreUrl(value: string): string {
  return value.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, "$1***@");
}
