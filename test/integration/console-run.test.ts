// The live event stream of a run in the console (issue 24, acceptance 3: reconnect after the
// page reloads without losing events). A run is started over the API; its second model reply
// is held, so the page is reloaded mid-run; the reloaded page shows the events it had at once
// (kept in sessionStorage), asks the daemon only for what comes after them (Last-Event-ID), and
// ends with exactly the run's events — compared, seq by seq, with GET /v1/runs/:id/events.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "@lash/providers/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { start } from "./cli-support.ts";
import { type ConsoleRig, consoleScreenshot, gate, openConsole, startConsole } from "./console-support.ts";
import { api, type Daemon, readSse } from "./serve-support.ts";

let rig: ConsoleRig;
const held = gate<void>();

beforeAll(async () => {
  rig = await startConsole({
    responder: async (request: RecordedRequest) => {
      if (request.index === 0)
        return {
          text: "Let me look.",
          toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "notes.txt" } }],
        };
      await held.wait;
      return { text: "The notes say **RELOAD-NOTES**.", textChunks: 4 };
    },
    prepare: async (sb) => {
      writeFileSync(join(sb.cwd, "notes.txt"), "RELOAD-NOTES\n");
    },
  });
}, 180_000);

afterAll(async () => {
  held.release();
  await rig?.close();
});

/** The `seq`s of the events the page lists, in order. */
const shownSeqs = async (page: Page): Promise<number[]> => {
  const rows = page.locator(".events li[data-seq]");
  const out: number[] = [];
  for (const row of await rows.all()) out.push(Number(await row.getAttribute("data-seq")));
  return out;
};

describe("the console: a run's live events", () => {
  it("a reload mid-run loses and repeats no event, and resumes after the last one it had", async () => {
    const session = await api(rig.daemon.url, "POST", "/v1/sessions", { title: "reload" });
    expect(session.status).toBe(201);
    const started = await api(rig.daemon.url, "POST", `/v1/sessions/${session.body.id}/turns`, {
      text: "read the notes",
    });
    expect(started.status).toBe(202);
    const runId = String(started.body.id);

    const { page, errors, foreign } = await openConsole(rig, `/runs/${runId}`);
    await page.getByRole("heading", { level: 1, name: `Run ${runId}` }).waitFor();
    // mid-run: the tool call is done, the model's second reply is held
    await page.locator(".events li .type", { hasText: "toolCompleted" }).waitFor();
    await page.getByRole("article", { name: /Tool read_file: done/ }).waitFor();
    expect(await page.getByTestId("run-state").textContent()).toBe("running");
    const before = await shownSeqs(page);
    expect(before.length).toBeGreaterThan(5);
    await consoleScreenshot(page, "run-live");

    // the reloaded page asks only for what comes after the events it kept
    const streamRequests: { url: string; lastEventId: string | undefined }[] = [];
    page.on("request", (r) => {
      if (r.url().includes(`/v1/runs/${runId}/events`))
        streamRequests.push({ url: r.url(), lastEventId: r.headers()["last-event-id"] });
    });
    await page.reload({ waitUntil: "load" });
    await page
      .locator(".events li[data-seq]")
      .nth(before.length - 1)
      .waitFor();
    expect((await shownSeqs(page)).slice(0, before.length)).toEqual(before);
    await expect.poll(() => streamRequests.length).toBeGreaterThan(0);
    expect(streamRequests[0]!.lastEventId).toBe(String(before.at(-1)));

    held.release();
    await page.getByTestId("run-state").getByText("completed").waitFor();
    await page.getByTestId("stream-link").getByText("ended").waitFor();
    const after = await shownSeqs(page);
    const all = await readSse(`${rig.daemon.url}/v1/runs/${runId}/events`);
    expect(all.ended).toBe(true);
    expect(after).toEqual(all.events.map((e) => e.id));
    expect(new Set(after).size).toBe(after.length);
    expect(after.slice(0, before.length)).toEqual(before);
    // the transcript was made once: one answer, one tool card
    const log = page.getByRole("log", { name: `Transcript of run ${runId}` });
    await log.getByText("RELOAD-NOTES", { exact: true }).waitFor();
    expect(await log.locator(".tool").count()).toBe(1);
    expect(await log.locator(".msg-assistant strong").allTextContents()).toEqual(["RELOAD-NOTES"]);
    await consoleScreenshot(page, "run-finished");
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
    await page.context().close();
  });
});

describe("the console: a run's live events across a daemon crash", () => {
  it("the open page reconnects by itself to the restarted daemon and misses and repeats nothing", async () => {
    const stuck = gate<void>();
    const crash = await startConsole({
      responder: async (request: RecordedRequest) => {
        if (request.index === 0) await stuck.wait; // the daemon dies while this call is in flight
        return { text: "Recovered after the **crash**.", textChunks: 3 };
      },
    });
    let second: Daemon | undefined;
    try {
      const session = await api(crash.daemon.url, "POST", "/v1/sessions", {});
      const started = await api(crash.daemon.url, "POST", `/v1/sessions/${session.body.id}/turns`, {
        text: "survive",
      });
      const runId = String(started.body.id);
      const { page, errors, foreign } = await openConsole(crash, `/runs/${runId}`);
      await page.locator(".events li .type", { hasText: "llmRequest" }).waitFor();
      const before = await shownSeqs(page);

      crash.daemon.proc.child.kill("SIGKILL");
      await crash.daemon.proc.done;
      await page.getByTestId("stream-link").getByText("reconnecting…").waitFor();
      // the same port, the same state: the new daemon resumes the run from its journal
      const port = new URL(crash.daemon.url).port;
      const proc = start(["serve", "--port", port, "--no-auth"], { env: crash.sb.env, cwd: crash.sb.cwd });
      const line = await proc.waitForLine(
        (l) => l.startsWith("lash serve: listening on") || l.startsWith("__exited__"),
      );
      second = { url: crash.daemon.url, proc };
      expect(line).toContain(crash.daemon.url);

      await page.getByTestId("run-state").getByText("completed").waitFor();
      const after = await shownSeqs(page);
      const all = await readSse(`${crash.daemon.url}/v1/runs/${runId}/events`);
      expect(after).toEqual(all.events.map((e) => e.id));
      expect(new Set(after).size).toBe(after.length);
      expect(after.slice(0, before.length)).toEqual(before);
      expect(all.events.map((e) => e.event)).toContain("runResumed");
      const log = page.getByRole("log", { name: `Transcript of run ${runId}` });
      expect(await log.locator(".msg-assistant strong").allTextContents()).toEqual(["crash"]);
      await log.getByText("The daemon restarted and resumed this run.").waitFor();
      // the browser logs the cut stream and the refused connections while the daemon was down; nothing else
      const network =
        /^Failed to load resource: net::ERR_(CONNECTION_REFUSED|INCOMPLETE_CHUNKED_ENCODING|CONNECTION_RESET|EMPTY_RESPONSE)/;
      expect(errors.filter((e) => !network.test(e))).toEqual([]);
      expect(foreign).toEqual([]);
      await page.context().close();
    } finally {
      stuck.release();
      if (second && second.proc.child.exitCode === null) {
        second.proc.child.kill("SIGKILL");
        await second.proc.done;
      }
      await crash.close();
    }
  }, 120_000);
});
