// `lash serve`'s agents over HTTP, end to end: a real project (`lash init`, a written
// `*.agent.md`, `lash build`), a real daemon child process in it, the mock wire server as the
// model. `GET /v1/agents`, `POST /v1/agents/:name/chat` (text, a typed value, bad input, a
// continued session) and `…/chat/stream`.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, textOf } from "./cli-support.ts";
import { api, readSse, serveTests } from "./serve-support.ts";

const t = serveTests();

const SUMMARIZER = `---
name: summarizer
description: Summarizes a repository.
input: { repository: str }
output: { title: str, score: int }
tools: [read_file]
---
SUMMARIZER-PROMPT: summarize the repository you are given.
`;

const LEAD = `---
name: lead
description: Leads a review.
tools: [reviewer]
---
LEAD-PROMPT: ask the reviewer.
`;
const REVIEWER = `---
name: reviewer
description: reviews one file
input: { path: str }
---
REVIEWER-PROMPT: review the file.
`;

const systemOf = (body: unknown): string =>
  chatMessages(body)
    .filter((m) => m.role === "system")
    .map((m) => textOf(m.content))
    .join("\n");
const toolNames = (body: unknown): string[] =>
  ((body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);
const lastUser = (body: unknown): string => textOf(chatMessages(body).at(-1)!.content);

/** `lash init` (the `hello` agent and its `greeting` skill) + a typed agent + `lash build`. */
async function project(box: Sandbox): Promise<void> {
  const opts = { env: box.env, cwd: box.cwd };
  expect((await lash(["init"], opts)).code).toBe(0);
  writeFileSync(join(box.cwd, "agents", "summarizer.agent.md"), SUMMARIZER);
  const build = await lash(["build"], opts);
  expect(build.stderr).toBe("");
  expect(build.code).toBe(0);
}

describe("lash serve: agents over HTTP", () => {
  it("without a build, GET /v1/agents is empty and a chat is 404 naming lash build", async () => {
    const sb = await t.sandbox([]);
    const daemon = await t.daemon(sb);
    const list = await api(daemon.url, "GET", "/v1/agents");
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ agents: [] });
    const chat = await api(daemon.url, "POST", "/v1/agents/hello/chat", { input: "hi" });
    expect(chat.status).toBe(404);
    expect(chat.body.code).toBe("agent_not_found");
    expect(chat.body.message).toContain("lash build");
    expect(sb.server.requests).toHaveLength(0);
  });

  it("lists the built agents with their schemas; chat runs one as `lash run` does and replies with its text", async () => {
    const sb = await t.sandbox([{ text: "Hello! This project has one agent." }, { text: "Still here." }]);
    await project(sb);
    const daemon = await t.daemon(sb);
    const list = await api(daemon.url, "GET", "/v1/agents");
    expect(list.status).toBe(200);
    const agents = list.body.agents as { name: string; input?: unknown; output?: unknown; access: string }[];
    expect(agents.map((a) => a.name)).toEqual(["hello", "summarizer"]);
    expect(agents[0]).toMatchObject({ access: "execute", mode: "standard" });
    expect(agents[0]!.input).toBeUndefined();
    expect(agents[1]!.input).toMatchObject({
      type: "object",
      properties: { repository: { type: "string" } },
    });
    expect(agents[1]!.output).toMatchObject({ type: "object", required: ["title", "score"] });

    const chat = await api(daemon.url, "POST", "/v1/agents/hello/chat", { input: "say hi" });
    expect(chat.status).toBe(200);
    expect(chat.body).toMatchObject({ state: "completed", text: "Hello! This project has one agent." });
    expect(chat.body.value).toBeUndefined();
    const body = sb.server.requests[0]!.body;
    expect(lastUser(body)).toBe("say hi");
    // the agent's instructions with its skills catalog once; its tools and the skills tools only
    const system = systemOf(body);
    expect(system).toContain("You are a friendly guide to this project.");
    expect(system.split("## Skills").length - 1).toBe(1);
    expect(system).toContain("- greeting: How to greet people");
    // (read_output pages long results of the tools it has)
    expect(
      toolNames(body)
        .filter((n) => n !== "read_output")
        .sort(),
    ).toEqual(["glob", "load_skill", "read_file", "read_skill_file"]);
    // the session is the agent's (and continues with sessionId)
    const sessionId = chat.body.sessionId as string;
    const session = await api(daemon.url, "GET", `/v1/sessions/${sessionId}`);
    expect(session.body).toMatchObject({ agent: "hello", owner: "local" });
    const again = await api(daemon.url, "POST", "/v1/agents/hello/chat", { input: "and again", sessionId });
    expect(again.body).toMatchObject({ sessionId, state: "completed", text: "Still here." });
    const history = chatMessages(sb.server.requests[1]!.body).map((m) => textOf(m.content));
    expect(history).toContain("say hi");
    expect(history.at(-1)).toBe("and again");
    // a session of another agent is refused, naming it
    const wrong = await api(daemon.url, "POST", "/v1/agents/summarizer/chat", {
      input: { repository: "x" },
      sessionId,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("session_agent_mismatch");
    expect(sb.server.requests).toHaveLength(2);
  });

  it("a typed agent: bad input is 400 naming the schema problem; good input replies with the typed value", async () => {
    const sb = await t.sandbox([{ text: JSON.stringify({ title: "lash", score: 9 }) }]);
    await project(sb);
    const daemon = await t.daemon(sb);
    const bad = await api(daemon.url, "POST", "/v1/agents/summarizer/chat", { input: { repo: "typo" } });
    expect(bad.status).toBe(400);
    expect(bad.body._tag).toBe("BadRequest");
    expect(bad.body.code).toBe("invalid_input");
    expect(bad.body.message).toContain("does not match agent `summarizer`'s input schema");
    const missing = await api(daemon.url, "POST", "/v1/agents/summarizer/chat", {});
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe("input_required");
    expect(sb.server.requests).toHaveLength(0);

    const chat = await api(daemon.url, "POST", "/v1/agents/summarizer/chat", {
      input: { repository: "lash" },
    });
    expect(chat.status).toBe(200);
    expect(chat.body).toMatchObject({ state: "completed", value: { title: "lash", score: 9 } });
    const body = sb.server.requests[0]!.body as { response_format?: unknown };
    expect(systemOf(body)).toContain("SUMMARIZER-PROMPT");
    expect(lastUser(body)).toContain('"repository": "lash"');
    // the output schema went to the model as its structured output
    expect(JSON.stringify(body.response_format ?? {})).toContain('"score"');
    expect(toolNames(body)).toContain("read_file");
    expect(toolNames(body)).not.toContain("shell");
  });

  it("chat/stream answers with the run's event stream, to its runFinished", async () => {
    const sb = await t.sandbox([{ text: "streamed hello", textChunks: 3 }]);
    await project(sb);
    const daemon = await t.daemon(sb);
    const res = await fetch(`${daemon.url}/v1/agents/hello/chat/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: "hi" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("id: "));
    const events = frames.map(
      (f) =>
        JSON.parse(/^data: (.*)$/m.exec(f)![1]!) as {
          seq: number;
          type: string;
          data: { text?: string; state?: string };
        },
    );
    expect(events[0]!.type).toBe("runQueued");
    expect(events.at(-1)!.type).toBe("runFinished");
    expect(events.at(-1)!.data.state).toBe("completed");
    expect(
      events
        .filter((e) => e.type === "textDelta")
        .map((e) => e.data.text)
        .join(""),
    ).toBe("streamed hello");
    // the same events as the run's own stream
    const runId = (events[0] as unknown as { runId: string }).runId;
    const replay = await readSse(`${daemon.url}/v1/runs/${runId}/events`);
    expect(replay.events.map((e) => e.id)).toEqual(events.map((e) => e.seq));
  });

  it("an agent calls another as a tool in the daemon: a child session runs the called agent", async () => {
    const sb = await t.sandbox([
      { toolCalls: [{ id: "c1", name: "reviewer", arguments: { path: "a.ts" } }] },
      { text: "LGTM from the reviewer" },
      { text: "The reviewer says LGTM." },
    ]);
    const opts = { env: sb.env, cwd: sb.cwd };
    writeFileSync(join(sb.cwd, "lead.agent.md"), LEAD);
    writeFileSync(join(sb.cwd, "reviewer.agent.md"), REVIEWER);
    const build = await lash(["build"], opts);
    expect(build.stderr).toBe("");
    const daemon = await t.daemon(sb);
    const chat = await api(daemon.url, "POST", "/v1/agents/lead/chat", { input: "review a.ts" });
    expect(chat.body).toMatchObject({ state: "completed", text: "The reviewer says LGTM." });
    expect(sb.server.requests).toHaveLength(3);
    // the lead sees the reviewer as a tool (its description and input schema), not spawn_agent
    const first = sb.server.requests[0]!.body as {
      tools?: { function: { name: string; description?: string; parameters?: unknown } }[];
    };
    const tool = (first.tools ?? []).find((t) => t.function.name === "reviewer");
    expect(tool?.function.description).toBe("reviews one file");
    expect(JSON.stringify(tool?.function.parameters)).toContain('"path"');
    expect(toolNames(first)).not.toContain("spawn_agent");
    // the child ran with the reviewer's instructions, and its answer reached the lead
    expect(systemOf(sb.server.requests[1]!.body)).toContain("REVIEWER-PROMPT");
    expect(lastUser(sb.server.requests[1]!.body)).toContain("a.ts");
    const toolResult = chatMessages(sb.server.requests[2]!.body).find((m) => m.role === "tool");
    expect(textOf(toolResult?.content)).toContain("LGTM from the reviewer");
  });
  it("an agent's own policy holds in the daemon: its spec's deny stops the call and the model reads why", async () => {
    const sb = await t.sandbox([
      { toolCalls: [{ name: "write_file", arguments: { path: "planted.txt", content: "x" } }] },
      { text: "could not write" },
    ]);
    const opts = { env: sb.env, cwd: sb.cwd };
    expect((await lash(["init"], opts)).code).toBe(0);
    writeFileSync(
      join(sb.cwd, "agents", "writer.agent.md"),
      "---\nname: writer\ndescription: Writes a file.\ntools: [write_file]\npolicy:\n  deny: [write_file]\n---\nWRITER-PROMPT\n",
    );
    expect((await lash(["build"], opts)).code).toBe(0);
    const daemon = await t.daemon(sb);
    const chat = await api(daemon.url, "POST", "/v1/agents/writer/chat", { input: "write it" });
    expect(chat.body).toMatchObject({ state: "completed", text: "could not write" });
    expect(existsSync(join(sb.cwd, "planted.txt"))).toBe(false);
    const toolResult = chatMessages(sb.server.requests[1]!.body).find((m) => m.role === "tool");
    expect(textOf(toolResult?.content)).toContain("agent:writer");
  });
});
