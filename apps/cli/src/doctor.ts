// `lash doctor`: can lash run a turn here? Node, config, database, provider keys, MCP servers, features.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { checkSqliteFile, LashRuntime, recoverSqliteFile, type SqliteRecovery } from "@lash/core";
import { Effect } from "effect";
import { storeContext } from "./commands.ts";
import { loadConfig } from "./config.ts";
import { CliError, ExitCode, errorMessage } from "./errors.ts";
import { loadTui } from "./interactive.ts";
import type { MainIO } from "./io.ts";
import { mcpServers, startMcp } from "./mcp.ts";
import { resolvePaths } from "./paths.ts";
import { chooseModel, VENDOR_ENV, type Vendor, vendorOf } from "./providers.ts";
import { resolveCwd } from "./setup.ts";

/** The Codex sign-in in $LASH_HOME/auth.json: who, until when — never a token. */
async function codexSignIn(home: string): Promise<["ok" | "info" | "warn", string]> {
  const file = join(home, "auth.json");
  const { readCodexTokens } = await import("@lash/providers");
  const { describeSignIn } = await import("./login.ts");
  try {
    const t = readCodexTokens(file);
    if (!t) return ["info", "not signed in (`lash login codex` signs in with a ChatGPT plan)"];
    return ["ok", `${describeSignIn(t)} (${file})`];
  } catch (e) {
    return ["warn", errorMessage(e)];
  }
}

interface Check {
  readonly name: string;
  readonly status: "ok" | "warn" | "fail" | "info";
  readonly detail: string;
}

const MIN_NODE = [22, 12] as const;

export async function runDoctor(
  command: { readonly json: boolean; readonly cwd?: string; readonly repair?: boolean },
  io: MainIO,
): Promise<number> {
  const checks: Check[] = [];
  const add = (name: string, status: Check["status"], detail: string) =>
    checks.push({ name, status, detail });

  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  const nodeOk = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  add(
    "node",
    nodeOk ? "ok" : "fail",
    `${process.versions.node}${nodeOk ? "" : ` (lash needs ≥ ${MIN_NODE.join(".")} with TypeScript type stripping)`}`,
  );

  const cwd = resolveCwd(command.cwd);
  const paths = resolvePaths(io.env, cwd);
  let config = {};
  let configOk = true;
  try {
    const loaded = loadConfig(paths.config, paths.projectConfig);
    config = loaded.config;
    add("config", "ok", loaded.files.length ? loaded.files.join(", ") : `none (${paths.config} is optional)`);
  } catch (e) {
    configOk = false;
    add("config", "fail", errorMessage(e));
  }

  let dbOk = false;
  // SQLite's own check of every page first: a damaged page does not stop the file from opening
  let repair: SqliteRecovery | undefined;
  const damage = existsSync(paths.db) ? checkSqliteFile(paths.db) : { ok: true, problems: [] };
  if (!damage.ok && command.repair) {
    try {
      repair = recoverSqliteFile(paths.db, new Date());
      const lost = repair.tables.filter((t) => t.damaged > 0).map((t) => t.table);
      add(
        "repair",
        "ok",
        `recovered ${repair.sessions} sessions (${repair.tables.map((t) => `${t.table} ${t.rows}`).join(", ")} rows) into ${paths.db}` +
          `${lost.length ? `; damage stopped the reading of ${lost.join(", ")} (rows on damaged pages are lost)` : ""}` +
          `${repair.incomplete ? `; ${repair.incomplete} of the sessions lost part of their history (\`lash sessions show\` tells which)` : ""}` +
          `; the damaged file is kept as ${repair.damagedCopy}`,
      );
    } catch (e) {
      add("repair", "fail", `${errorMessage(e)}; ${paths.db} is unchanged`);
    }
  } else if (command.repair) add("repair", "info", `${paths.db} passed SQLite's check: nothing to repair`);
  const afterRepair = repair ? checkSqliteFile(paths.db) : damage;
  if (!afterRepair.ok) {
    const shown = afterRepair.problems.slice(0, 5).join("; ");
    const more = afterRepair.problems.length > 5 ? ` (+${afterRepair.problems.length - 5} more)` : "";
    add(
      "database",
      "fail",
      `${paths.db} is damaged: ${shown}${more}. Run \`lash doctor --repair\` to copy what is readable into a new file (the damaged one is kept beside it)`,
    );
  } else {
    try {
      const { SQLITE_SCHEMA_VERSION } = await import("@lash/core");
      const ctx = await storeContext(io.env, command.cwd);
      try {
        const sessions = await ctx.rt.runPromise(
          Effect.flatMap(LashRuntime, (rt) => rt.listSessions({ limit: 1_000_000 })),
        );
        add(
          "database",
          "ok",
          `${paths.db} opens (schema v${SQLITE_SCHEMA_VERSION}); ${sessions.length} sessions`,
        );
        dbOk = true;
      } finally {
        await ctx.close();
      }
    } catch (e) {
      add("database", "fail", e instanceof CliError ? e.message : `${paths.db}: ${errorMessage(e)}`);
    }
  }

  for (const vendor of Object.keys(VENDOR_ENV) as Vendor[]) {
    const spec = VENDOR_ENV[vendor];
    if (vendor === "codex") {
      add("provider codex", ...(await codexSignIn(paths.home)));
      continue;
    }
    const names = vendor === "openai-compatible" ? [spec.baseUrl] : spec.keys;
    if (
      (vendor === "bedrock" || vendor === "vertex-anthropic") &&
      !names.some((k) => (io.env[k]?.trim() ?? "") !== "")
    ) {
      add(
        `provider ${vendor}`,
        "info",
        vendor === "bedrock"
          ? `${names.join(" or ")} not set: AWS credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE, SSO, instance role) are used if any (not checked here)`
          : `${names.join(" or ")} not set: Google Application Default Credentials are used if any (not checked here)`,
      );
      continue;
    }
    const found = names.filter((k) => (io.env[k]?.trim() ?? "") !== "");
    add(
      `provider ${vendor}`,
      found.length ? "ok" : "info",
      found.length ? `${found.join(", ")} set` : `${names.join(" or ")} not set`,
    );
  }

  let providerOk = false;
  const choice = configOk ? chooseModel(undefined, io.env, config) : undefined;
  if (!choice) add("model", "fail", "no model: set a provider key (see above) or run `lash demo`");
  else {
    try {
      const { createProvider } = await import("@lash/providers");
      const vendor = vendorOf(choice.model);
      const baseUrl = vendor
        ? (config as { providers?: Record<string, { baseUrl?: string }> }).providers?.[vendor]?.baseUrl
        : undefined;
      const p = createProvider(choice.model, {
        env: io.env,
        authFile: join(paths.home, "auth.json"),
        ...(baseUrl ? { baseUrl } : {}),
      });
      providerOk = true;
      add(
        "model",
        p.warnings.length ? "warn" : "ok",
        `${choice.model} (from ${choice.source})${p.warnings.length ? `: ${p.warnings.join("; ")}` : ""}`,
      );
    } catch (e) {
      add("model", "fail", `${choice.model}: ${errorMessage(e)}`);
    }
  }

  const servers = configOk ? mcpServers(config) : [];
  if (servers.length === 0) add("mcp", "info", "no MCP servers configured");
  else {
    // start them as a session would, and wait (bounded) for each to be ready or to fail
    try {
      const mcp = await startMcp(config, io.env);
      try {
        await mcp.settle(15_000);
        for (const s of mcp.status())
          add(
            `mcp ${s.name}`,
            s.state === "ready" ? "ok" : s.state === "disabled" ? "info" : "fail",
            `${s.transport} · ${s.state}${s.state === "ready" ? ` · ${s.toolCount} tools` : ""}${s.reason ? ` · ${s.reason}` : ""}${(s.skippedTools ?? []).map((t) => ` · tool "${t.name}" skipped: ${t.reason}`).join("")}`,
          );
      } finally {
        await mcp.close();
      }
    } catch (e) {
      add("mcp", "fail", errorMessage(e));
    }
  }

  if (configOk) {
    const { policyOf } = await import("./policy.ts");
    const { sandboxCheck } = await import("./sandbox.ts");
    const sandbox = sandboxCheck(policyOf(config));
    add("sandbox", sandbox.status, sandbox.detail);
  }

  add(
    "tui",
    (await loadTui()) ? "ok" : "warn",
    (await loadTui()) ? "available" : "not in this build (lash -p works)",
  );

  const ready = nodeOk && configOk && dbOk && providerOk;
  if (command.json)
    io.stdout.write(`${JSON.stringify({ ready, checks, ...(repair ? { repair } : {}) }, null, 2)}\n`);
  else {
    const mark = { ok: "✓", warn: "!", fail: "✗", info: "·" } as const;
    const width = Math.max(...checks.map((c) => c.name.length));
    for (const c of checks) io.stdout.write(`${mark[c.status]} ${c.name.padEnd(width)}  ${c.detail}\n`);
    io.stdout.write(
      ready
        ? '\nlash is ready: run `lash` (interactive) or `lash -p "…"`.\n'
        : "\nlash cannot run a turn yet: fix the ✗ lines above (or try `lash demo`).\n",
    );
  }
  return ready ? ExitCode.ok : ExitCode.failed;
}
