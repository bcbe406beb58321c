// The peer benchmark's completeness check (the benchmark itself runs under
// `pnpm bench`): a run passes only when every session made every round.
import type { RecordedRequest } from "@lash/providers/testing";
import { describe, expect, it } from "vitest";
import {
  add,
  PROBE,
  prompt,
  responder,
  verifyRequests,
  type Wire,
  type WorkloadSpec,
} from "../perf/peers/workload.ts";

const spec: WorkloadSpec = { variant: "tools", sessions: 3, rounds: 4, chunks: 0, concurrency: 2 };

function request(
  index: number,
  session: number,
  round: number,
  lastTool = add(round - 1, 1),
  wire: Wire = "sse",
  stream = wire === "sse",
): RecordedRequest {
  const messages: { role: string; content: string }[] = [
    { role: "system", content: "s" },
    { role: "user", content: prompt(session, wire) },
  ];
  for (let r = 0; r < round; r++) {
    messages.push({ role: "assistant", content: "" });
    messages.push({ role: "tool", content: r === round - 1 ? lastTool : add(r, 1) });
  }
  const body = { model: "mock-model", messages };
  return {
    index,
    method: "POST",
    path: "/v1/chat/completions",
    query: {},
    headers: {},
    body,
    rawBody: JSON.stringify(body),
    format: "openai-chat",
    model: "mock-model",
    stream,
  };
}

function complete(): RecordedRequest[] {
  const out: RecordedRequest[] = [];
  for (let s = 0; s < spec.sessions; s++)
    for (let r = 0; r <= spec.rounds; r++) out.push(request(out.length, s, r));
  return out;
}

describe("peer workload check", () => {
  it("passes a complete run", () => {
    expect(verifyRequests(spec, complete())).toEqual([]);
  });

  it("fails a run with a missing request", () => {
    const problems = verifyRequests(spec, complete().slice(0, -1));
    expect(problems[0]).toBe("the mock server saw 14 requests, expected 15");
    expect(problems).toContain("session 2 made rounds [0,1,2,3], expected 0..4");
  });

  it("fails a run where a session never started, even with the right total", () => {
    const reqs = complete().filter((r) => !JSON.stringify(r.body).includes(prompt(1)));
    while (reqs.length < 15) reqs.push(request(reqs.length, 0, 2));
    const problems = verifyRequests(spec, reqs);
    expect(problems.some((p) => p.startsWith("session 1 made rounds []"))).toBe(true);
  });

  it("fails a run whose tool results did not reach the model", () => {
    const reqs = complete();
    reqs[3] = request(3, 0, 3, "sum=999");
    expect(verifyRequests(spec, reqs)).toEqual(['session 0 round 3: the last tool result is "sum=999"']);
  });

  it("ignores requests of the other variant but flags requests without a session prompt", () => {
    const reqs = complete();
    const stream = {
      ...request(99, 0, 0),
      body: { messages: [{ role: "user", content: "stream 0: reply with the text" }] },
    };
    expect(verifyRequests(spec, [...reqs, stream])).toEqual([]);
    const stray = { ...request(99, 0, 0), body: { messages: [{ role: "user", content: "hello" }] } };
    expect(verifyRequests(spec, [...reqs, stray])).toEqual(["1 request(s) carry no session prompt"]);
  });

  it("fails a run whose requests used the other wire mode (SSE vs non-streamed JSON)", () => {
    const json: WorkloadSpec = { ...spec, variant: "tools-json" };
    const good: RecordedRequest[] = [];
    for (let s = 0; s < spec.sessions; s++)
      for (let r = 0; r <= spec.rounds; r++) good.push(request(good.length, s, r, add(r - 1, 1), "json"));
    expect(verifyRequests(json, good)).toEqual([]);
    const streamed = good.map((r, i) => (i === 4 ? { ...r, stream: true } : r));
    expect(verifyRequests(json, streamed)).toEqual(["1 request(s) asked for a streamed response"]);
    // The SSE variant does not count the JSON variant's requests.
    expect(verifyRequests(spec, [...complete(), ...good])).toEqual([]);
  });

  it("checks the probe session the worker ran before timing, apart from the timed sessions", () => {
    const probe = Array.from({ length: spec.rounds + 1 }, (_, r) => request(100 + r, PROBE, r));
    expect(verifyRequests(spec, [...complete(), ...probe], true)).toEqual([]);
    expect(verifyRequests(spec, complete(), true)).toEqual([
      "the probe session made 0 requests, expected 5",
      `session ${PROBE} made rounds [], expected 0..4`,
    ]);
  });

  it("the scripted model calls the tool for 4 rounds, then answers", () => {
    const respond = responder({
      tools: spec,
      "tools-json": { ...spec, variant: "tools-json" },
      stream: { ...spec, variant: "stream", chunks: 10 },
    });
    expect(respond(request(0, 1, 0)).toolCalls?.[0]).toMatchObject({
      name: "add",
      arguments: { a: 0, b: 1 },
    });
    expect(respond(request(0, 1, 3)).toolCalls?.[0]).toMatchObject({ arguments: { a: 3, b: 1 } });
    expect(respond(request(0, 1, 4))).toMatchObject({ text: "done" });
    // A wrong tool result ends the session with a text that is not the answer (the worker's check fails).
    expect(respond(request(0, 1, 2, "sum=7")).text).toMatch(/^wrong tool result in round 1/);
  });
});
