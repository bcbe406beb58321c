// The shell sandbox of the CLI tests, explicitly: bwrap (the CLI's default on Linux) where it can
// run, else `policy.sandbox.mode: "off"` in the test's LASH_HOME config — so tests that run
// `shell` through the CLI pass on a machine without bubblewrap too.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bwrapStatus } from "@lash/policy";

export const SANDBOX_MODE: "bwrap" | "off" = bwrapStatus().available ? "bwrap" : "off";

/** Writes `{"policy": {"sandbox": {"mode": "off"}}}` as LASH_HOME's config where bwrap cannot run. */
export function sandboxOffWhereBwrapCannotRun(home: string): void {
  if (SANDBOX_MODE === "bwrap") return;
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ policy: { sandbox: { mode: "off" } } }));
}
