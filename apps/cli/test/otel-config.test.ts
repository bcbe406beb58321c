// Config `trace.otlp` and the secrets OpenTelemetry brings: collector headers (config and
// OTEL_EXPORTER_OTLP_[TRACES_]HEADERS) are redacted, kept out of tool environments, never shown.
import { describe, expect, it } from "vitest";
import { redactConfig, validateConfig } from "../src/config.ts";
import { secretsOf } from "../src/create-context.ts";
import { CliError } from "../src/errors.ts";

describe("config trace.otlp", () => {
  it("accepts endpoint, headers and serviceName; an unknown key is a usage error naming it", () => {
    const c = validateConfig(
      {
        trace: {
          otlp: {
            endpoint: "http://localhost:4318",
            headers: { "x-api-key": "k-123456" },
            serviceName: "svc",
          },
        },
      },
      "c.json",
    );
    expect(c.trace?.otlp).toEqual({
      endpoint: "http://localhost:4318",
      headers: { "x-api-key": "k-123456" },
      serviceName: "svc",
    });
    let message = "";
    try {
      validateConfig({ trace: { otlp: { url: "http://x" } } }, "c.json");
    } catch (e) {
      expect(e).toBeInstanceOf(CliError);
      message = (e as Error).message;
    }
    expect(message).toContain('unknown key "url"');
  });

  it("lash config shows the section with every header value redacted", () => {
    const shown = redactConfig({
      trace: {
        otlp: {
          endpoint: "http://c:4318",
          headers: { "x-team": "abcdefgh", authorization: "Bearer t-1234567" },
        },
      },
    });
    expect(shown.trace?.otlp?.endpoint).toBe("http://c:4318");
    expect(JSON.stringify(shown)).not.toContain("abcdefgh");
    expect(JSON.stringify(shown)).not.toContain("t-1234567");
  });

  it("secretsOf: the header variables are secret names; config and variable header values are redacted", () => {
    const s = secretsOf(
      { trace: { otlp: { headers: { "x-team": "team-secret-1", authorization: "Bearer cfg-tok-99" } } } },
      {
        OTEL_EXPORTER_OTLP_HEADERS: "api-key=env%2Dsecret-42,x=ab",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "authorization=Basic%20basic-tok-77",
      },
    );
    expect(s.names).toEqual(
      expect.arrayContaining(["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]),
    );
    const values = s.values.map((v) => v.value);
    expect(values).toEqual(
      expect.arrayContaining([
        "team-secret-1",
        "Bearer cfg-tok-99",
        "cfg-tok-99",
        "env-secret-42",
        "Basic basic-tok-77",
        "basic-tok-77",
      ]),
    );
    // too short to redact safely (it would mangle ordinary output)
    expect(values).not.toContain("ab");
  });
});
