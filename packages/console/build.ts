// `pnpm --filter @lash/console build`: bundles the console into dist/<stamp>/ (see node/source.ts),
// the same build the daemon makes on first use when it runs from the repository.
import { join } from "node:path";
import { DIST_DIR, sourceStamp } from "./node/build.ts";
import { loadFiles } from "./node/source.ts";

const started = performance.now();
const built = await loadFiles();
process.stdout.write(
  `lash console: ${Object.keys(built.files).join(", ")} in ${(performance.now() - started).toFixed(0)} ms (${join(DIST_DIR, sourceStamp())})\n`,
);
