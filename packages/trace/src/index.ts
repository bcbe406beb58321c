export { type CliIo, runTraceCli, TRACE_USAGE } from "./cli.ts";
export type { TraceInput, TraceInputBody } from "./input.ts";
export { type JsonlSinkOptions, jsonlSink } from "./jsonl.ts";
export { type OtlpProtocol, type OtlpSinkOptions, otlpSink } from "./otlp.ts";
export { finishReasonFor, type ProviderAttrs, providerOf } from "./otlp-attrs.ts";
export { type OtlpEnvResult, type OtlpSettings, otlpOptionsFromEnv, parseOtelPairs } from "./otlp-env.ts";
export {
  createTraceRecorder,
  errorClassOf,
  type TraceLevel,
  type TracePlugin,
  type TraceRecorder,
  type TraceRecorderOptions,
  type TraceStats,
  traceSpanIds,
} from "./recorder.ts";
export { makeRedactor, REDACTED, type RedactionOptions, type Redactor } from "./redact.ts";
export * from "./schema.ts";
export {
  fanout,
  IsolatedSink,
  type IsolationOptions,
  memorySink,
  type SinkStats,
  type TraceSink,
} from "./sink.ts";
export {
  buildViewerModel,
  escapeHtml,
  renderTraceViewer,
  scriptJson,
  type ViewerModel,
  type ViewerRow,
  type ViewerStats,
} from "./viewer.ts";
