// `lash serve` routes: per-session queueing, limits (429, 413), cancel, delete, fork, errors.
import { writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lash } from "./cli-support.ts";
import { api, fileLine, readSse, serveTests } from "./serve-support.ts";

const t = serveTests();

/** A JSON body with a title of about `size` bytes, sent chunked (no Content-Length). */
function chunkedPost(url: string, size: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.write('{"title":"');
    for (let sent = 0; sent < size; sent += 1024) req.write("x".repeat(1024));
    req.end('"}');
  });
}

describe("lash serve routes", () => {
  it("runs one turn at a time per session: a second turn queues, the queue is bounded, a queued run cancels", async () => {
    const sb = await t.sandbox([
      {
        toolCalls: [
          {
            id: "w",
            name: "shell",
            arguments: { command: "echo 1 >> started.txt; while [ ! -f go ]; do sleep 0.05; done" },
          },
        ],
      },
      { text: "one" },
      { text: "three" },
    ]);
    const daemon = await t.daemon(sb, ["--max-queued", "1"]);
    const url = daemon.url;
    const id = (await api(url, "POST", "/v1/sessions", {})).body.id as string;
    const r1 = (await api(url, "POST", `/v1/sessions/${id}/turns`, { text: "first" })).body;
    await fileLine(join(sb.cwd, "started.txt"));
    const r2 = await api(url, "POST", `/v1/sessions/${id}/turns`, { text: "second" });
    expect(r2.status).toBe(202);
    expect(r2.body.state).toBe("queued");
    expect((await api(url, "GET", `/v1/runs/${r1.id}`)).body.state).toBe("running");
    const full = await api(url, "POST", `/v1/sessions/${id}/turns`, { text: "third" });
    expect(full.status).toBe(429);
    expect(full.body.code).toBe("too_many_queued_runs");
    expect(full.body.message).toContain("--max-queued");
    const session = (await api(url, "GET", `/v1/sessions/${id}`)).body;
    expect(session.activeRunId).toBe(r1.id);
    const del = await api(url, "DELETE", `/v1/sessions/${id}`);
    expect(del.status).toBe(409);
    expect(del.body.code).toBe("run_active");
    const cancelled = await api(url, "POST", `/v1/runs/${r2.body.id}/cancel`);
    expect(cancelled.body.state).toBe("cancelled");
    expect((await api(url, "POST", `/v1/runs/${r2.body.id}/cancel`)).status).toBe(409);
    writeFileSync(join(sb.cwd, "go"), "");
    const r1Events = await readSse(`${url}/v1/runs/${r1.id}/events`);
    expect(r1Events.events.at(-1)!.data.data).toMatchObject({ state: "completed", text: "one" });
    const r3 = await api(url, "POST", `/v1/sessions/${id}/turns?wait=true`, { text: "third" });
    expect(r3.body).toMatchObject({ state: "completed", text: "three" });
    const runs = (await api(url, "GET", `/v1/sessions/${id}/runs`)).body.runs as { state: string }[];
    expect(runs.map((r) => r.state)).toEqual(["completed", "cancelled", "completed"]);
    // the model saw the cancelled turn's text never: three requests, the third one's last user message is "third"
    expect(sb.server.requests).toHaveLength(3);
    const forked = await api(url, "POST", `/v1/sessions/${id}/fork`, {});
    expect(forked.status).toBe(201);
    expect(forked.body.origin).toMatchObject({ sessionId: id });
    expect(forked.body.owner).toBe("local");
    const listed = (await api(url, "GET", "/v1/sessions")).body.sessions as { id: string }[];
    expect(listed.map((s) => s.id).sort()).toEqual([id, forked.body.id as string].sort());
    expect((await api(url, "DELETE", `/v1/sessions/${id}`)).body).toEqual({ deleted: id });
    expect((await api(url, "GET", `/v1/sessions/${id}`)).status).toBe(404);
  });

  it("answers bad requests with JSON errors that name the fix", async () => {
    const sb = await t.sandbox([]);
    const daemon = await t.daemon(sb);
    const url = daemon.url;
    const big = await api(
      url,
      "POST",
      "/v1/sessions",
      JSON.stringify({ title: "x".repeat(2 * 1024 * 1024) }),
    );
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ _tag: "PayloadTooLarge", code: "payload_too_large" });
    const chunked = await chunkedPost(`${url}/v1/sessions`, 2 * 1024 * 1024);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ _tag: "PayloadTooLarge", code: "payload_too_large" });
    const small = await chunkedPost(`${url}/v1/sessions`, 1000);
    expect(small.status).toBe(201);
    expect(JSON.parse(small.body).title).toHaveLength(1024);
    const route = await api(url, "GET", "/v1/nothing-here");
    expect(route.status).toBe(404);
    expect(route.body).toMatchObject({ code: "route_not_found" });
    const missing = await api(url, "POST", "/v1/sessions/ses_missing/turns", { text: "x" });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ _tag: "NotFound", code: "session_not_found" });
    const run = await api(url, "GET", "/v1/runs/run_missing");
    expect(run.status).toBe(404);
    const id = (await api(url, "POST", "/v1/sessions", {})).body.id as string;
    const cursor = await readSse(`${url}/v1/sessions/${id}/events?after=-3`);
    expect(cursor.status).toBe(400);
    const badBody = await api(url, "POST", `/v1/sessions/${id}/turns`, { words: "x" });
    expect(badBody.status).toBe(400);
    const openapi = await api(url, "GET", "/v1/openapi.json");
    expect(Object.keys(openapi.body.paths as object)).toContain("/v1/sessions/{id}/events");
    expect((await api(url, "GET", "/ready")).body).toEqual({ ready: true, resumed: 0 });
  });

  it("refuses --no-auth off loopback and bad flags, naming the fix; --help describes the flags", async () => {
    const sb = await t.sandbox([]);
    const open = await lash(["serve", "--host", "0.0.0.0", "--no-auth"], { env: sb.env, cwd: sb.cwd });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain("--no-auth is only allowed on a loopback address");
    const port = await lash(["serve", "--port", "http"], { env: sb.env, cwd: sb.cwd });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port takes a whole number");
    const prompt = await lash(["serve", "hello"], { env: sb.env, cwd: sb.cwd });
    expect(prompt.code).toBe(2);
    expect(prompt.stderr).toContain("lash serve takes no prompt");
    const help = await lash(["serve", "--help"], { env: sb.env, cwd: sb.cwd });
    expect(help.code).toBe(0);
    for (const flag of [
      "--host",
      "--port",
      "--state",
      "--max-runs",
      "--max-queued",
      "--drain-timeout",
      "--no-auth",
    ])
      expect(help.stdout).toContain(flag);
  });

  it("executes at most --max-runs runs across sessions; a failed turn names its cause", async () => {
    const sb = await t.sandbox([
      {
        toolCalls: [
          {
            id: "w",
            name: "shell",
            arguments: { command: "echo 1 >> started.txt; while [ ! -f go ]; do sleep 0.05; done" },
          },
        ],
      },
      { text: "first done" },
      { text: "second done" },
    ]);
    const daemon = await t.daemon(sb, ["--max-runs", "1"]);
    const url = daemon.url;
    const a = (await api(url, "POST", "/v1/sessions", {})).body.id as string;
    const b = (await api(url, "POST", "/v1/sessions", {})).body.id as string;
    const ra = (await api(url, "POST", `/v1/sessions/${a}/turns`, { text: "a" })).body.id as string;
    await fileLine(join(sb.cwd, "started.txt"));
    const rb = (await api(url, "POST", `/v1/sessions/${b}/turns`, { text: "b" })).body.id as string;
    expect((await api(url, "GET", `/v1/runs/${rb}`)).body.state).toBe("queued");
    writeFileSync(join(sb.cwd, "go"), "");
    const doneB = await readSse(`${url}/v1/runs/${rb}/events`);
    expect(doneB.events.at(-1)!.data.data).toMatchObject({ state: "completed", text: "second done" });
    const runA = (await api(url, "GET", `/v1/runs/${ra}`)).body;
    expect(runA.state).toBe("completed");
    expect(runA.finishedAt as number).toBeLessThanOrEqual(
      (await api(url, "GET", `/v1/runs/${rb}`)).body.startedAt as number,
    );
    const bad = (await api(url, "POST", "/v1/sessions", { model: "nosuchvendor/model" })).body.id as string;
    const failed = await api(url, "POST", `/v1/sessions/${bad}/turns?wait=true`, { text: "x" });
    expect(failed.body.state).toBe("failed");
    expect((failed.body.error as { code: string }).code).toBe("unknownModel");
  });
});
