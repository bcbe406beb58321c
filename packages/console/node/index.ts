// @lash/console (node side): the console as a raw route for `lash serve`, with its files
// built from source on first use (node/source.ts) — or, in the packed CLI, embedded.
import { consoleRoute } from "./assets.ts";
import { loadFiles } from "./source.ts";

export { CONTENT_SECURITY_POLICY, type ConsoleFiles, consoleRoute } from "./assets.ts";

/** The route `lash serve` mounts at `/` and `/console/…`. */
export const consoleHandler = () => consoleRoute(loadFiles);
