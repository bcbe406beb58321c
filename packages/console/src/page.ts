// What every page component receives from the shell.
import type { Params } from "./router.ts";

export interface PageProps {
  /** The route's parameters (`/runs/:id` → `{ id }`). */
  readonly params: Params;
}
