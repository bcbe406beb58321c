// Issue 21: `lash serve` fires the triggers RLM sessions register. A scripted RLM turn (the mock
// wire server as the model) declares a process and registers it on an every-second cron; the daemon
// reads the registration from the session and fires it as a run of that session, whose turn runs
// the target process with the firing as its input — without a model call (the mock's request log
// stays at one request). Each firing is claimed once in the state db (`trigger_firings`).
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cell } from "./rlm-support.ts";
import { api, readSse, type SseEvent, serveTests } from "./serve-support.ts";

const t = serveTests();
const Database = createRequire(join(import.meta.dirname, "../../packages/server/package.json"))(
  "better-sqlite3",
) as new (
  file: string,
  o: { readonly: boolean },
) => { prepare(sql: string): { all(): { key: string; run_id: string | null }[] }; close(): void };

const REGISTER = `process tick(event: any, label: str) {
  finish { label: label, at: event.scheduled_at, source: event.source }
}
src = cron.Schedule({ cron: "* * * * * *" })
r = await triggers.register({ source: src, target: "tick", inputs: { event: trigger.event, label: "hi" }, name: "every-second" })?
finish r.name`;

describe("lash serve fires RLM triggers", () => {
  it("a registered every-second trigger runs its target process as a run of the session, with no model call", async () => {
    const sb = await t.sandbox([cell(REGISTER)]);
    const daemon = await t.daemon(sb);
    const created = await api(daemon.url, "POST", "/v1/sessions", { mode: "rlm" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const started = await api(daemon.url, "POST", `/v1/sessions/${id}/turns`, { text: "tick every second" });
    expect(started.status).toBe(202);
    const first = started.body.id as string;

    // the session's event stream: read until a run other than the registering one has finished
    let fired: SseEvent | undefined;
    await readSse(`${daemon.url}/v1/sessions/${id}/events`, {
      onEvent: (e) => {
        const runId = (e.data as { runId?: string }).runId;
        if (e.event === "runFinished" && runId !== undefined && runId !== first) {
          fired = e;
          return false; // stop reading
        }
        return undefined;
      },
    });
    const firing = (fired!.data as { runId: string }).runId;
    const run = (await api(daemon.url, "GET", `/v1/runs/${firing}`)).body;
    expect(run.state).toBe("completed");
    expect(run.input).toMatch(/^lash:trigger-firing \{"trigger":"[^"]+","scheduled_at":"[^"]+"\}$/);
    const scheduledAt = JSON.parse((run.input as string).slice("lash:trigger-firing ".length)).scheduled_at;
    // the target's result wrapper is the firing run's value: its inputs, the firing as `event`
    expect(run.outcome).toEqual({
      type: "finished",
      finish: {
        kind: "finalValue",
        value: { ok: true, value: { label: "hi", at: scheduledAt, source: "cron" } },
      },
    });
    // the registering turn was the only model call
    expect((await api(daemon.url, "GET", `/v1/runs/${first}`)).body.state).toBe("completed");
    expect(sb.server.requests).toHaveLength(1);

    // the firing was claimed once, under its dedup key, and names its run
    const db = new Database(join(sb.home, "serve.db"), { readonly: true });
    const rows = db.prepare("SELECT key, run_id FROM trigger_firings").all();
    db.close();
    const mine = rows.filter((r) => r.run_id === firing);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.key).toBe(`${id}/${JSON.parse((run.input as string).slice(20)).trigger}@${scheduledAt}`);
  });
});
