// The TUI implementation behind `index.ts` (loaded with React's production build).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { render } from "ink";
import React from "react";
import type { RunTui, TuiOptions } from "../context.ts";
import { TuiController } from "./controller.ts";
import { History } from "./editor.ts";
import { App, type FrameShape } from "./view/app.ts";

export { TuiController } from "./controller.ts";
export { History } from "./editor.ts";
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

export interface MountOptions {
  readonly stdout: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  readonly history?: History;
  readonly onSubmitted?: (text: string) => void;
  /** Called after every frame with ink's render time (ms). */
  readonly onRender?: (metrics: { renderTime: number }) => void;
  readonly maxFps?: number;
  /** Ask the terminal for the kitty keyboard protocol (Shift+Enter). Default true. */
  readonly kittyKeyboard?: boolean;
}

/**
 * A narrower terminal re-wraps the rows of the frame on screen (tmux, VTE, kitty, iTerm2, WezTerm,
 * Windows Terminal), so the frame takes more rows than ink erases before drawing it again: the
 * old prompt box stayed on screen twice. Before ink's own resize handler runs, erase the extra rows
 * the re-wrap made, from the last frame's row widths.
 */
function eraseRewrappedFrame(stdout: NodeJS.WriteStream, shape: FrameShape): () => void {
  return () => {
    const columns = stdout.columns;
    if (!columns || columns >= shape.columns || shape.widths.length === 0) return;
    const before = shape.widths.length;
    let after = 0;
    for (const w of shape.widths) after += Math.max(1, Math.ceil(w / columns));
    if (after <= before) return;
    // the cursor is on the row below the re-wrapped frame: up to its top, erase to the end of the
    // screen, and down to where ink expects the bottom of the frame it erases
    stdout.write(`\x1b[${after}A\r\x1b[0J\x1b[${before}B`);
    shape.columns = columns;
  };
}

/** Render the TUI for a controller on the given streams (runTui, benchmarks). */
export function mountTui(controller: TuiController, options: MountOptions): ReturnType<typeof render> {
  const frameShape: FrameShape = { columns: 0, widths: [] };
  // registered before ink's listener, so it runs first
  const onResize = eraseRewrappedFrame(options.stdout, frameShape);
  if (options.stdout.isTTY === true) options.stdout.on("resize", onResize);
  const instance = render(
    React.createElement(App, {
      controller,
      frameShape,
      ...(options.history ? { history: options.history } : {}),
      ...(options.onSubmitted ? { onSubmitted: options.onSubmitted } : {}),
    }),
    {
      stdout: options.stdout,
      stdin: options.stdin,
      exitOnCtrlC: false,
      patchConsole: true,
      // a real terminal is interactive even when CI=true is set in it (ink would otherwise
      // write only static output and defer every live frame until exit)
      ...(options.stdout.isTTY === true ? { interactive: true } : {}),
      incrementalRendering: true,
      maxFps: options.maxFps ?? 30,
      ...(options.onRender ? { onRender: options.onRender } : {}),
      ...(options.kittyKeyboard === false
        ? {}
        : { kittyKeyboard: { mode: "auto" as const, flags: ["disambiguateEscapeCodes" as const] } }),
    },
  );
  const off = () => void options.stdout.off("resize", onResize);
  instance.waitUntilExit().then(off, off);
  return instance;
}

export const runTuiImpl: RunTui = async (options: TuiOptions): Promise<number> => {
  const { ctx } = options;
  const stdout = options.stdout ?? process.stdout;
  const stdin = options.stdin ?? process.stdin;
  const entries = loadHistory(ctx.paths.home);
  const history = new History(entries, HISTORY_MAX);
  let instance: ReturnType<typeof render> | undefined;
  const controller = new TuiController(ctx, {
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.pick ? { pick: true } : {}),
    ...(options.finishPending ? { finish: true } : {}),
    maxLiveLines: Math.max(6, (stdout.rows || 40) - 16),
    // `/clear`, and only it, erases the scrollback
    clearScreen: () => {
      instance?.clear();
      // erase the screen and the scrollback, cursor home
      stdout.write("\x1b[2J\x1b[3J\x1b[H");
    },
    // Ctrl+L: erase the live frame, scroll what the screen shows into the scrollback (every
    // terminal keeps it: no erase sequence), and let the next frame draw at the top
    repaint: () => {
      instance?.clear();
      const rows = stdout.rows || 24;
      stdout.write(`\x1b[${rows};1H${"\n".repeat(rows)}\x1b[H`);
    },
  });
  instance = mountTui(controller, {
    stdout,
    stdin,
    history,
    onSubmitted: (text: string) => {
      entries.push(text);
      saveHistory(ctx.paths.home, entries);
    },
    kittyKeyboard: process.env.LASH_KITTY_KEYBOARD !== "0",
  });
  // a SIGTERM/SIGHUP while the TUI runs: cancel the turn, commit, leave
  const onSignal = () => void controller.quit();
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  try {
    await controller.start(options.initialPrompt);
    await instance.waitUntilExit();
    const hint = controller.resumeHint();
    if (hint) stdout.write(`${hint}\n`);
    return controller.forced ? 130 : 0;
  } catch (err) {
    instance.unmount();
    process.stderr.write(`lash: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGHUP", onSignal);
  }
};
