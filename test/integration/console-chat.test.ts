// Chat with an agent in the console (issue 24, acceptance 3): a real project (`lash init`,
// `lash build`), a real `lash serve`, the mock wire server as the model, headless Chromium.
// The agent reads a file (a tool card fills in while the run goes on: the model's next reply
// is held until the test has seen it), then answers in Markdown — with raw HTML in it that
// must reach the page as text. A second message continues the same session; a reload shows
// the same conversation.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "@lash/providers/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatMessages, lash, textOf } from "./cli-support.ts";
import {
  type ConsoleRig,
  consoleScreenshot,
  gate,
  openConsole,
  startConsole,
  unnamedControls,
} from "./console-support.ts";

let rig: ConsoleRig;
const held = gate<void>();

const ANSWER =
  "Hello! This project has **one README** that says `CONSOLE-README`.\n\n- notes\n- <script>window.__pwned = 1</script><img src=x onerror=alert(1)>";

beforeAll(async () => {
  rig = await startConsole({
    responder: async (request: RecordedRequest) => {
      switch (request.index) {
        case 0:
          return { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "README.md" } }] };
        case 1:
          await held.wait;
          return { text: ANSWER, textChunks: 5 };
        default:
          return { text: "Second answer: still here." };
      }
    },
    prepare: async (sb) => {
      const opts = { env: sb.env, cwd: sb.cwd };
      expect((await lash(["init"], opts)).code).toBe(0);
      writeFileSync(join(sb.cwd, "README.md"), "CONSOLE-README: a project for the console test.\n");
      const build = await lash(["build"], opts);
      expect(build.code).toBe(0);
    },
  });
}, 180_000);

afterAll(async () => {
  held.release();
  await rig?.close();
});

describe("the console: chat with an agent", () => {
  it("lists the agent, streams the run into tool cards and a Markdown answer, continues the session", async () => {
    const { page, errors, foreign } = await openConsole(rig);
    const agents = page.getByRole("list", { name: "Agents" });
    await agents.getByRole("link", { name: "hello" }).waitFor();
    expect(await agents.textContent()).toContain("Greets the user");
    await consoleScreenshot(page, "agents");

    await agents.getByRole("link", { name: "hello" }).click();
    await page.getByRole("heading", { level: 1, name: "Chat with hello" }).waitFor();
    const box = page.getByRole("textbox", { name: "Message to hello" });
    await box.fill("What is in this project?");
    await page.getByRole("button", { name: "Send" }).click();

    // mid-run: the tool card is done while the model's answer is still held
    const card = page.getByRole("article", { name: "Tool read_file: done" });
    await card.waitFor();
    expect(rig.sb.server.requests).toHaveLength(2);
    await card.getByText("Result").click();
    expect(await card.textContent()).toContain("CONSOLE-README");
    expect(await card.textContent()).toContain('"path": "README.md"');
    expect(await page.getByRole("button", { name: "Answering…" }).isDisabled()).toBe(true);
    await consoleScreenshot(page, "chat-running");

    held.release();
    const log = page.getByRole("log", { name: "Conversation with hello" });
    await log.locator(".msg-assistant strong", { hasText: "one README" }).waitFor();
    await page.getByRole("button", { name: "Send" }).waitFor();
    const answer = log.locator(".msg-assistant .markdown").last();
    expect(await answer.locator("code").textContent()).toBe("CONSOLE-README");
    expect(await answer.locator("li").count()).toBe(2);
    // raw HTML from the model is text, not markup
    expect(await answer.textContent()).toContain("<script>window.__pwned = 1</script>");
    expect(await answer.locator("script, img").count()).toBe(0);
    expect(await page.evaluate("typeof window.__pwned")).toBe("undefined");
    expect(await log.locator(".msg-user").textContent()).toContain("What is in this project?");
    // what the model was sent: the user's message
    expect(textOf(chatMessages(rig.sb.server.requests[0]!.body).at(-1)!.content)).toContain(
      "What is in this project?",
    );
    await consoleScreenshot(page, "chat");
    expect(await unnamedControls(page)).toEqual([]);

    // a second message continues the same session: the model sees the first exchange
    await box.fill("And now?");
    await page.getByRole("button", { name: "Send" }).click();
    await log.getByText("Second answer: still here.").waitFor();
    const third = chatMessages(rig.sb.server.requests[2]!.body).map((m) => textOf(m.content));
    expect(third.some((t) => t.includes("What is in this project?"))).toBe(true);
    expect(third.some((t) => t.includes("one README"))).toBe(true);
    expect(third.at(-1)).toContain("And now?");

    // a reload shows the same conversation (read again from the daemon) and continues its session
    await page.reload({ waitUntil: "load" });
    await log.getByText("Second answer: still here.").waitFor();
    expect(await log.locator(".msg-user").allTextContents()).toEqual([
      "YouWhat is in this project?",
      "YouAnd now?",
    ]);
    expect(await log.locator(".tool").count()).toBe(1);
    expect(await log.locator(".msg-assistant strong").allTextContents()).toEqual(["one README"]);
    await page.getByRole("button", { name: "Send" }).waitFor();
    expect(rig.sb.server.requests).toHaveLength(3);

    // each run links to its live event page
    const runs = page.getByRole("navigation", { name: "Runs of this conversation" });
    expect(await runs.getByRole("link").count()).toBe(2);
    await runs.getByRole("link", { name: "Events of run 1" }).click();
    await page.getByTestId("run-state").getByText("completed").waitFor();
    await page.locator(".events li[data-seq] .type", { hasText: "runFinished" }).waitFor();
    await consoleScreenshot(page, "run");

    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
    await page.context().close();
  });
});
