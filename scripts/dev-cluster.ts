// `pnpm dev:cluster [workers]`: a local lash cluster on Restate — Postgres 15 (initdb + pg_ctl on
// a loopback port in a temp dir, `@lash/store-postgres/testing`), restate-server (npm binary,
// Business Source License) in a temp dir, N lash worker processes behind it sharing the Postgres
// store, and the mock wire server as the model (a demo: every turn calls one tool, then answers).
// Without Postgres 15 on the machine it says so and the workers share a SQLite file instead.
// Prints the URLs and how to submit a turn; Ctrl-C stops everything.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdGenerator, LashRuntime, LlmProviders, ModelCatalog, SqliteStore, textOutput } from "@lash/core";
import { createProvider } from "@lash/providers";
import { startMockServer } from "@lash/providers/testing";
import { registerDeployment, startRestateServer, startRestateWorker } from "@lash/restate";
import { PostgresStore } from "@lash/store-postgres";
import { postgresUnavailable, startPostgres } from "@lash/store-postgres/testing";
import { Effect, Layer, ManagedRuntime } from "effect";

/** `db`: a `postgres://…` URL or a SQLite file. */
const services = (db: string, baseUrl: string) =>
  Layer.mergeAll(
    db.startsWith("postgres://") ? PostgresStore.layer({ url: db }) : SqliteStore.layer({ filename: db }),
    LlmProviders.single(createProvider("openai-compatible/mock", { baseUrl, apiKey: "mock", retry: false })),
    IdGenerator.Live,
    ModelCatalog.Empty,
  );

async function worker(db: string, baseUrl: string, adminUrl: string) {
  const w = await startRestateWorker({
    services: services(db, baseUrl),
    runtime: {
      plugins: [
        {
          name: "demo",
          tools: [
            {
              name: "echo",
              description: "Echoes its text.",
              inputSchema: { type: "object", properties: { text: { type: "string" } } },
              execute: (args) => Effect.succeed(textOutput(String((args as { text?: string }).text ?? ""))),
            },
          ],
        },
      ],
    },
    adminUrl,
  });
  process.stdout.write(`${w.url}\n`);
  process.on("SIGTERM", () => void w.close().then(() => process.exit(0)));
}

async function main() {
  const n = Math.max(1, Number(process.argv[2] ?? "2"));
  const dir = mkdtempSync(join(tmpdir(), "lash-cluster-"));
  if (postgresUnavailable)
    process.stdout.write(`${postgresUnavailable}\nThe workers share a SQLite file instead.\n`);
  const pg = postgresUnavailable ? undefined : await startPostgres();
  const db = pg ? pg.createDatabase("lash") : join(dir, "lash.db");
  const mock = await startMockServer({
    responder: (r) => {
      const messages = (r.body as { messages: { role: string }[] }).messages;
      return messages.at(-1)?.role === "tool"
        ? { text: "done" }
        : { toolCalls: [{ name: "echo", arguments: { text: "hello" } }] };
    },
  });
  const restate = await startRestateServer({ dir: join(dir, "restate"), fastRetries: false });
  const baseUrl = mock.baseUrl("openai-chat");
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  for (let i = 0; i < n; i++) {
    const child = spawn(process.execPath, [import.meta.filename, "--worker", db, baseUrl, restate.adminUrl], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    urls.push(
      await new Promise<string>((resolve) =>
        child.stdout!.once("data", (d: Buffer) => resolve(d.toString().trim())),
      ),
    );
  }
  // the last registration wins for new invocations; a load balancer in front of the workers,
  // registered once (registerDeployment), spreads them — see packages/restate/README.md
  await registerDeployment(restate.adminUrl, urls.at(-1)!);
  const local = ManagedRuntime.make(LashRuntime.layer().pipe(Layer.provide(services(db, baseUrl))));
  const session = await local.runPromise(
    Effect.flatMap(LashRuntime, (rt) => rt.createSession({ model: "openai-compatible/mock" })),
  );
  process.stdout.write(
    [
      `restate ingress  ${restate.ingressUrl}`,
      `restate admin    ${restate.adminUrl}`,
      `workers          ${urls.join("  ")}`,
      `store            ${pg ? `${db} (Postgres 15, data in a temp dir)` : `${db} (SQLite)`}`,
      `model            ${baseUrl} (mock wire server)`,
      `session          ${session.id}`,
      "",
      "submit a turn:",
      `  curl -s ${restate.ingressUrl}/LashSession/${session.id}/turn -H 'content-type: application/json' \\`,
      `    -H 'idempotency-key: ${session.id}:t1' -d '{"turnId":"${session.id}-t1","text":"hi"}'`,
      "",
      "Ctrl-C stops everything.",
      "",
    ].join("\n"),
  );
  const stop = async () => {
    // the workers keep nothing in memory that matters: Restate and the store hold the state
    for (const c of children) c.kill("SIGKILL");
    await local.dispose();
    await restate.stop();
    pg?.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
}

if (process.argv[2] === "--worker") {
  const [db, baseUrl, adminUrl] = process.argv.slice(3) as [string, string, string];
  void worker(db, baseUrl, adminUrl);
} else void main();
