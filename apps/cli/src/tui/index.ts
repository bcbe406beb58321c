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
  // NO_COLOR (https://no-color.org): ink's chalk reads FORCE_COLOR once, when it loads
  const noColor = !!process.env.NO_COLOR && process.env.FORCE_COLOR === undefined;
  if (noColor) process.env.FORCE_COLOR = "0";
  try {
    return await import("./mount.ts");
  } finally {
    if (prev === undefined) delete process.env.NODE_ENV;
    if (noColor) delete process.env.FORCE_COLOR;
  }
}

export const runTui: RunTui = async (options) => {
  const { runTuiImpl } = await load();
  const { setTheme, themeFromEnv } = await import("./theme.ts");
  setTheme(themeFromEnv());
  return runTuiImpl(options);
};
