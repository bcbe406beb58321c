/**
 * @lash/core/internal — everything @lash/core's modules export, for lash's own
 * packages (subagents, tools, the CLI, benchmarks) and this package's tests.
 *
 * UNSTABLE: not part of the public API, not covered by the API report, and may
 * change in any release. Hosts import from "@lash/core".
 */
export * from "./activity.ts";
export * from "./budget.ts";
export * from "./capabilities.ts";
export * from "./dispatch.ts";
export * from "./facade.ts";
export * from "./host.ts";
export * from "./hub.ts";
export * from "./journal.ts";
export * from "./jsonschema.ts";
export * from "./llm-query.ts";
export * from "./plugin.ts";
export * from "./rlm/index.ts";
export * from "./runtime.ts";
export * from "./secrets.ts";
export * from "./services.ts";
export * from "./store/artifacts.ts";
export * from "./store/errors.ts";
export * from "./store/lock-holders.ts";
export * from "./store/memory.ts";
export * from "./store/promise.ts";
export * from "./store/rows.ts";
export * from "./store/schema.ts";
export * from "./store/sqlite.ts";
export * from "./store/sqlite-repair.ts";
export * from "./store.ts";
export * from "./tool.ts";
