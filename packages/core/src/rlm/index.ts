export * from "./executor.ts";
export * from "./mode.ts";
export * from "./state.ts";
