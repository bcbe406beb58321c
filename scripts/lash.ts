// `pnpm lash …` runs the CLI from source once apps/cli has its entry point.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const entry = join(import.meta.dirname, "..", "apps", "cli", "src", "main.ts");
if (existsSync(entry)) {
  await import(pathToFileURL(entry).href);
} else {
  process.stdout.write(
    "lash: the terminal agent (apps/cli) is not built yet.\n" +
      "What works today is listed in the README's status table; `pnpm test` runs the test suites.\n",
  );
}
