export * from "./accumulate.ts";
export * from "./hash.ts";
export * from "./llm.ts";
export * from "./message.ts";
export * from "./usage.ts";
