// agents.spawn fanned out through Lashlang processes (issue 21): each process body spawns one RLM
// child through the cell's dispatch path; the two children's requests overlap at the mock server.
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

const FANOUT = `process child(task: str) {
  yield task
  r = await agents.spawn({ task: task, capability: "explore", output: { n: "int" } })?
  finish r.n
}
rs = await [start child(task: "RLM-CHILD one"), start child(task: "RLM-CHILD two")]
finish [rs[0]?, rs[1]?]`;

describe("agents.spawn through processes (RLM)", () => {
  it("two processes each spawn a child; the children run in parallel and the cell gets both values", async () => {
    const children: Req[] = [];
    let release!: () => void;
    const bothThere = new Promise<void>((r) => {
      release = r;
    });
    let peak = 0;
    const server: MockLlmServer = await startMockServer({
      responder: async (raw) => {
        const req = parse(raw);
        if (req.first.startsWith("PARENT")) return req.step === 0 ? cell(FANOUT) : { text: "unexpected" };
        children.push(req);
        if (children.length === 2) {
          peak = server.inFlight;
          release();
        }
        await bothThere;
        const n = req.first.startsWith("RLM-CHILD one") ? 1 : 2;
        return { ...cell(`finish { n: ${n} }`), usage: { input: 100, output: 10 } };
      },
    });
    servers.push(server);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const parent = yield* rt.createSession({ model: MODEL, mode: "rlm" });
          const r = yield* rt.turn(parent.id, { text: "PARENT fan out" });
          expect(r.outcome).toEqual({ type: "finished", finish: { kind: "finalValue", value: [1, 2] } });
          expect(peak).toBe(2);
          expect(children).toHaveLength(2);
          const kids = yield* rt.children(parent.id);
          expect(kids).toHaveLength(2);
        }),
      { wrap: (o) => withRlm(o) },
    );
  });
});
