// The console's approvals inbox, sessions tree (fork, compare), run links (trace in a tab of
// its own), loops and metrics pages in headless Chromium against a real `lash serve` and the
// mock wire server (issue 24, acceptance 3 and 4): resolve an approval from the inbox and the
// run goes on (the model's next request carries the tool result); a denial's reason reaches
// the model; the inbox works from the keyboard; fork from the tree; trigger a loop and see its
// firing's run. Screenshots of each page go to packages/console/screenshots/.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "@lash/providers/testing";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { chatMessages, lash, textOf } from "./cli-support.ts";
import { type ConsoleRig, consoleScreenshot, openConsole, startConsole } from "./console-support.ts";
import { readUntil, writeConfig } from "./serve-auth-support.ts";
import { api } from "./serve-support.ts";

vi.setConfig({ testTimeout: 180_000 });

let rig: ConsoleRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const firstUser = (body: unknown): string =>
  textOf(chatMessages(body).find((m) => m.role === "user")?.content);
const toolMessages = (body: unknown) => chatMessages(body).filter((m) => m.role === "tool");
/** The model's requests of the session whose first message was `text`. */
const requestsOf = (requests: readonly RecordedRequest[], text: string) =>
  requests.filter((r) => firstUser(r.body).includes(text));

/**
 * The model: each session's first turn writes a file (which needs an approval), then answers
 * once it saw the tool's result; a later turn in a session is answered with its own text.
 */
function responder(request: RecordedRequest) {
  const messages = chatMessages(request.body);
  const users = messages.filter((m) => m.role === "user");
  const last = textOf(users.at(-1)?.content);
  const file = /write (\w+)/.exec(last)?.[1];
  if (users.length > 1 || file === undefined) return { text: `answer to: ${last}` };
  if (toolMessages(request.body).length === 0)
    return {
      toolCalls: [
        {
          id: `call-${file}`,
          name: "write_file",
          arguments: { path: `${file}.txt`, content: "from the model" },
        },
      ],
    };
  return { text: `${file} done` };
}

async function startRun(url: string, text: string) {
  const session = await api(url, "POST", "/v1/sessions", { title: text });
  const run = await api(url, "POST", `/v1/sessions/${session.body.id}/turns`, { text });
  expect(run.status).toBe(202);
  return { sessionId: session.body.id as string, runId: run.body.id as string };
}

const waitFor = (url: string, runId: string, type: string) =>
  readUntil({ url, proc: undefined as never }, undefined, `/v1/runs/${runId}/events`, (e) => e.type === type);

/** Press Tab until the focused element matches `selector` (at most `max` times). */
async function tabTo(page: Page, selector: string, max = 30): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if ((await page.locator(`${selector}:focus`).count()) > 0) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

describe("the console's pages", () => {
  it("approvals inbox: keyboard, previews, invalid JSON kept, approve with edited arguments, deny with a reason; sessions: fork from the tree and compare; a run's trace opens in a tab", async () => {
    rig = await startConsole({
      responder,
      prepare: async (sb) => writeConfig(sb, { tools: { write_file: { approval: "always" } } }),
    });
    const { url } = rig.daemon;
    const a = await startRun(url, "please write alpha");
    await waitFor(url, a.runId, "approvalWaiting");
    const b = await startRun(url, "please write beta");
    await waitFor(url, b.runId, "approvalWaiting");

    const { page, errors, foreign } = await openConsole(rig, "/approvals");
    const options = page.getByRole("option");
    await expect.poll(() => options.count(), { timeout: 30_000 }).toBe(2);
    // the preview: what the call would write
    await page.getByRole("option", { name: /alpha\.txt/ }).waitFor();
    await page.locator(".preview").first().waitFor();
    await consoleScreenshot(page, "approvals");

    // keyboard: Tab reaches the list, arrows move through it and show each approval
    await tabTo(page, '[role="option"]');
    const focused = page.locator(":focus");
    expect(await focused.getAttribute("aria-selected")).toBe("true");
    const firstText = (await focused.textContent()) ?? "";
    await page.keyboard.press("ArrowDown");
    const second = {
      text: (await focused.textContent()) ?? "",
      selected: await focused.getAttribute("aria-selected"),
    };
    expect(second.selected).toBe("true");
    expect(second.text).not.toBe(firstText);
    const shown = (await page.locator("article.approval h2").textContent()) ?? "";
    expect(shown).toContain(second.text.includes("alpha") ? a.runId : b.runId);
    await page.keyboard.press("Home");
    expect(await focused.textContent()).toBe(firstText);
    // every control of the approval has an accessible name
    await page.getByRole("button", { name: "Approve", exact: true }).waitFor();
    await page.getByRole("button", { name: "Deny", exact: true }).waitFor();
    await page.getByRole("textbox", { name: "Reason for denying" }).waitFor();
    await page.getByRole("checkbox", { name: /Do not ask again for write_file in this session/ }).waitFor();

    // alpha: arguments that are not JSON are refused, and stay in the editor
    await page.getByRole("option", { name: /alpha\.txt/ }).click();
    const args = page.getByRole("textbox", { name: "Arguments of write_file (JSON)" });
    await args.fill('{ "path": "alpha.txt", ');
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    await page
      .getByRole("alert")
      .getByText(/are not valid JSON/)
      .waitFor();
    expect(await args.inputValue()).toBe('{ "path": "alpha.txt", ');
    expect((await api(url, "GET", `/v1/approvals/${(await pendingOf(url, a.runId)).id}`)).body.state).toBe(
      "pending",
    );
    // edited arguments: the tool runs with them and the run goes on with its result
    await args.fill('{ "path": "alpha.txt", "content": "edited in the console" }');
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    await page
      .getByRole("status")
      .getByText(/Approved: write_file/)
      .waitFor();
    // focus goes on to the next approval
    await expect
      .poll(() => page.locator('[role="option"]:focus').textContent(), { timeout: 30_000 })
      .toContain("beta.txt");
    const finishedA = await waitFor(url, a.runId, "runFinished");
    expect(finishedA.at(-1)?.data).toMatchObject({ state: "completed", text: "alpha done" });
    expect(readFileSync(join(rig.sb.cwd, "alpha.txt"), "utf8")).toBe("edited in the console");
    const afterA = requestsOf(rig.sb.server.requests, "write alpha");
    expect(afterA).toHaveLength(2);
    expect(toolMessages(afterA[1]!.body)).toHaveLength(1);
    expect(textOf(toolMessages(afterA[1]!.body)[0]!.content)).toContain("alpha.txt");

    // beta: denied with a reason, which the model reads
    await expect.poll(() => options.count(), { timeout: 30_000 }).toBe(1);
    await page.getByRole("textbox", { name: "Reason for denying" }).fill("write gamma.txt instead");
    await page.getByRole("button", { name: "Deny", exact: true }).click();
    await page
      .getByRole("status")
      .getByText(/Denied: write_file/)
      .waitFor();
    expect((await waitFor(url, b.runId, "runFinished")).at(-1)?.data).toMatchObject({ state: "completed" });
    const afterB = requestsOf(rig.sb.server.requests, "write beta");
    expect(afterB).toHaveLength(2);
    expect(textOf(toolMessages(afterB[1]!.body)[0]!.content)).toContain("write gamma.txt instead");
    expect(existsSync(join(rig.sb.cwd, "beta.txt"))).toBe(false);
    await page.getByText("No approvals are waiting.").waitFor();

    // sessions: the tree, fork from it, the new session selected and hanging under its origin
    await page.goto(`${url}/#/sessions/${a.sessionId}`);
    await page.getByRole("heading", { name: "please write alpha", level: 2 }).waitFor();
    await page.getByText("alpha done").waitFor();
    await page.getByRole("button", { name: "Fork this session" }).click();
    await page.waitForURL((u) => /#\/sessions\/ses_/.test(u.hash) && !u.hash.includes(a.sessionId));
    const forkId = new URL(page.url()).hash.split("/")[2]!;
    const fork = (await api(url, "GET", `/v1/sessions/${forkId}`)).body;
    expect(fork.origin).toMatchObject({ sessionId: a.sessionId });
    const forkItem = page.locator(`li[data-session="${a.sessionId}"] li[data-session="${forkId}"]`);
    await forkItem.waitFor();
    expect(await forkItem.textContent()).toContain("fork");
    await page.getByText(`forked from ${a.sessionId}`).waitFor();
    await consoleScreenshot(page, "sessions");

    // compare: one more turn on the fork, then the two branches side by side
    const more = await api(url, "POST", `/v1/sessions/${forkId}/turns?wait=true`, {
      text: "go on in the fork",
    });
    expect(more.body.state).toBe("completed");
    await page.goto(`${url}/#/sessions/${a.sessionId}/compare/${forkId}`);
    const branchB = page.getByRole("region", { name: "Branch B" });
    await branchB.getByText("answer to: go on in the fork").waitFor();
    expect(await page.getByRole("region", { name: "Branch A" }).textContent()).toContain(
      "Nothing after the shared part",
    );
    await consoleScreenshot(page, "compare");

    // a run links to its trace: a view link opened in a tab of its own
    await page.goto(`${url}/#/runs/${a.runId}`);
    const [trace] = await Promise.all([
      page.context().waitForEvent("page"),
      page.getByRole("button", { name: "Open trace of this run" }).click(),
    ]);
    await trace.waitForLoadState("load");
    expect(trace.url()).toMatch(/\/v1\/views\/[A-Za-z0-9_-]{32}$/);
    await trace.getByRole("heading", { name: `lash trace · run ${a.runId}` }).waitFor();
    expect(await trace.content()).toContain("write_file");
    await consoleScreenshot(trace, "run-trace");
    await trace.close();

    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it("loops: next and last firing, trigger a firing and see its run, pause and resume; metrics charts of the agent", async () => {
    rig = await startConsole({
      replies: Array.from({ length: 10 }, (_, i) => ({
        text: `queue checked ${i}`,
        usage: { input: 50, output: 5 },
      })),
      prepare: async (sb) => {
        writeFileSync(join(sb.cwd, "lash.yaml"), "agents: [agents]\n");
        mkdirSync(join(sb.cwd, "agents"), { recursive: true });
        writeFileSync(
          join(sb.cwd, "agents", "ticker.agent.md"),
          "---\nname: ticker\ndescription: Checks the queue.\nschedule: { every: 1d }\ninstruction: TICK check the queue.\n---\nYou check the queue.\n",
        );
        const build = await lash(["build"], { env: sb.env, cwd: sb.cwd });
        expect(build.stderr).toBe("");
      },
    });
    const { url } = rig.daemon;
    const { page, errors, foreign } = await openConsole(rig, "/loops");
    const card = page.getByRole("region", { name: /ticker/ });
    await card.waitFor();
    expect(await card.locator('[data-field="next"]').textContent()).not.toMatch(/—/);
    expect(await card.locator('[data-field="last"]').textContent()).toBe("none yet");

    await page
      .getByRole("textbox", { name: "Instruction for this firing of ticker (optional)" })
      .fill("TICK by hand");
    await page.getByRole("button", { name: "Trigger ticker now" }).click();
    await page
      .getByRole("status")
      .getByText(/Triggered ticker: firing ticker@manual/)
      .waitFor();
    // the firing's row gets its run, and the run completes
    const runLink = card.locator("table.firings a");
    await runLink.waitFor();
    const runId = (await runLink.textContent())!;
    await card.locator("table.firings td.state-completed").waitFor();
    expect((await api(url, "GET", `/v1/runs/${runId}`)).body.state).toBe("completed");
    expect(rig.sb.server.requests.some((r) => firstUser(r.body).includes("TICK by hand"))).toBe(true);
    await card.locator('[data-field="last"]').getByText("completed").waitFor();
    await consoleScreenshot(page, "loops");

    await page.getByRole("button", { name: "Pause ticker" }).click();
    await card.getByText("paused", { exact: true }).waitFor();
    expect(((await api(url, "GET", "/v1/loops")).body.loops as { paused: boolean }[])[0]!.paused).toBe(true);
    await page.getByRole("button", { name: "Resume ticker" }).click();
    await page.getByRole("button", { name: "Pause ticker" }).waitFor();
    expect(((await api(url, "GET", "/v1/loops")).body.loops as { paused: boolean }[])[0]!.paused).toBe(false);

    // metrics: the agent's run, model call and tokens, as figures and charts
    await page.goto(`${url}/#/metrics`);
    const ticker = page.getByRole("region", { name: "ticker" });
    await ticker.waitFor();
    expect(await ticker.locator('[data-figure="runs"]').textContent()).toContain("1 (1 completed");
    expect(await ticker.locator('[data-figure="calls"]').textContent()).toMatch(/^1 /);
    expect(await ticker.locator('[data-figure="tokens"]').textContent()).toBe("50 in, 5 out");
    expect(await ticker.getByRole("img").count()).toBeGreaterThanOrEqual(4);
    await consoleScreenshot(page, "metrics");

    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  });
});

async function pendingOf(url: string, runId: string): Promise<{ id: string }> {
  const list = (await api(url, "GET", "/v1/approvals?state=pending")).body.approvals as {
    id: string;
    runId: string;
  }[];
  return list.find((x) => x.runId === runId)!;
}
