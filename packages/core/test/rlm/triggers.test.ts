// The `triggers` ability in a real RLM turn: `cron.Schedule` sources, `triggers.register` stored in
// the session record (its RLM state) with the declaring cell content-addressed, registration errors
// the model can act on, and a firing that runs the target process with `trigger.event`.

import { it as eff } from "@effect/vitest";
import type { LlmEvent } from "@lash/sansio";
import { Deferred, Effect, TestClock } from "effect";
import { describe, expect, it } from "vitest";
import {
  dueFirings,
  rlmMode,
  runTriggerProcess,
  type TriggerRecord,
  triggerScheduler,
  withRlm,
} from "../../src/index.ts";
import { say, scriptedProvider, withRuntime } from "../support.ts";

const cell = (code: string): LlmEvent[] => say(`<lashlang>\n${code}\n</lashlang>`);

const REGISTER = `process report(event: any, label: str) {
  finish { label: label, at: event.scheduled_at }
}
src = cron.Schedule({ cron: "0 9 * * *", timezone: "UTC" })
bad = await triggers.register({ source: src, target: "report", inputs: { event: trigger.event } })
missing = await triggers.register({ source: src, target: "nope", inputs: {} })
r = await triggers.register({ source: src, target: "report", inputs: { event: trigger.event, label: "daily" }, name: "daily" })?
finish { bad: bad.error, missing: missing.error, r: r, list: await triggers.list()? }`;

describe("rlm triggers", () => {
  it("register stores the trigger in the session; a firing runs the target process with the event", async () => {
    const provider = scriptedProvider([cell(REGISTER)]);
    const { t, stored } = await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const t = yield* rt.turn(s.id, { text: "every morning, report" });
            const rec = yield* rt.getSession(s.id);
            return { t, stored: (rec.state.rlm as { triggers?: TriggerRecord[] }).triggers };
          }),
        withRlm({}, rlmMode({ triggers: true })),
      ),
    );
    const v = t.finalValue as {
      bad: string;
      missing: string;
      r: { id: string; next_fire: string };
      list: unknown[];
    };
    expect(v.bad).toContain("input `label` of process `report` is not mapped");
    expect(v.missing).toContain("no process `nope` is declared in this cell");
    expect(v.r.id).toMatch(/^trg_/);
    expect(v.r.next_fire).toMatch(/T09:00:00\.000Z$/);
    expect(v.list).toHaveLength(1);
    // stored in the session record, with the cell content-addressed
    expect(stored).toHaveLength(1);
    const rec = stored![0]!;
    expect(rec).toMatchObject({ name: "daily", target: "report", enabled: true });
    expect(rec.module_ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(rec.module).toContain("process report(");

    const day = Date.UTC(2030, 0, 1);
    const due = dueFirings(stored!, day, day + 2 * 86_400_000);
    expect(due.map((d) => new Date(d.at).toISOString())).toEqual([
      "2030-01-01T09:00:00.000Z",
      "2030-01-02T09:00:00.000Z",
    ]);
    const out = await runTriggerProcess(rec, due[0]!.at, {
      call: async () => ({ ok: false, error: "no tools" }),
    });
    expect(out).toEqual({ ok: true, value: { label: "daily", at: "2030-01-01T09:00:00.000Z" } });
  });

  it("without the option the catalog has no triggers module and the cell's check names it", async () => {
    const provider = scriptedProvider([cell('x = cron.Schedule({ cron: "* * * * *" })'), say("ok")]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            yield* rt.turn(s.id, { text: "go" });
          }),
        withRlm({}),
      ),
    );
    expect(provider.requests[0]!.system).not.toContain("triggers.register");
    const seen = provider.requests[1]!.messages.flatMap((m) =>
      m.parts.map((p) => (p.type === "text" ? p.text : "")),
    );
    expect(seen.join("\n")).toContain("unknown module `cron`");
  });
});

describe("the in-process trigger scheduler (TestClock)", () => {
  eff.effect("fires each registration at its cron times, once per firing", () =>
    Effect.gen(function* () {
      const module = `process tick(event: any) { finish event.scheduled_at }`;
      const record: TriggerRecord = {
        id: "trg_1",
        name: "tick",
        source: { __trigger_source__: "cron", cron: "*/10 * * * *" },
        target: "tick",
        inputs: { event: { __trigger_event__: true } },
        module_ref: "sha256:x",
        module,
        enabled: true,
      };
      const fired: unknown[] = [];
      const done = yield* Deferred.make<void>();
      yield* TestClock.setTime(Date.UTC(2030, 0, 1, 0, 1));
      yield* Effect.forkScoped(
        triggerScheduler({
          records: () => [record],
          host: () => ({ call: async () => ({ ok: false, error: "no tools" }) }),
          onFired: (_r, _at, result) => {
            fired.push(result);
            if (fired.length === 2) Effect.runSync(Deferred.succeed(done, undefined));
          },
        }),
      );
      yield* TestClock.adjust("9 minutes");
      yield* TestClock.adjust("10 minutes");
      yield* Deferred.await(done);
      expect(fired).toEqual([
        { ok: true, value: "2030-01-01T00:10:00.000Z" },
        { ok: true, value: "2030-01-01T00:20:00.000Z" },
      ]);
    }).pipe(Effect.scoped),
  );
});
