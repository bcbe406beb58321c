// `lash` interactive mode: renders the TUI for a CliContext and resolves with
// the exit code when the user leaves.
import type { RunTui } from "../context.ts";

/**
 * React and its reconciler pick their development or production build from
 * NODE_ENV when first loaded; the development build is several times slower and
 * allocates far more. Load them as production without leaking NODE_ENV into the
 * environment the agent's shell commands inherit.
 */
async function load(): Promise<typeof import("./mount.ts")> {
  const prev = process.env.NODE_ENV;
  if (prev === undefined) process.env.NODE_ENV = "production";
  try {
    return await import("./mount.ts");
  } finally {
    if (prev === undefined) delete process.env.NODE_ENV;
  }
}

export const runTui: RunTui = async (options) => {
  const { runTuiImpl } = await load();
  return runTuiImpl(options);
};
