/**
 * @lash/sansio/internal — everything the kernel's modules export, for lash's
 * own packages (the host in @lash/core renders the RLM prompt and cells with
 * these) and this package's tests.
 *
 * UNSTABLE: not part of the public API, not covered by the API report, and may
 * change in any release. Hosts import from "@lash/sansio".
 */
export * from "./accumulate.ts";
export * from "./activity.ts";
export * from "./driver.ts";
export * from "./hash.ts";
export * from "./llm.ts";
export * from "./machine.ts";
export * from "./message.ts";
export * from "./rlm/index.ts";
export * from "./standard.ts";
export * from "./turn.ts";
export * from "./usage.ts";
