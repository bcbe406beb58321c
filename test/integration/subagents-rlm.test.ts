// agents.spawn from the RLM mode: a Lashlang cell spawns two RLM children in one
// aggregate `await` (their requests overlap at the mock server); each child must
// `finish` with a value matching the output schema (`finishRequired`).
import { withRlm } from "@lash/core";
import { type MockLlmServer, startMockServer } from "@lash/providers/testing";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { MODEL, parse, type Req, withRuntime } from "../../packages/subagents/test/helpers.ts";

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const cell = (code: string) => ({ text: `<lashlang>\n${code}\n</lashlang>\n` });

describe("agents.spawn (RLM)", () => {
  it("an aggregate await spawns children in parallel; each finishes with a schema-checked value", async () => {
    const children: Req[] = [];
    let release!: () => void;
    const bothThere = new Promise<void>((r) => {
      release = r;
    });
    let peak = 0;
    const server: MockLlmServer = await startMockServer({
      responder: async (raw) => {
        const req = parse(raw);
        if (req.first.startsWith("PARENT")) {
          if (req.step === 0)
            return cell(
              [
                "rs = await [",
                '  agents.spawn({ task: "RLM-CHILD one", capability: "explore", output: { n: "int" }, seed: { k: 1 } }),',
                '  agents.spawn({ task: "RLM-CHILD two", capability: "explore", output: { n: "int" } })',
                "]",
                "finish [rs[0].value.n, rs[1].value.n]",
              ].join("\n"),
            );
          return { text: "unexpected" };
        }
        children.push(req);
        const one = req.first.startsWith("RLM-CHILD one");
        if (req.step === 0) {
          if (children.filter((c) => c.step === 0).length === 2) {
            peak = server.inFlight;
            release();
          }
          await bothThere;
          // child one first finishes with the wrong shape: finishRequired makes it try again
          return {
            ...cell(one ? 'finish { n: "three" }' : "finish { n: 2 }"),
            usage: { input: 100, output: 10 },
          };
        }
        return { ...cell("finish { n: 3 }"), usage: { input: 150, output: 5 } };
      },
    });
    servers.push(server);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const parent = yield* rt.createSession({ model: MODEL, mode: "rlm" });
          const r = yield* rt.turn(parent.id, { text: "PARENT fan out" });
          expect(r.outcome).toEqual({ type: "finished", finish: { kind: "finalValue", value: [3, 2] } });
          expect(peak).toBe(2);
          const kids = yield* rt.children(parent.id);
          expect(kids).toHaveLength(2);
          for (const k of kids) {
            expect(k.mode).toBe("rlm");
            expect(k.state.rlm).toMatchObject({
              options: { termination: { kind: "finishRequired", schema: { required: ["n"] } } },
            });
          }
          const first = children.find((c) => c.first.startsWith("RLM-CHILD one") && c.step === 0)!;
          expect(first.first).toContain('"k": 1');
          expect(first.first).toContain("End with `finish <value>`");
          expect(first.tools).toEqual([]);
          // child one needed a second cell after its schema error
          expect(children.filter((c) => c.first.startsWith("RLM-CHILD one"))).toHaveLength(2);
          // both children's usage rolled up into the parent's ledger
          const ledger = yield* rt.usage(parent.id);
          const agentRows = ledger.bySource.filter((g) => g.source.startsWith("agent:"));
          // (input as reported; output is counted from what arrived: the stream mask closes the
          // stream at the close tag, before the reply's final usage event)
          expect(agentRows.map((g) => g.usage.input).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([100, 250]);
          for (const g of agentRows) expect(g.usage.output).toBeGreaterThan(0);
        }),
      { wrap: (o) => withRlm(o) },
    );
  });
});
