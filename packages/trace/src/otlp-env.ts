// The standard OpenTelemetry environment variables (and a host's own settings) → `otlpSink` options.
import type { OtlpProtocol, OtlpSinkOptions } from "./otlp.ts";

/** A host's own OTLP settings (e.g. lash's config `trace.otlp`); the environment wins over them. */
export interface OtlpSettings {
  readonly endpoint?: string;
  readonly headers?: { readonly [name: string]: string };
  readonly serviceName?: string;
}

export interface OtlpEnvResult {
  /** The sink's options, or undefined when nothing is to be exported. */
  readonly options?: OtlpSinkOptions;
  /** Why nothing is exported although an endpoint is set (`OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER=none`). */
  readonly disabled?: string;
  /** Settings that were ignored or replaced (an unsupported protocol, a malformed header), one line each. */
  readonly warnings: readonly string[];
}

const nonEmpty = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim());

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** `k=v,k2=v2` (W3C baggage-like, URL-decoded), as in `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES`. */
export function parseOtelPairs(
  text: string,
  variable: string,
  warnings: string[],
  describe: (key: string) => string = () => "",
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(",")) {
    if (part.trim() === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0) {
      // never echo the entry: a header may hold a key
      warnings.push(`${variable}: ignored an entry without "key=value"${describe(part)}`);
      continue;
    }
    out[decode(part.slice(0, eq).trim())] = decode(part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * Reads `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (`/v1/traces` appended), `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`, `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
 * (`http/json`, `http/protobuf`), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SDK_DISABLED`
 * and `OTEL_TRACES_EXPORTER`. Each variable that is set wins over the same setting in `settings`.
 */
export function otlpOptionsFromEnv(
  env: { readonly [name: string]: string | undefined },
  settings: OtlpSettings = {},
): OtlpEnvResult {
  const warnings: string[] = [];
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const baseEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const configured = nonEmpty(settings.endpoint);
  let url: string | undefined;
  if (tracesEndpoint) url = tracesEndpoint;
  else if (baseEndpoint) url = `${baseEndpoint.replace(/\/+$/, "")}/v1/traces`;
  else if (configured) url = configured;
  if (url === undefined) return { warnings };
  if (nonEmpty(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true")
    return { disabled: "OTEL_SDK_DISABLED=true", warnings };
  const exporters = (nonEmpty(env.OTEL_TRACES_EXPORTER) ?? "otlp")
    .split(",")
    .map((s) => s.trim().toLowerCase());
  if (exporters.includes("none")) return { disabled: "OTEL_TRACES_EXPORTER=none", warnings };
  const unknownExporters = exporters.filter((e) => e !== "otlp" && e !== "");
  if (unknownExporters.length)
    warnings.push(
      `OTEL_TRACES_EXPORTER=${unknownExporters.join(",")} is not supported (only otlp); exporting over OTLP/HTTP`,
    );
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http");
  } catch {
    const from = tracesEndpoint
      ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
      : baseEndpoint
        ? "OTEL_EXPORTER_OTLP_ENDPOINT"
        : "trace.otlp.endpoint";
    warnings.push(
      `${from} is not an http(s) URL (${url}); nothing is exported — set it like http://localhost:4318`,
    );
    return { warnings };
  }

  const headers: Record<string, string> = { ...settings.headers };
  for (const name of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) {
    const v = nonEmpty(env[name]);
    if (v) Object.assign(headers, parseOtelPairs(v, name, warnings));
  }

  let protocol: OtlpProtocol = "http/json";
  const protoVar = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL)
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const proto = nonEmpty(env[protoVar])?.toLowerCase();
  if (proto === "http/json" || proto === "http/protobuf") protocol = proto;
  else if (proto !== undefined)
    warnings.push(
      `${protoVar}=${proto} is not supported (lash speaks http/json and http/protobuf); sending http/json to ${url}`,
    );

  const resourceAttributes: Record<string, string> = {};
  const ra = nonEmpty(env.OTEL_RESOURCE_ATTRIBUTES);
  if (ra) Object.assign(resourceAttributes, parseOtelPairs(ra, "OTEL_RESOURCE_ATTRIBUTES", warnings));
  const serviceName =
    nonEmpty(env.OTEL_SERVICE_NAME) ??
    resourceAttributes["service.name"] ??
    nonEmpty(settings.serviceName) ??
    "lash";
  delete resourceAttributes["service.name"];

  return {
    options: {
      url,
      exactUrl: url !== configured,
      protocol,
      serviceName,
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(Object.keys(resourceAttributes).length ? { resourceAttributes } : {}),
    },
    warnings,
  };
}
