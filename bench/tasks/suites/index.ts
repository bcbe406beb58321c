import type { SuiteAdapter } from "../lib/types.ts";
import { clBench } from "./clbench/adapter.ts";
import { longCot } from "./longcot/adapter.ts";
import { longMemEval } from "./longmemeval/adapter.ts";
import { sweBench } from "./swebench/adapter.ts";

export const suites: Readonly<Record<string, SuiteAdapter>> = {
  longmemeval: longMemEval,
  longcot: longCot,
  swebench: sweBench,
  clbench: clBench,
};
