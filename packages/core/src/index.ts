export * from "./store.ts";
export * from "./tool.ts";
