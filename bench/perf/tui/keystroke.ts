// Keystroke to echo in a real terminal: the `lash` CLI in tmux (120x40) against the mock wire
// server; a character is typed with `tmux send-keys` and the pane is read until the prompt shows
// it. Idle, then while a long answer streams.
//   pnpm exec node bench/perf/tui/keystroke.ts [--json out.json] [--keys 40]
// The figure includes tmux's own work (send-keys, capture-pane, a process each): it is what a
// user of tmux sees, not lash alone (run.ts has lash's own stdin-to-frame time).
import { startLash } from "../../../apps/cli/test/tui/tmux-harness.ts";
import { argValue, markdownTable, median, percentile, report } from "../util.ts";

const keys = Number(argValue("--keys") ?? "40");

const long = Array.from(
  { length: 60 },
  (_, i) => `Paragraph ${i}: the quick brown fox jumps over the lazy dog while tokens stream in.`,
).join("\n\n");

const lash = await startLash({
  cols: 120,
  rows: 40,
  replies: [{ text: "ok" }, { text: long, textChunks: 600, chunkDelayMs: 40 }],
});

/** Type one character and wait until the prompt row ends with the typed text. */
async function echo(typed: string): Promise<number> {
  const t0 = performance.now();
  lash.type(typed.slice(-1));
  for (;;) {
    const s = lash.screen();
    if (
      s.split("\n").some((l) => l.startsWith(`› ${typed}`) && !l.startsWith(`› ${typed}${typed.slice(-1)}`))
    )
      return performance.now() - t0;
    // the mock server streams from this process: let it run between reads
    await new Promise((r) => setImmediate(r));
  }
}

async function series(label: string): Promise<number[]> {
  const out: number[] = [];
  let typed = "";
  for (let i = 0; i < keys; i++) {
    typed += String.fromCharCode(97 + (i % 26));
    out.push(await echo(typed));
  }
  // clear the prompt for the next series
  lash.keys("C-u");
  await lash.waitScreen((s) => !s.includes(`› ${typed}`), `${label}: the prompt cleared`);
  return out;
}

/** Time of one capture-pane (the floor of every figure). */
function captureCost(): number {
  const t0 = performance.now();
  for (let i = 0; i < 20; i++) lash.screen();
  return (performance.now() - t0) / 20;
}

try {
  await lash.waitScreen((s) => s.includes("ask anything"), "the prompt");
  lash.type("warm up");
  lash.keys("Enter");
  await lash.waitScreen((s) => s.includes("● ok") && s.includes("ask anything"), "the first answer");
  const floor = captureCost();
  const idle = await series("idle");
  lash.type("stream a long answer");
  lash.keys("Enter");
  await lash.waitScreen((s) => s.includes("Paragraph 3"), "the stream");
  const streaming = await series("streaming");
  const stillStreaming = !lash.screen().includes("Paragraph 59");
  const rows = [
    ["idle", idle.length, median(idle).toFixed(1), percentile(idle, 95).toFixed(1), floor.toFixed(1)],
    [
      `mid-stream${stillStreaming ? "" : " (the stream ended before the last key)"}`,
      streaming.length,
      median(streaming).toFixed(1),
      percentile(streaming, 95).toFixed(1),
      floor.toFixed(1),
    ],
  ];
  report({
    name: "tui-keystroke",
    title: "TUI keystroke to echo in tmux (120x40)",
    table: markdownTable(["when", "keys", "median ms", "p95 ms", "capture-pane ms (floor)"], rows),
    results: [
      {
        when: "idle",
        keys: idle.length,
        medianMs: median(idle),
        p95Ms: percentile(idle, 95),
        captureMs: floor,
      },
      {
        when: "streaming",
        keys: streaming.length,
        medianMs: median(streaming),
        p95Ms: percentile(streaming, 95),
        captureMs: floor,
      },
    ],
    notes: [
      "A character typed with tmux send-keys, then capture-pane until the prompt shows it; the time includes a send-keys and at least one capture-pane process (the floor column).",
    ],
  });
} finally {
  await lash.close();
}
process.exit(0);
