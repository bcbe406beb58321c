import type { SuiteAdapter } from "../lib/types.ts";
import { longCot } from "./longcot/adapter.ts";
import { longMemEval } from "./longmemeval/adapter.ts";

export const suites: Readonly<Record<string, SuiteAdapter>> = {
  longmemeval: longMemEval,
  longcot: longCot,
};
