// OpenTelemetry from the CLI: a real `lash -p` child process exports its spans over OTLP/HTTP
// to a receiver started here, configured by the standard OTEL_* variables or config `trace.otlp`.
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";

type Value = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: Value[] };
};
type Attr = { key: string; value: Value };
interface Span {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Attr[];
  events: { name: string; attributes: Attr[] }[];
  status: { code?: number; message?: string };
}

interface Receiver {
  readonly url: string;
  readonly requests: { path: string; headers: IncomingMessage["headers"]; body: unknown }[];
  spans(): Span[];
  close(): Promise<void>;
}

/** A minimal OTLP/HTTP (JSON) trace receiver on 127.0.0.1. */
async function receiver(): Promise<Receiver> {
  const requests: Receiver["requests"] = [];
  const server: Server = createServer((req, res) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      data += c;
    });
    req.on("end", () => {
      requests.push({ path: req.url ?? "", headers: req.headers, body: JSON.parse(data) });
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans: () =>
      requests.flatMap((q) =>
        (q.body as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }).resourceSpans.flatMap((rs) =>
          rs.scopeSpans.flatMap((ss) => ss.spans),
        ),
      ),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const plain = (v: Value | undefined): unknown =>
  v === undefined
    ? undefined
    : (v.stringValue ??
      (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
      v.doubleValue ??
      v.boolValue ??
      v.arrayValue?.values.map(plain));
const attr = (s: Span, key: string) => plain(s.attributes.find((a) => a.key === key)?.value);

/** Parent spawns an explore child and reads a missing file; the child globs once and answers. */
const script = [
  {
    toolCalls: [
      { id: "spawn1", name: "spawn_agent", arguments: { task: "List the files.", capability: "explore" } },
      { id: "read1", name: "read_file", arguments: { path: "missing.txt" } },
    ],
    usage: { input: 120, output: 30 },
  },
  { toolCalls: [{ id: "g1", name: "glob", arguments: { pattern: "*" } }], usage: { input: 50, output: 10 } },
  { text: "There are no files.", usage: { input: 70, output: 8 } },
  { text: "The child found no files.", usage: { input: 200, output: 12 } },
];

let box: Sandbox | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await box?.cleanup();
  await rx?.close();
  box = undefined;
  rx = undefined;
});

describe("lash -p with OpenTelemetry", () => {
  it("OTEL_EXPORTER_OTLP_ENDPOINT: one span per operation, GenAI attributes, nesting, failures", async () => {
    rx = await receiver();
    box = await sandbox(script);
    const r = await lash(["-p", "how many files?"], {
      env: {
        ...box.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
        OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=s3cr%3Dt-key-1234,x-team=lash",
        OTEL_SERVICE_NAME: "lash-under-test",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
      },
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("The child found no files.");
    expect(r.stderr).not.toContain("warning");
    // headers: URL-decoded, sent, and never printed
    expect(rx.requests.length).toBeGreaterThan(0);
    expect(rx.requests.every((q) => q.path === "/v1/traces")).toBe(true);
    expect(rx.requests[0]!.headers["x-collector-key"]).toBe("s3cr=t-key-1234");
    expect(r.stdout + r.stderr).not.toContain("s3cr");
    const resource = (rx.requests[0]!.body as { resourceSpans: { resource: { attributes: Attr[] } }[] })
      .resourceSpans[0]!.resource.attributes;
    expect(plain(resource.find((a) => a.key === "service.name")?.value)).toBe("lash-under-test");
    expect(plain(resource.find((a) => a.key === "deployment.environment")?.value)).toBe("test");

    const spans = rx.spans();
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const op = (name: string) => spans.filter((s) => attr(s, "gen_ai.operation.name") === name);
    // exactly one span per operation
    const agents = op("invoke_agent");
    expect(agents.map((s) => s.name).sort()).toEqual(["invoke_agent lash", "invoke_agent subagent"]);
    expect(op("chat")).toHaveLength(4);
    expect(
      op("execute_tool")
        .map((s) => attr(s, "gen_ai.tool.name"))
        .sort(),
    ).toEqual(["glob", "read_file", "spawn_agent"]);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);

    // nesting: chat/tool → agent; the subagent under spawn_agent; the child's chat and glob under the subagent
    const [root] = agents.filter((s) => s.name === "invoke_agent lash");
    const sub = agents.find((s) => s.name === "invoke_agent subagent")!;
    expect(root!.parentSpanId ?? "").toBe("");
    const spawn = op("execute_tool").find((s) => attr(s, "gen_ai.tool.name") === "spawn_agent")!;
    const read = op("execute_tool").find((s) => attr(s, "gen_ai.tool.name") === "read_file")!;
    const glob = op("execute_tool").find((s) => attr(s, "gen_ai.tool.name") === "glob")!;
    expect(spawn.parentSpanId).toBe(root!.spanId);
    expect(read.parentSpanId).toBe(root!.spanId);
    expect(sub.parentSpanId).toBe(spawn.spanId);
    expect(glob.parentSpanId).toBe(sub.spanId);
    const chats = op("chat");
    expect(chats.filter((s) => s.parentSpanId === root!.spanId)).toHaveLength(2);
    expect(chats.filter((s) => s.parentSpanId === sub.spanId)).toHaveLength(2);
    for (const s of spans) if (s.parentSpanId) expect(byId.has(s.parentSpanId)).toBe(true);

    // chat attributes: provider, server, model, finish reasons in the vendor's words, usage
    const port = Number(new URL(box.server.baseUrl("openai-chat")).port);
    for (const c of chats) {
      expect(c.name).toBe("chat mock");
      expect(attr(c, "gen_ai.provider.name")).toBe("openai_compatible");
      expect(attr(c, "server.address")).toBe("127.0.0.1");
      expect(attr(c, "server.port")).toBe(port);
      expect(attr(c, "gen_ai.request.model")).toBe("mock");
      expect(attr(c, "gen_ai.system")).toBeUndefined();
      expect(attr(c, "gen_ai.response.id")).toMatch(/^chatcmpl-mock-\d+$/);
    }
    expect(new Set(chats.map((c) => attr(c, "gen_ai.response.id"))).size).toBe(4);
    const first = chats.find((c) => attr(c, "gen_ai.usage.input_tokens") === 120)!;
    expect(first).toBeDefined();
    expect(first.parentSpanId).toBe(root!.spanId);
    expect(attr(first, "gen_ai.usage.output_tokens")).toBe(30);
    expect(attr(first, "gen_ai.response.finish_reasons")).toEqual(["tool_calls"]);
    const last = chats.find((c) => attr(c, "gen_ai.usage.input_tokens") === 200)!;
    expect(attr(last, "gen_ai.response.finish_reasons")).toEqual(["stop"]);
    expect(attr(sub, "gen_ai.usage.input_tokens")).toBe(120);
    expect(attr(sub, "gen_ai.request.model")).toBe("mock");

    // a failed tool: status ERROR, error.type, its message — no "Interrupted", no stack
    expect(read.status.code).toBe(2);
    expect(attr(read, "error.type")).toBeTypeOf("string");
    expect(read.status.message).toContain("missing.txt");
    expect(attr(read, "span.label")).toBeUndefined();
    expect(attr(read, "status.interrupted")).toBeUndefined();
    expect(JSON.stringify(read.events)).not.toContain("stacktrace");
    expect(spawn.status.code ?? 0).not.toBe(2);
  });

  it("--mode rlm: a code cell span with its tool operation, RLM protocol events with their attributes", async () => {
    rx = await receiver();
    box = await sandbox([
      {
        text: 'Reading.\n<lashlang>\na = await files.read({ path: "a.txt" })?\nprint len(a.content)\n</lashlang>\n',
      },
      { text: "Done.\n<lashlang>\nfinish { n: 1 }\n</lashlang>\n" },
    ]);
    writeFileSync(join(box.cwd, "a.txt"), "hello");
    const r = await lash(["-p", "count", "--mode", "rlm"], {
      env: { ...box.env, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url },
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    const spans = rx.spans();
    const cell = spans.find(
      (s) => attr(s, "gen_ai.operation.name") === "execute_code" && attr(s, "lash.code.index") === 1,
    )!;
    expect(cell).toBeDefined();
    expect(attr(cell, "lash.code.language")).toBe("lashlang");
    const agent = spans.find((s) => s.name === "invoke_agent lash")!;
    expect(cell.parentSpanId).toBe(agent.spanId);
    expect(cell.status.code ?? 0).not.toBe(2);
    const read = spans.find((s) => attr(s, "gen_ai.tool.name") === "read_file");
    expect(read?.parentSpanId).toBe(cell.spanId);
    expect(spans.filter((s) => attr(s, "gen_ai.operation.name") === "execute_code")).toHaveLength(2);
    const events = spans.flatMap((s) => s.events);
    const diagnostic = events.find((e) => e.name === "rlm.diagnostic");
    expect(diagnostic).toBeDefined();
    expect(diagnostic!.attributes.map((a) => a.key)).toEqual(
      expect.arrayContaining(["lash.rlm.iteration", "lash.rlm.classification"]),
    );
    expect(events.some((e) => e.name === "rlm.rlm.diagnostic")).toBe(false);
  });

  it("a failed model call: its chat span has status ERROR, error.type and the provider's message", async () => {
    rx = await receiver();
    box = await sandbox([{ error: { code: "badRequest", message: "the mock refuses this request" } }]);
    const r = await lash(["-p", "hi"], {
      env: { ...box.env, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url },
      cwd: box.cwd,
    });
    expect(r.code).toBe(1);
    const spans = rx.spans();
    const chats = spans.filter((s) => attr(s, "gen_ai.operation.name") === "chat");
    expect(chats).toHaveLength(1);
    expect(chats[0]!.status.code).toBe(2);
    expect(attr(chats[0]!, "error.type")).toBe("badRequest");
    expect(chats[0]!.status.message).toContain("the mock refuses this request");
    expect(attr(chats[0]!, "lash.unfinished")).toBeUndefined();
    const agent = spans.find((s) => s.name === "invoke_agent lash")!;
    expect(agent.status.code).toBe(2);
    expect(attr(agent, "error.type")).toBe("providerError");
    expect(agent.status.message).not.toContain("Interrupted");
  });

  it("config trace.otlp exports without the environment variable", async () => {
    rx = await receiver();
    box = await sandbox([{ text: "hello from config" }]);
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      join(box.home, "config.json"),
      JSON.stringify({
        trace: {
          otlp: { endpoint: rx.url, headers: { authorization: "Bearer cfg-token-5678" }, serviceName: "cfg" },
        },
      }),
    );
    const r = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("hello from config");
    expect(rx.requests.length).toBeGreaterThan(0);
    expect(rx.requests[0]!.headers.authorization).toBe("Bearer cfg-token-5678");
    const spans = rx.spans();
    expect(spans.filter((s) => attr(s, "gen_ai.operation.name") === "chat")).toHaveLength(1);
    expect(spans.filter((s) => attr(s, "gen_ai.operation.name") === "invoke_agent")).toHaveLength(1);
    // `lash config` shows the section, never the header's value
    const shown = await lash(["config"], { env: box.env, cwd: box.cwd });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('"otlp"');
    expect(shown.stdout).not.toContain("cfg-token-5678");
  });

  it("OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none send nothing", async () => {
    rx = await receiver();
    box = await sandbox([{ text: "on" }, { text: "one" }, { text: "two" }]);
    // the same run without the switch exports
    const on = await lash(["-p", "hi"], {
      env: { ...box.env, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url },
      cwd: box.cwd,
    });
    expect(on.code).toBe(0);
    expect(rx.requests.length).toBeGreaterThan(0);
    rx.requests.length = 0;
    for (const off of [{ OTEL_SDK_DISABLED: "true" }, { OTEL_TRACES_EXPORTER: "none" }]) {
      const r = await lash(["-p", "hi"], {
        env: { ...box.env, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, ...off },
        cwd: box.cwd,
      });
      expect(r.code).toBe(0);
    }
    expect(box.server.requests.length).toBe(3);
    expect(rx.requests).toHaveLength(0);
  });

  it("a refused collector connection: one clear warning naming the endpoint, the turn succeeds", async () => {
    // a port that was just free: nothing listens there
    const probe = await receiver();
    const dead = probe.url;
    await probe.close();
    box = await sandbox([
      {
        toolCalls: [
          {
            id: "sh1",
            name: "shell",
            arguments: { command: 'echo "headers=[$OTEL_EXPORTER_OTLP_HEADERS]"' },
          },
        ],
      },
      { text: "done anyway" },
    ]);
    const r = await lash(["-p", "go"], {
      env: {
        ...box.env,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${dead}/v1/traces`,
        OTEL_EXPORTER_OTLP_HEADERS: "x-key=hdr-secret-9876",
      },
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("done anyway");
    // the collector's headers never reach a tool's environment (nor the model)
    const toolResult = chatMessages(box.server.requests[1]!.body).find((m) => m.role === "tool");
    expect(textOf(toolResult?.content)).toContain("headers=[]");
    expect(JSON.stringify(box.server.requests.map((q) => q.body))).not.toContain("hdr-secret");
    expect(r.stdout + r.stderr).not.toContain("hdr-secret");
    const warnings = r.stderr.split("\n").filter((l) => l.includes("OpenTelemetry"));
    expect(warnings).toEqual([
      `[lash] warning: connection refused by the OpenTelemetry collector at ${dead}/v1/traces; spans are not exported`,
    ]);
  });

  it("an unsupported OTEL_EXPORTER_OTLP_PROTOCOL is a clear warning; spans still arrive as JSON", async () => {
    rx = await receiver();
    box = await sandbox([{ text: "ok" }]);
    const r = await lash(["-p", "hi"], {
      env: { ...box.env, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported");
    expect(rx.spans().length).toBeGreaterThan(0);
  });
});
