export * from "./tool.ts";
