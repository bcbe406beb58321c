export * from "./cell.ts";
export * from "./driver.ts";
export * from "./history.ts";
export * from "./prompt.ts";
export * from "./stream-mask.ts";
export * from "./types.ts";
