// `lash loop`: the loops (scheduled agents) of a running `lash serve` daemon, through @lash/client.
//   lash loop list [--json]                      each loop: schedule, paused, next and last firing
//   lash loop firings <name> [--limit n] [--json] its firings, newest first
//   lash loop trigger <name> [--instruction …]   a manual firing (prints its key, session and run)
//   lash loop pause <name> | resume <name>       persisted on the daemon
// The daemon: --server / $LASH_SERVER_URL, --token / $LASH_SERVER_TOKEN (as `lash remote`).
import { parseArgs } from "node:util";
import { createClient, type Loop, type LoopFiring } from "@lash/client";
import { CliError, ExitCode, errorMessage, usageError } from "./errors.ts";
import type { MainIO } from "./io.ts";

const OPTIONS = {
  server: { type: "string" },
  token: { type: "string" },
  instruction: { type: "string" },
  limit: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const VERBS = ["list", "firings", "trigger", "pause", "resume"] as const;

export async function runLoop(argv: readonly string[], io: MainIO): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw usageError(`lash loop: ${errorMessage(e)} (see lash help loop)`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("loop"));
    return ExitCode.ok;
  }
  const [verb = "list", name, ...extra] = positionals;
  if (!(VERBS as readonly string[]).includes(verb))
    throw usageError(
      `lash loop ${verb}: unknown; use one of ${VERBS.join(", ")} (see lash help loop). To send it to the model as a prompt: lash -p "loop ${[verb, name, ...extra].filter(Boolean).join(" ")}"`,
    );
  if (verb !== "list" && name === undefined)
    throw usageError(`lash loop ${verb}: which loop? lash loop ${verb} <name> (lash loop list shows them)`);
  if (extra.length > 0 || (verb === "list" && name !== undefined))
    throw usageError(`lash loop ${verb}: unexpected ${[name, ...extra].filter(Boolean).join(" ")}`);
  if (values.instruction !== undefined && verb !== "trigger")
    throw usageError(`lash loop ${verb}: --instruction is for lash loop trigger`);
  const server = values.server ?? io.env.LASH_SERVER_URL;
  if (server === undefined || server === "")
    throw usageError(
      "lash loop: no daemon: pass --server http://127.0.0.1:<port> (or set LASH_SERVER_URL) — the URL `lash serve` prints",
    );
  const token = values.token ?? io.env.LASH_SERVER_TOKEN;
  const client = createClient({ baseUrl: server, ...(token ? { token } : {}) });
  const out = (v: unknown) => io.stdout.write(`${JSON.stringify(v)}\n`);
  try {
    switch (verb) {
      case "list": {
        const loops = await client.loops.list();
        if (values.json) out({ loops });
        else if (loops.length === 0)
          io.stdout.write(
            "no loops: give an agent schedule: and instruction: in its spec, run lash build and restart lash serve\n",
          );
        else for (const l of loops) io.stdout.write(`${loopLine(l)}\n`);
        return ExitCode.ok;
      }
      case "firings": {
        const limit = values.limit === undefined ? undefined : Number(values.limit);
        if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
          throw usageError(`lash loop firings: --limit ${values.limit}: give a positive integer`);
        const firings = await client.loops.firings(name!, limit === undefined ? {} : { limit });
        if (values.json) out({ firings });
        else for (const f of firings) io.stdout.write(`${firingLine(f)}\n`);
        return ExitCode.ok;
      }
      case "trigger": {
        const firing = await client.loops.trigger(
          name!,
          values.instruction === undefined ? {} : { instruction: values.instruction },
        );
        if (values.json) out(firing);
        else io.stdout.write(`triggered ${firing.key} (${firing.state})\n`);
        return ExitCode.ok;
      }
      default: {
        const loop = verb === "pause" ? await client.loops.pause(name!) : await client.loops.resume(name!);
        if (values.json) out(loop);
        else io.stdout.write(`${loopLine(loop)}\n`);
        return ExitCode.ok;
      }
    }
  } catch (e) {
    if (e instanceof CliError) throw e;
    const tag = (e as { _tag?: unknown })._tag;
    const code = (e as { code?: unknown }).code;
    throw new CliError(
      `lash loop: ${errorMessage(e)}${typeof tag === "string" && typeof code === "string" ? ` [${tag} ${code}]` : ""}`,
      tag === "Unauthorized" || tag === "BadRequest" || tag === "NotFound" ? ExitCode.usage : ExitCode.failed,
    );
  }
}

const iso = (ms: number | undefined) => (ms === undefined ? "-" : new Date(ms).toISOString());

const scheduleText = (s: unknown): string =>
  typeof s === "string"
    ? s
    : typeof s === "object" && s !== null && "every" in s
      ? `every ${(s as { every: string }).every}`
      : typeof s === "object" && s !== null && "cron" in s
        ? `${(s as { cron: string }).cron}${(s as { tz?: string }).tz ? ` (${(s as { tz?: string }).tz})` : ""}`
        : JSON.stringify(s);

function loopLine(l: Loop): string {
  const last = l.lastFiring ? `${l.lastFiring.key} ${l.lastFiring.state}` : "-";
  return `${l.name}  ${scheduleText(l.schedule)}  ${l.paused ? "paused" : "active"}  next ${l.paused ? "-" : iso(l.nextFiring)}  last ${last}`;
}

function firingLine(f: LoopFiring): string {
  return [
    f.key,
    f.kind,
    f.state,
    `attempts ${f.attempts}`,
    f.sessionId ? `session ${f.sessionId}` : "",
    f.runId ? `run ${f.runId}` : "",
    f.error ? `(${f.error.message})` : "",
  ]
    .filter(Boolean)
    .join("  ");
}
