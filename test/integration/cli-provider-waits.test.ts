// The real `lash -p` process and a misbehaving model server (issue 14 items 5, 9, 11): SDK
// console noise never reaches stderr, retries are announced (text and stream-json), the idle
// timeout and the deadline are settable (flag and config), connection refused names the URL.
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonLines, lash, type Sandbox, sandbox } from "./cli-support.ts";

vi.setConfig({ testTimeout: 120_000 });

let box: Sandbox;
afterEach(async () => {
  await box?.cleanup();
});

/** A garbage SSE event after two chunks (the OpenAI SDK used to log "Could not parse message into JSON"). */
const malformedThenWhole = [
  { text: "a broken answer", textChunks: 4, malformedAfterChunks: 2 },
  { text: "the whole answer" },
];

describe("lash -p and a misbehaving model server", () => {
  it("text: a malformed stream is retried with a one-line notice; no SDK text on stderr", async () => {
    box = await sandbox(malformedThenWhole);
    const r = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("the whole answer\n");
    expect(box.server.requests).toHaveLength(2);
    expect(r.stderr).toMatch(/^\[retry\] attempt 2 of 4 in \d+\.\ds · malformed stream · .*malformed/m);
    expect(r.stderr).not.toContain("Could not parse");
    expect(r.stderr).not.toContain("From chunk");
    // the only stderr lines are lash's own
    for (const line of r.stderr.split("\n").filter((l) => l !== ""))
      expect(line).toMatch(/^\[(retry|lash)\]/);
  });

  it("stream-json: the retry event says attempt k of n, why and how long", async () => {
    box = await sandbox(malformedThenWhole);
    const r = await lash(["-p", "hi", "--output-format", "stream-json"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    const retries = lines.filter((l) => l.type === "retry");
    expect(retries).toEqual([
      expect.objectContaining({
        v: 1,
        type: "retry",
        attempt: 2,
        maxAttempts: 4,
        reason: "malformed stream",
        delayMs: expect.any(Number),
        error: expect.objectContaining({ kind: "streamIncomplete", retryable: true }),
      }),
    ]);
    expect(lines.at(-1)).toMatchObject({ type: "result", outcome: "finished", text: "the whole answer" });
    expect(r.stderr).toBe("");
  });

  it("--request-timeout and config requestDeadlineMs bound a hanging server", async () => {
    box = await sandbox([{ hang: true }, { hang: true }, { hang: true }, { hang: true }]);
    mkdirSync(box.home, { recursive: true });
    writeFileSync(`${box.home}/config.json`, JSON.stringify({ requestDeadlineMs: 6000 }));
    const r = await lash(["-p", "hi", "--request-timeout", "0.5"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(1);
    // attempt 1 stalls for 0.5 s, the backoff is 2-2.4 s, attempt 2 stalls for 0.5 s; the next backoff
    // (4-4.8 s) would end past the 6 s deadline: exactly two requests, however slow the machine
    // (short of taking 3.5 s to start the first)
    expect(box.server.requests).toHaveLength(2);
    expect(r.stderr).toMatch(
      /^\[retry\] attempt 2 of 4 in \d+\.\ds · no data \(idle timeout\) · .*no data for 500 ms/m,
    );
    expect(r.stderr).toContain("6 s deadline");
    expect(r.stderr).toContain("gave up after 2 attempts");
  });

  it("a bad --request-timeout is a usage error", async () => {
    box = await sandbox([]);
    const r = await lash(["-p", "hi", "--request-timeout", "soon"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '--request-timeout expects a positive number of seconds (e.g. 120 or 0.5), got "soon"',
    );
  });

  it("connection refused: retried, then a message naming the URL and the likely fix", async () => {
    box = await sandbox([]);
    const s = createServer();
    await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((ok) => s.close(() => ok()));
    const url = `http://127.0.0.1:${port}/v1`;
    const env = { ...box.env, OPENAI_COMPATIBLE_BASE_URL: url };
    // two tries: the second backoff (4-4.8 s) would end past the 6 s deadline
    const r = await lash(["-p", "hi", "--request-deadline", "6"], { env, cwd: box.cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^\[retry\] attempt 2 of 4 in \d+\.\ds · connection refused · /m);
    expect(r.stderr).toContain(`could not connect to ${url} (connection refused): is the server running?`);
    expect(r.stderr).toContain("gave up after 2 attempts");
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
