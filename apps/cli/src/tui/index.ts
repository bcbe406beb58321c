// `lash` interactive mode: renders the TUI for a CliContext and resolves with
// the exit code when the user leaves.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { render } from "ink";
import React from "react";
import type { RunTui, TuiOptions } from "../context.ts";
import { TuiController } from "./controller.ts";
import { History } from "./editor.ts";
import { App } from "./view/app.ts";

export { TuiController } from "./controller.ts";
export { App } from "./view/app.ts";

const HISTORY_FILE = "prompt-history.json";
const HISTORY_MAX = 500;

function loadHistory(home: string): string[] {
  try {
    const v = JSON.parse(readFileSync(join(home, HISTORY_FILE), "utf8")) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string").slice(-HISTORY_MAX) : [];
  } catch {
    return [];
  }
}

function saveHistory(home: string, entries: readonly string[]): void {
  try {
    const path = join(home, HISTORY_FILE);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify(entries.slice(-HISTORY_MAX)));
  } catch {
    // history is a convenience
  }
}

export const runTui: RunTui = async (options: TuiOptions): Promise<number> => {
  const { ctx } = options;
  const stdout = options.stdout ?? process.stdout;
  const stdin = options.stdin ?? process.stdin;
  const entries = loadHistory(ctx.paths.home);
  const history = new History(entries, HISTORY_MAX);
  let instance: ReturnType<typeof render> | undefined;
  const controller = new TuiController(ctx, {
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    maxLiveLines: Math.max(6, (stdout.rows || 40) - 16),
    clearScreen: () => {
      instance?.clear();
      // erase the screen and the scrollback, cursor home
      stdout.write("\x1b[2J\x1b[3J\x1b[H");
    },
  });
  instance = render(
    React.createElement(App, {
      controller,
      history,
      onSubmitted: (text: string) => {
        entries.push(text);
        saveHistory(ctx.paths.home, entries);
      },
    }),
    {
      stdout,
      stdin,
      exitOnCtrlC: false,
      patchConsole: true,
      incrementalRendering: true,
      maxFps: 30,
      kittyKeyboard: { mode: "auto", flags: ["disambiguateEscapeCodes"] },
    },
  );
  // a SIGTERM/SIGHUP while the TUI runs: cancel the turn, commit, leave
  const onSignal = () => void controller.quit();
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  try {
    await controller.start(options.initialPrompt);
    await instance.waitUntilExit();
    return 0;
  } catch (err) {
    instance.unmount();
    process.stderr.write(`lash: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGHUP", onSignal);
  }
};
