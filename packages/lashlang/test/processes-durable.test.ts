// Process runs that outlive their cell, run records, and the journaled signal log (issue 21).
// `record` here is a durable-host stand-in: a Map that answers a label it has seen with the value
// recorded the first time (what core's RLM executor does with the effect journal).
import { describe, expect, it } from "vitest";
import {
  type CellProcessContext,
  type Json,
  type LashlangHost,
  LashlangState,
  ProcessRuntime,
  runCell,
} from "../src/index.ts";

const OPTS = {
  checkOptions: { abilities: { processes: true, sleep: true, processSignals: true } },
  check: false,
};

const host: LashlangHost = {
  call: async (c) => ({ ok: true, value: (c.args as { [k: string]: Json }).value ?? null }),
};

function journal() {
  const entries = new Map<string, Json>();
  const record: CellProcessContext["record"] = async (label, compute) => {
    if (entries.has(label)) return entries.get(label)!;
    const v = await compute();
    entries.set(label, v);
    return v;
  };
  return { entries, record };
}

const MODULE = `process two() signals { go: int } {
  x = wait_signal("go")
  y = wait_signal("go")
  finish [x, y]
}
w = start two()`;

describe("process runs across cells", () => {
  it("a run started by one cell is awaited by a later cell of the same runtime", async () => {
    const rt = new ProcessRuntime(host);
    const state = new LashlangState();
    const a = await runCell(
      state,
      `process add(a: int, b: int) { finish (await tools.echo({ value: a + b }))? }
h = start add(a: 2, b: 3)`,
      rt.forCell(
        "process add(a: int, b: int) { finish (await tools.echo({ value: a + b }))? }\nh = start add(a: 2, b: 3)",
        { idPrefix: "c1" },
      ),
      OPTS,
    );
    expect(a.outcome).not.toBe("error");
    expect(state.get("h")).toEqual({
      __handle__: "process",
      run: expect.stringMatching(/^c1:/),
      process: "add",
    });
    const b = await runCell(
      state,
      "finish (await h)?",
      rt.forCell("finish (await h)?", { idPrefix: "c2" }),
      OPTS,
    );
    expect(b.value).toBe(5);
    // a rebuilt runtime knows the ended run by its record: the handle still answers
    const again = new ProcessRuntime(host);
    again.restore(rt.records());
    const c = await runCell(state, "finish await h", again.forCell("finish await h"), OPTS);
    expect(c.value).toEqual({ ok: true, value: 5 });
    expect(rt.records()).toEqual([
      expect.objectContaining({ process: "add", args: { a: 2, b: 3 }, state: "completed", result: 5 }),
    ]);
  });

  it("signals are a journaled log: a resumed run reads the same signals in the same order, and a re-sent signal is not delivered twice", async () => {
    const { entries, record } = journal();
    const rt = new ProcessRuntime(host);
    const state = new LashlangState();
    const cell1: CellProcessContext = { idPrefix: "c1", record, moduleRef: "sha256:m", origin: "cell-1" };
    await runCell(state, MODULE, rt.forCell(MODULE, cell1), OPTS);
    const SEND = `signal_run(w, "go", 7)\nsignal_run(w, "go", 8)`;
    await runCell(state, SEND, rt.forCell(SEND, { idPrefix: "c2", record }), OPTS);
    await rt.settle();
    const [rec] = rt.records();
    expect(rec).toMatchObject({ state: "completed", result: [7, 8], module: "sha256:m", origin: "cell-1" });
    const log = [...entries].filter(([k]) => k.startsWith("signals:"));
    expect(log.map(([, v]) => (v as { value: number }).value)).toEqual([7, 8]);

    // a host restart: the run is known only by a record that says it was running; it starts again
    // from its module, and reads both signals from the journal — nobody sends them again
    const restarted = new ProcessRuntime(host);
    restarted.restore([{ ...rec!, state: "running", signals: [] }]);
    expect(restarted.unfinished().map((r) => r.id)).toEqual([rec!.id]);
    expect(restarted.resume(rec!.id, MODULE, cell1)).toBeNull();
    await restarted.settle();
    expect(restarted.records()[0]).toMatchObject({ state: "completed", result: [7, 8] });

    // the sending cell run again (same ids): its signals are already in the log and are not delivered twice
    const third = new ProcessRuntime(host);
    third.restore([{ ...rec!, state: "running", signals: [] }]);
    third.resume(rec!.id, MODULE, cell1);
    await runCell(state, SEND, third.forCell(SEND, { idPrefix: "c2", record }), OPTS);
    await third.settle();
    const r3 = third.records()[0]!;
    expect(r3).toMatchObject({ state: "completed", result: [7, 8] });
    expect(r3.signals?.map((s) => s.value)).toEqual([7, 8]);
  });

  it("cancelAll ends the open runs (a host that goes away); their records say cancelled", async () => {
    const rt = new ProcessRuntime(host);
    const state = new LashlangState();
    await runCell(state, MODULE, rt.forCell(MODULE), OPTS);
    rt.cancelAll();
    await rt.settle();
    expect(rt.records()).toEqual([
      expect.objectContaining({
        process: "two",
        state: "cancelled",
        error: expect.stringContaining("closed"),
      }),
    ]);
  });

  it("a signal sent to a run that has ended is an error naming the run", async () => {
    const rt = new ProcessRuntime(host);
    const state = new LashlangState();
    const src = `process quick() signals { go: int } { finish 1 }
q = start quick()
r = await q
finish signal_run(q, "go", 1)`;
    const out = await runCell(state, src, rt.forCell(src), OPTS);
    expect(out.outcome).toBe("error");
    expect(out.error?.message).toContain("has already ended; the signal was not delivered");
  });
});
