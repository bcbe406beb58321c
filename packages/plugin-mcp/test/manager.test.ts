import { ToolFailure } from "@lash/core";
import { Effect, Stream } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import {
  createMcpManager,
  McpManager,
  type McpManagerHandle,
  type McpServerStatus,
  parseMcpConfig,
} from "../src/index.ts";
import { alive, fixtureServer, startHttpMcpServer, startSseMcpServer } from "./helpers.ts";

const open: McpManagerHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});
const manager = async (
  mcpServers: Record<string, unknown>,
  options: Parameters<typeof createMcpManager>[1] = {},
) => {
  const m = await createMcpManager({ mcpServers }, options);
  open.push(m);
  return m;
};
const statusOf = (m: McpManagerHandle, name: string): McpServerStatus => {
  const s = m.status().find((x) => x.name === name);
  if (!s) throw new Error(`no status for ${name}`);
  return s;
};
const failureOf = async (p: Promise<unknown>): Promise<ToolFailure> => {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolFailure);
  return error as ToolFailure;
};
const textOf = (o: { content: readonly { type: string; text?: string }[] }) =>
  o.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");

describe("McpManager against real servers", () => {
  it("connects over stdio and streamable HTTP, lists tools and calls them", async () => {
    const http = await startHttpMcpServer();
    try {
      const m = await manager({
        local: fixtureServer("stdio-server.ts", { LABEL: "local" }),
        remote: { url: http.url, headers: { Authorization: "Bearer s3cret" }, trusted: true },
      });
      const statuses = await m.awaitSettled();
      expect(statuses.map((s) => [s.name, s.transport, s.state, s.toolCount])).toEqual([
        ["local", "stdio", "ready", 8],
        ["remote", "http", "ready", 8],
      ]);
      const local = statusOf(m, "local");
      expect(local.serverInfo).toEqual({ name: "lash-test-local", version: "1.2.3" });
      expect(local.pid && alive(local.pid)).toBe(true);
      expect(statusOf(m, "remote").pid).toBeUndefined();
      expect(http.requests.some((h) => h.authorization === "Bearer s3cret")).toBe(true);

      const tools = await m.tools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect([...byName.keys()].filter((n) => n.startsWith("mcp__local__"))).toEqual([
        "mcp__local__echo",
        "mcp__local__add",
        "mcp__local__pid",
        "mcp__local__sleep",
        "mcp__local__fail",
        "mcp__local__image",
        "mcp__local__crash",
        "mcp__local__add_tool",
      ]);
      const echo = byName.get("mcp__remote__echo");
      expect(echo).toMatchObject({
        description: "Echo the text back.",
        readOnly: true,
        idempotent: true,
        // a trusted server: readOnlyHint believed; openWorldHint absent = true (the MCP default)
        effects: ["read", "network"],
        family: "mcp",
        binding: { module: "mcp.remote", operation: "echo" },
        inputSchema: {
          type: "object",
          properties: { text: { type: "string", description: "what to echo" } },
          required: ["text"],
        },
      });
      expect(echo?.inputSchema.$schema).toBeUndefined();
      expect(byName.get("mcp__local__add")).toMatchObject({ readOnly: false, idempotent: false });
      // an untrusted server's readOnlyHint is not believed: its tools are writes
      expect(byName.get("mcp__local__echo")).toMatchObject({ readOnly: false, effects: ["write"] });
      expect(byName.get("mcp__remote__add")).toMatchObject({
        readOnly: false,
        effects: ["write", "network"],
      });
      expect(byName.get("mcp__local__add_tool")?.binding).toEqual({
        module: "mcp.local",
        operation: "add_tool",
      });

      expect(textOf(await m.callTool("local", "echo", { text: "hi" }))).toBe("local echo: hi");
      expect(textOf(await m.callTool("remote", "echo", { text: "yo" }))).toBe("http echo: yo");
      const sum = await m.callTool("remote", "add", { a: 2, b: 40 });
      expect(sum).toMatchObject({ content: [{ type: "text", text: "42" }], value: { sum: 42 } });
    } finally {
      await http.close();
    }
  });

  it("connects over legacy HTTP+SSE", async () => {
    const sse = await startSseMcpServer();
    try {
      const m = await manager({ legacy: { type: "sse", url: sse.url } });
      const [status] = await m.awaitSettled();
      expect(status).toMatchObject({ name: "legacy", transport: "sse", state: "ready", toolCount: 8 });
      expect(textOf(await m.callTool("legacy", "echo", { text: "old school" }))).toBe("sse echo: old school");
    } finally {
      await sse.close();
    }
  });

  it("maps isError results, bad arguments, images and resources", async () => {
    const m = await manager({ t: fixtureServer("stdio-server.ts") });
    await m.awaitSettled();
    const fail = await m.callTool("t", "fail", {});
    expect(fail).toMatchObject({ isError: true, content: [{ type: "text", text: "the widget is broken" }] });
    const bad = await m.callTool("t", "add", { a: "two" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/Input validation error/);
    const image = await m.callTool("t", "image", {});
    expect(image.isError).toBeUndefined();
    expect(image.content.map((p) => p.type)).toEqual(["text", "attachment", "text", "text"]);
    expect(image.content[1]).toMatchObject({ type: "attachment", mediaType: "image/png" });
    expect(image.content[2]).toEqual({ type: "text", text: "[resource file:///notes.txt]\nnote body" });
    const unknown = await m.callTool("t", "nope", {});
    expect(unknown.isError).toBe(true);
    const noServer = await failureOf(m.callTool("ghost", "x", {}));
    expect(noServer.message).toBe('no MCP server named "ghost" (configured: t)');
  });

  it("an HTTP server that goes away: the call fails naming the server, and the status says why", async () => {
    const http = await startHttpMcpServer();
    const m = await manager({ remote: { url: http.url } }, { backoff: { baseMs: 50, maxAttempts: 2 } });
    await m.awaitSettled();
    expect(statusOf(m, "remote").state).toBe("ready");
    await http.close();
    const failure = await failureOf(m.callTool("remote", "echo", { text: "anyone?" }));
    expect(failure.class).toBe("unavailable");
    expect(failure.message).toMatch(/^MCP server "remote" failed during the call to "echo": transport error/);
    expect(statusOf(m, "remote").state).not.toBe("ready");
    const failed = await Effect.runPromise(
      m.manager.changes.pipe(
        Stream.filter((s) => s.state === "failed"),
        Stream.runHead,
      ),
    );
    expect(failed._tag === "Some" && failed.value.reason).toMatch(
      /cannot reach http:\/\/127\.0\.0\.1:\d+\/mcp.*gave up/,
    );
  });

  it("stops a call at the server's timeoutMs with an error naming the server; the server stays usable", async () => {
    const m = await manager({ t: { ...fixtureServer("stdio-server.ts"), timeoutMs: 300 } });
    await m.awaitSettled();
    const tool = (await m.tools()).find((t) => t.name === "mcp__t__sleep");
    expect(tool?.timeoutMs).toBeGreaterThan(300); // the dispatcher's own timeout leaves ours to answer
    const failure = await failureOf(m.callTool("t", "sleep", { ms: 20_000 }));
    expect(failure).toMatchObject({
      class: "timeout",
      message: 'MCP server "t" did not answer the call to "sleep" within 300 ms.',
    });
    expect(textOf(await m.callTool("t", "echo", { text: "ok" }, { timeoutMs: 30_000 }))).toBe(
      "stdio echo: ok",
    );
    expect(statusOf(m, "t")).toMatchObject({ state: "ready", restarts: 0 });
  });

  it("follows tools/list pagination and sanitizes names deterministically", async () => {
    const m = await manager({ "paged.server": fixtureServer("paged-server.ts") });
    await m.awaitSettled();
    expect(statusOf(m, "paged.server").toolCount).toBe(7);
    expect(m.serverTools("paged.server").map((t) => t.name)).toHaveLength(7);
    const names = (await m.tools()).map((t) => t.name);
    expect(names).toEqual([
      "mcp__paged_server__first",
      "mcp__paged_server__dotted_name_2",
      "mcp__paged_server__dotted_name",
      "mcp__paged_server__spaces_and_slashes",
      `mcp__paged_server__very_long_${"x".repeat(35)}`,
      `mcp__paged_server__very_long_${"x".repeat(33)}_2`,
      "mcp__paged_server__last",
    ]);
    for (const n of names) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const tools = await m.tools();
    const dotted = tools.find((t) => t.name === "mcp__paged_server__dotted_name_2");
    expect(dotted?.binding).toEqual({ module: "mcp.paged_server", operation: "dotted_name" });
    expect(tools.find((t) => t.name === "mcp__paged_server__dotted_name")?.binding).toEqual({
      module: "mcp.paged_server",
      operation: "dotted_name_2",
    });
    // the original (unsanitized) name is what the server receives
    const out = await Effect.runPromise(
      dotted!.execute(
        {},
        { sessionId: "s", callId: "c", attempt: 1, signal: new AbortController().signal, progress: () => {} },
      ),
    );
    expect(textOf(out)).toBe("called dotted.name");
  });

  it("a server that exits mid-call gives an error naming it, and the next call restarts it", async () => {
    const m = await manager({ t: fixtureServer("stdio-server.ts") });
    await m.awaitSettled();
    const firstPid = statusOf(m, "t").pid;
    expect(firstPid).toBeTypeOf("number");
    const failure = await failureOf(m.callTool("t", "crash", {}));
    expect(failure.class).toBe("unavailable");
    expect(failure.message).toMatch(
      /^MCP server "t" failed during the call to "crash": the server process exited/,
    );
    expect(failure.message).toContain("crashing on purpose");
    const again = await m.callTool("t", "pid", {});
    const secondPid = Number(textOf(again));
    expect(secondPid).not.toBe(firstPid);
    const s = statusOf(m, "t");
    expect(s).toMatchObject({ state: "ready", pid: secondPid, restarts: 1, attempts: 2 });
    expect(s.lastError).toMatch(/the server process exited/);
    expect(alive(firstPid as number)).toBe(false);
  });

  it("a server that never answers initialize fails with a reason; the others work", async () => {
    const m = await manager(
      {
        silent: { ...fixtureServer("silent-server.ts"), startupTimeoutMs: 1000 },
        t: fixtureServer("stdio-server.ts"),
      },
      { backoff: { maxAttempts: 1 } },
    );
    await m.awaitSettled();
    const silent = statusOf(m, "silent");
    expect(silent.state).toBe("failed");
    expect(silent.reason).toMatch(/no answer to initialize/);
    expect(silent.pid).toBeUndefined();
    const names = (await m.tools()).map((t) => t.name);
    expect(names).toContain("mcp__t__echo");
    expect(names.some((n) => n.startsWith("mcp__silent__"))).toBe(false);
  });

  it("reports disabled servers, unset variables and missing commands", async () => {
    const m = await manager(
      {
        off: { ...fixtureServer("stdio-server.ts"), enabled: false },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a ${VAR} placeholder under test
        needsToken: { ...fixtureServer("stdio-server.ts"), env: { TOKEN: "${MCP_TEST_UNSET_TOKEN}" } },
        missing: { command: "/nonexistent/mcp-server-binary" },
      },
      { backoff: { maxAttempts: 1 }, env: {} },
    );
    await m.awaitSettled();
    expect(statusOf(m, "off").state).toBe("disabled");
    expect(statusOf(m, "needsToken")).toMatchObject({
      state: "failed",
      reason: expect.stringMatching(/^environment variable MCP_TEST_UNSET_TOKEN not set/),
    });
    expect(statusOf(m, "missing")).toMatchObject({
      state: "failed",
      reason: expect.stringMatching(/command not found/),
    });
    expect(await m.tools()).toEqual([]);
    const off = await failureOf(m.callTool("off", "echo", {}));
    expect(off.message).toMatch(/"off" is disabled/);
  });

  it("re-lists after notifications/tools/list_changed", async () => {
    const m = await manager({ t: fixtureServer("stdio-server.ts") });
    await m.awaitSettled();
    expect((await m.tools()).some((t) => t.name === "mcp__t__late")).toBe(false);
    await m.callTool("t", "add_tool", { name: "late" });
    const tools = await m.tools();
    const late = tools.find((t) => t.name === "mcp__t__late");
    expect(late?.description).toBe("Added at runtime: late.");
    expect(statusOf(m, "t").toolCount).toBe(9);
    expect(textOf(await m.callTool("t", "late", {}))).toBe("hello from late");
  });

  it("publishes status changes (Effect stream and callback) and stops servers with its scope", async () => {
    const seen: string[] = [];
    const pids = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const m = yield* McpManager.make(
            parseMcpConfig({ mcpServers: { t: fixtureServer("stdio-server.ts") } }),
          );
          m.subscribe((s) => seen.push(s.state));
          // the stream starts with the current statuses, so this cannot miss the event it waits for
          const ready = yield* m.changes.pipe(
            Stream.filter((s) => s.state === "ready"),
            Stream.runHead,
          );
          const first = ready._tag === "Some" ? ready.value.pid : undefined;
          yield* m.restart("t");
          const again = yield* m.changes.pipe(
            Stream.filter((s) => s.state === "ready" && s.restarts === 1),
            Stream.runHead,
          );
          return [first, again._tag === "Some" ? again.value.pid : undefined];
        }),
      ),
    );
    const states = seen.filter((s, i) => s !== seen[i - 1]);
    expect(states.slice(states.indexOf("ready"))).toEqual(["ready", "restarting", "ready"]);
    const [first, second] = pids;
    expect(first).toBeTypeOf("number");
    expect(second).toBeTypeOf("number");
    expect(second).not.toBe(first);
    // the scope closed: both processes are gone
    expect(alive(first as number)).toBe(false);
    expect(alive(second as number)).toBe(false);
  });
});
