import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import {
  createTraceRecorder,
  finishReasonFor,
  otlpOptionsFromEnv,
  otlpSink,
  providerOf,
} from "../src/index.ts";

describe("otlpOptionsFromEnv", () => {
  it("nothing set: no exporter, no warning", () => {
    expect(otlpOptionsFromEnv({})).toEqual({ warnings: [] });
  });

  it("OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces; the TRACES endpoint is used as is and wins", () => {
    expect(otlpOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }).options?.url).toBe(
      "http://c:4318/v1/traces",
    );
    const both = otlpOptionsFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:9999/custom",
    }).options!;
    expect(both.url).toBe("http://t:9999/custom");
    expect(both.exactUrl).toBe(true);
    // the sink keeps an exact URL as it is
    expect(otlpSink(both).name).toBe("otlp(http://t:9999/custom)");
  });

  it("the environment wins over the host's settings, setting by setting", () => {
    const settings = { endpoint: "http://cfg:4318", headers: { a: "1", b: "2" }, serviceName: "cfg" };
    const fromConfig = otlpOptionsFromEnv({}, settings).options!;
    expect(fromConfig).toMatchObject({
      url: "http://cfg:4318",
      serviceName: "cfg",
      headers: { a: "1", b: "2" },
    });
    expect(fromConfig.exactUrl).toBe(false);
    const o = otlpOptionsFromEnv(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318",
        OTEL_EXPORTER_OTLP_HEADERS: "b=env%20b,c=3",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "c=traces",
        OTEL_SERVICE_NAME: "env-svc",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,team=a%2Cb",
      },
      settings,
    ).options!;
    expect(o.url).toBe("http://env:4318/v1/traces");
    expect(o.headers).toEqual({ a: "1", b: "env b", c: "traces" });
    expect(o.serviceName).toBe("env-svc");
    expect(o.resourceAttributes).toEqual({ "deployment.environment": "prod", team: "a,b" });
  });

  it("service.name from OTEL_RESOURCE_ATTRIBUTES when OTEL_SERVICE_NAME is absent", () => {
    const o = otlpOptionsFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attrs",
    }).options!;
    expect(o.serviceName).toBe("from-attrs");
    expect(o.resourceAttributes).toBeUndefined();
  });

  it("OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn even a configured endpoint off", () => {
    const settings = { endpoint: "http://cfg:4318" };
    expect(otlpOptionsFromEnv({ OTEL_SDK_DISABLED: "TRUE" }, settings)).toEqual({
      disabled: "OTEL_SDK_DISABLED=true",
      warnings: [],
    });
    expect(otlpOptionsFromEnv({ OTEL_TRACES_EXPORTER: "none" }, settings).disabled).toBe(
      "OTEL_TRACES_EXPORTER=none",
    );
    expect(otlpOptionsFromEnv({ OTEL_SDK_DISABLED: "false" }, settings).options?.url).toBe("http://cfg:4318");
  });

  it("protocols: http/json, http/protobuf; anything else is a warning and JSON", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };
    expect(otlpOptionsFromEnv(env).options?.protocol).toBe("http/json");
    expect(
      otlpOptionsFromEnv({ ...env, OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" }).options?.protocol,
    ).toBe("http/protobuf");
    const grpc = otlpOptionsFromEnv({ ...env, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" });
    expect(grpc.options?.protocol).toBe("http/json");
    expect(grpc.warnings).toEqual([
      "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc is not supported (lash speaks http/json and http/protobuf); sending http/json to http://c:4318/v1/traces",
    ]);
  });

  it("a malformed header entry is a warning that never echoes it; a non-http endpoint exports nothing", () => {
    const o = otlpOptionsFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "sk-secret-value-123,k=v",
    });
    expect(o.options?.headers).toEqual({ k: "v" });
    expect(o.warnings.join("\n")).not.toContain("sk-secret");
    expect(o.warnings).toHaveLength(1);
    const bad = otlpOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" });
    expect(bad.options).toBeUndefined();
    expect(bad.warnings[0]).toContain("OTEL_EXPORTER_OTLP_ENDPOINT is not an http(s) URL");
  });
});

describe("GenAI attribute values", () => {
  it("names the provider and the server behind a base URL", () => {
    expect(providerOf("openai", undefined)).toEqual({ name: "openai", address: "api.openai.com", port: 443 });
    expect(providerOf("google", undefined).name).toBe("gcp.gemini");
    expect(providerOf("anthropic", "http://127.0.0.1:8080")).toEqual({
      name: "anthropic",
      address: "127.0.0.1",
      port: 8080,
    });
    expect(providerOf("openai-compatible", "https://openrouter.ai/api/v1").name).toBe("openrouter");
    expect(providerOf("openai-compatible", "https://api.groq.com/openai/v1").name).toBe("groq");
    expect(providerOf("openai-compatible", "http://localhost:11434/v1")).toEqual({
      name: "ollama",
      address: "localhost",
      port: 11434,
    });
    expect(providerOf("openai-compatible", "http://127.0.0.1:8000/v1").name).toBe("openai_compatible");
  });

  it("maps lash's stop reasons back to each vendor's words", () => {
    expect(finishReasonFor("openai", "toolUse")).toBe("tool_calls");
    expect(finishReasonFor("openai-compatible", "outputLimit")).toBe("length");
    expect(finishReasonFor("anthropic", "toolUse")).toBe("tool_use");
    expect(finishReasonFor("anthropic", "stop")).toBe("end_turn");
    expect(finishReasonFor("google", "outputLimit")).toBe("MAX_TOKENS");
    expect(finishReasonFor("anthropic", "cancelled")).toBe("cancelled");
  });
});

describe("otlpSink over http/protobuf", () => {
  it("posts application/x-protobuf to the collector", async () => {
    const got: { type?: string; bytes: number }[] = [];
    const server = createServer((req, res) => {
      let n = 0;
      req.on("data", (c: Buffer) => {
        n += c.length;
      });
      req.on("end", () => {
        got.push({ type: req.headers["content-type"], bytes: n });
        res.writeHead(200);
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const recorder = createTraceRecorder({
      sinks: [otlpSink({ url, protocol: "http/protobuf" })],
      redact: { env: {} },
    });
    recorder.record({
      type: "turnStarted",
      sessionId: "s",
      turnId: "t",
      seq: 0,
      at: 1,
      model: "openai/gpt-5-mini",
      resumed: false,
      input: [],
    } as never);
    recorder.record({
      type: "turnFinished",
      sessionId: "s",
      turnId: "t",
      seq: 1,
      at: 2,
      outcome: { type: "finished", finish: { kind: "assistantMessage" } },
      usage: {},
    } as never);
    await recorder.close();
    await new Promise<void>((r) => server.close(() => r()));
    expect(got.length).toBeGreaterThan(0);
    expect(got[0]!.type).toBe("application/x-protobuf");
    expect(got[0]!.bytes).toBeGreaterThan(0);
  });
});

describe("otlpSink export failures", () => {
  const turn = (recorder: ReturnType<typeof createTraceRecorder>, sessionId: string) => {
    recorder.record({
      type: "turnStarted",
      sessionId,
      turnId: "t",
      seq: 0,
      at: 1,
      model: "openai/gpt-5-mini",
      resumed: false,
      input: [],
    } as never);
    recorder.record({
      type: "turnFinished",
      sessionId,
      turnId: "t",
      seq: 1,
      at: 2,
      outcome: { type: "finished", finish: { kind: "assistantMessage" } },
      usage: {},
    } as never);
  };

  it("an HTTP error from the collector is reported once, naming it", async () => {
    let posts = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        posts++;
        res.writeHead(401);
        res.end("no");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const errors: string[] = [];
    const recorder = createTraceRecorder({
      sinks: [otlpSink({ url, onExportError: (m) => errors.push(m) })],
      redact: { env: {} },
    });
    turn(recorder, "s1");
    await recorder.flush();
    turn(recorder, "s2");
    await recorder.close();
    await new Promise<void>((r) => server.close(() => r()));
    expect(posts).toBe(2);
    expect(errors).toEqual([
      `the OpenTelemetry collector at ${url}/v1/traces answered HTTP 401; spans are not exported`,
    ]);
  });

  it("a collector that never answers: the flush ends at its bound and says so once", async () => {
    const pending: import("node:http").ServerResponse[] = [];
    const server = createServer((req, res) => {
      req.resume();
      pending.push(res);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
    const errors: string[] = [];
    const recorder = createTraceRecorder({
      sinks: [otlpSink({ url, shutdownTimeoutMs: 200, onExportError: (m) => errors.push(m) })],
      redact: { env: {} },
    });
    turn(recorder, "s1");
    await recorder.close();
    for (const res of pending) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    expect(pending.length).toBeGreaterThan(0);
    expect(errors).toEqual([
      `the OpenTelemetry collector at ${url} did not answer in time; spans may be lost`,
    ]);
  });
});
