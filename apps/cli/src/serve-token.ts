// `lash serve token create|list|revoke`: the bearer tokens of `lash serve`, kept (hashed) in
// the daemon's state file (`$LASH_HOME/serve.db`, or `--state <file>`). A new token is printed
// once, alone on stdout (so `TOKEN=$(lash serve token create --principal alice)` works); only
// its sha256 is stored. The daemon reads the table on every request: a revoked token stops
// working at once, without a restart.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { openStateDb, type TokenInfo, TokenStore } from "@lash/server";
import type Database from "better-sqlite3";
import { CliError, ExitCode, usageError } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { resolvePaths, serveStateFile } from "./paths.ts";

export const SERVE_TOKEN_HELP = `Usage: lash serve token <command> [options]

Bearer tokens for \`lash serve\` (each maps to a principal; only a token's sha256 is stored).

Commands:
  create --principal <name> [--admin]   create a token; it is printed once, alone on stdout
  list                                  id, principal, admin, created, last used, revoked (never the token)
  revoke <id>                           revoke a token (the daemon refuses it from the next request on)

Options:
  --state <file>   the daemon's state file (default: $LASH_HOME/serve.db, as \`lash serve\`)
  --json           machine-readable output (create, list)
  -h, --help       this help

Send a token as \`Authorization: Bearer <token>\`. An admin sees and answers every session and approval.
`;

/** `argv`: the words after `lash serve token`. */
export async function serveTokenCommand(argv: readonly string[], io: MainIO): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    throw usageError(`lash serve token: ${(e as Error).message}\n\n${SERVE_TOKEN_HELP}`);
  }
  const { values, positionals } = parsed;
  const [action, ...rest] = positionals;
  if (values.help || action === undefined || action === "help") {
    (action === undefined && !values.help ? io.stderr : io.stdout).write(SERVE_TOKEN_HELP);
    return action === undefined && !values.help ? ExitCode.usage : ExitCode.ok;
  }
  if (!["create", "list", "revoke"].includes(action))
    throw usageError(`lash serve token: unknown command "${action}" (create, list or revoke)`);
  const file = values.state
    ? resolve(values.state)
    : serveStateFile(resolvePaths(io.env, process.cwd()).home);
  const now = Date.now();
  const db = open(file);
  try {
    const tokens = new TokenStore(db);
    switch (action) {
      case "create": {
        if (rest.length > 0) throw usageError(`lash serve token create: unexpected argument "${rest[0]}"`);
        const principal = values.principal;
        if (principal === undefined)
          throw usageError(
            "lash serve token create: --principal <name> is required (e.g. --principal alice)",
          );
        let created: ReturnType<TokenStore["create"]>;
        try {
          created = tokens.create({ principal, admin: values.admin === true, now });
        } catch (e) {
          throw usageError(`lash serve token create: ${(e as Error).message}`);
        }
        const { token, info } = created;
        if (values.json) io.stdout.write(`${JSON.stringify({ ...info, token })}\n`);
        else {
          io.stdout.write(`${token}\n`);
          io.stderr.write(
            `created token ${info.id} for principal ${info.principal}${info.admin ? " (admin)" : ""} in ${file}.\n` +
              "It is shown only this once (only its sha256 is stored): send it as `Authorization: Bearer <token>`.\n",
          );
        }
        return ExitCode.ok;
      }
      case "list": {
        if (rest.length > 0) throw usageError(`lash serve token list: unexpected argument "${rest[0]}"`);
        const all = tokens.list();
        if (values.json) io.stdout.write(`${JSON.stringify({ tokens: all })}\n`);
        else io.stdout.write(table(all));
        return ExitCode.ok;
      }
      default: {
        const [id, extra] = rest;
        if (id === undefined)
          throw usageError("lash serve token revoke: name the token id (see `lash serve token list`)");
        if (extra !== undefined) throw usageError(`lash serve token revoke: unexpected argument "${extra}"`);
        const info = tokens.list().find((t) => t.id === id);
        if (!tokens.revoke(id, now))
          throw new CliError(
            info
              ? `lash serve token revoke: token ${id} is already revoked`
              : `lash serve token revoke: no token ${JSON.stringify(id)} in ${file}; \`lash serve token list\` shows the ids`,
            ExitCode.failed,
          );
        io.stdout.write(`revoked token ${id} (principal ${info?.principal ?? "?"})\n`);
        return ExitCode.ok;
      }
    }
  } finally {
    db.close();
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      principal: { type: "string" },
      admin: { type: "boolean" },
      state: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: true,
  });
}

/** The state db, opened as the daemon opens it (WAL, busy timeout, schema check): the two share it. */
function open(file: string): Database.Database {
  try {
    return openStateDb(file);
  } catch (e) {
    throw new CliError(
      `${(e as Error).message.replace(/^lash serve:/, "lash serve token:")}`,
      ExitCode.failed,
    );
  }
}

const when = (ms: number | undefined): string => (ms === undefined ? "-" : new Date(ms).toISOString());

function table(tokens: readonly TokenInfo[]): string {
  if (tokens.length === 0) return "no tokens: create one with `lash serve token create --principal <name>`\n";
  const rows = [
    ["ID", "PRINCIPAL", "ADMIN", "CREATED", "LAST USED", "REVOKED"],
    ...tokens.map((t) => [
      t.id,
      t.principal,
      t.admin ? "yes" : "no",
      when(t.createdAt),
      when(t.lastUsedAt),
      when(t.revokedAt),
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return `${rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}
