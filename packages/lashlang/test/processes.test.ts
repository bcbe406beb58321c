import { describe, expect, it } from "vitest";
import {
  type LashlangHost,
  LashlangState,
  type ProcessEvent,
  ProcessRuntime,
  runCell,
} from "../src/index.ts";

const ABILITIES = { abilities: { processes: true, sleep: true, processSignals: true } };

function hostWithLog() {
  const calls: string[] = [];
  let inFlight = 0;
  let peak = 0;
  const gates: (() => void)[] = [];
  const host: LashlangHost = {
    call: async (c) => {
      calls.push(`${c.module}.${c.operation}:${c.id}`);
      inFlight++;
      peak = Math.max(peak, inFlight);
      // both processes are in a call before either returns: answered when two are waiting
      if (c.operation === "gate") {
        await new Promise<void>((r) => {
          gates.push(r);
          if (gates.length === 2) for (const g of gates.splice(0)) g();
        });
      }
      inFlight--;
      return { ok: true, value: (c.args as { [k: string]: unknown }).value ?? null } as never;
    },
  };
  return { host, calls, peak: () => peak };
}

async function run(source: string, inner: LashlangHost, events: ProcessEvent[] = []) {
  const rt = new ProcessRuntime(inner, { onEvent: (e) => events.push(e) });
  const r = await runCell(new LashlangState(), source, rt.forCell(source), {
    checkOptions: ABILITIES,
    check: false,
  });
  await rt.settle();
  return r;
}

describe("processes run by the host", () => {
  it("start runs the declared body concurrently; await gives result wrappers in order", async () => {
    const { host, calls, peak } = hostWithLog();
    const events: ProcessEvent[] = [];
    const r = await run(
      `
      process work(x: str) {
        yield { step: x }
        v = await tools.gate({ value: x })?
        finish v + "!"
      }
      a = start work(x: "a")
      b = start work(x: "b")
      rs = await [a, b]
      finish { left: rs[0], right: rs[1] }
      `,
      host,
      events,
    );
    expect(r.error).toBeUndefined();
    expect(r.value).toEqual({ left: { ok: true, value: "a!" }, right: { ok: true, value: "b!" } });
    expect(peak()).toBe(2);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatch(/^tools\.gate:lashlang:.*process:work/);
    expect(events.filter((e) => e.kind === "yield").map((e) => e.value)).toEqual([
      { step: "a" },
      { step: "b" },
    ]);
  });

  it("fail, a runtime error and falling off the end", async () => {
    const { host } = hostWithLog();
    const r = await run(
      `
      process bad() { fail "nope" }
      process crash() { x = "a" - 1 }
      process quiet() { y = 1 }
      rs = await [start bad(), start crash(), start quiet()]
      finish rs
      `,
      host,
    );
    expect(r.error).toBeUndefined();
    const v = r.value as { ok: boolean; error?: string; value?: unknown }[];
    expect(v[0]).toEqual({ ok: false, error: "nope" });
    expect(v[1]!.ok).toBe(false);
    expect(v[2]).toEqual({ ok: true, value: null });
  });

  it("signals are typed by the signals block; cancel ends a waiting run", async () => {
    const { host } = hostWithLog();
    const r = await run(
      `
      process waiter() signals { go: int } {
        n = wait_signal("go")
        finish n * 2
      }
      process stuck() signals { go: int } { finish wait_signal("go") }
      h = start waiter()
      signal_run(h, "go", 21)
      s = start stuck()
      cancel s
      finish { r: await h, s: await s }
      `,
      host,
    );
    expect(r.error).toBeUndefined();
    const v = r.value as { [k: string]: { ok: boolean; error?: string; value?: unknown } };
    expect(v.r).toEqual({ ok: true, value: 42 });
    expect(v.s!.ok).toBe(false);
    expect(v.s!.error).toContain("cancelled");
  });

  it("a payload of the wrong type or an undeclared signal is an error naming the signals block", async () => {
    const { host } = hostWithLog();
    const src = (sig: string, payload: string) => `
      process waiter() signals { go: int } { finish wait_signal("go") }
      h = start waiter()
      signal_run(h, "${sig}", ${payload})
      `;
    const wrong = await run(src("go", '"x"'), host);
    expect(wrong.error?.message).toContain("signal `go` of process `waiter`");
    const missing = await run(src("stop", "1"), host);
    expect(missing.error?.message).toContain("declares no signal `stop` (its signals: go)");
  });

  it("a run parked in wait_signal is cancelled when the cell has ended and nothing can signal it", async () => {
    const { host } = hostWithLog();
    const rt = new ProcessRuntime(host);
    const src = `process w() signals { go: int } { finish wait_signal("go") }
      h = start w()`;
    await runCell(new LashlangState(), src, rt.forCell(src), { check: false });
    await rt.settle();
    const [only] = [...rt.runs.values()];
    expect(await only!.result).toEqual({
      ok: false,
      error:
        "cancelled: the cell that started it ended while it waited for signal `go` and nothing else can send one",
    });
  });

  it("sleep for a duration string and until a time; a bad duration names the accepted forms", async () => {
    const { host } = hostWithLog();
    const r = await run(
      `
      process nap() { sleep for "5ms"
        sleep until 0
        finish "up" }
      process bad() { sleep for "soon" }
      finish await [start nap(), start bad()]
      `,
      host,
    );
    const v = r.value as { ok: boolean; error?: string; value?: unknown }[];
    expect(v[0]).toEqual({ ok: true, value: "up" });
    expect(v[1]!.error).toContain('"5s"');
  });
});
