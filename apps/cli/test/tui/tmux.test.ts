// The real `lash` CLI in a real pseudo-terminal (tmux), against the mock wire
// server: type a prompt, see the streamed answer and a tool card, cancel a slow
// tool with Esc, quit with Ctrl+D — and check the screen each time.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxOffWhereBwrapCannotRun } from "../sandbox-mode.ts";

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const TMUX_MISSING =
  "tmux is not installed, and this test drives lash in a real terminal through it. " +
  "Install it (Debian/Ubuntu: `apt-get install tmux`; macOS: `brew install tmux`): it is the one system " +
  "requirement of `pnpm test` beyond Node and npm (README, Quick start).";
const MAIN = join(import.meta.dirname, "..", "..", "src", "main.ts");

function tmux(...args: string[]): string {
  return execFileSync("tmux", args, { encoding: "utf8" });
}

describe("lash in a real terminal (tmux)", () => {
  let root = "";
  let server: MockLlmServer | undefined;
  const name = `lash-tui-${process.pid}-${Date.now()}`;
  const socket = () => join(root, "tmux.sock");
  const tm = (...args: string[]) => tmux("-S", socket(), ...args);
  const screen = () => tm("capture-pane", "-p", "-t", name);

  /** Waits for the screen to satisfy `pred` (the terminal is another process: its screen is what we can observe). */
  const seen: string[] = [];
  async function waitScreen(pred: (s: string) => boolean, what: string, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      last = screen();
      seen.push(last);
      if (pred(last)) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    let stderr = "";
    try {
      stderr = readFileSync(join(root, "stderr.log"), "utf8");
    } catch {
      // not written yet
    }
    throw new Error(`timed out waiting for ${what}; screen:\n${last}\nstderr of lash:\n${stderr}`);
  }

  const replies = (): MockReply[] => [
    {
      text: "Let me look.\n\n",
      toolCalls: [{ id: "c1", name: "shell", arguments: { command: "echo tool-ran-ok" } }],
      usage: { input: 1500, output: 20 },
    },
    {
      text: "## Summary\n\nThe command printed **tool-ran-ok**, streamed in pieces.",
      textChunks: 8,
      chunkDelayMs: 150,
      usage: { input: 1600, output: 30 },
    },
    {
      text: "Starting the slow job.",
      toolCalls: [{ id: "c2", name: "shell", arguments: { command: "echo slow-started; sleep 60" } }],
      usage: { input: 1700, output: 20 },
    },
    { text: "should never be asked for" },
  ];

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "lash-tmux-"));
  });

  afterAll(async () => {
    try {
      tm("kill-server");
    } catch {
      // already gone
    }
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("prompt → streamed answer and tool card → Esc cancels a slow tool → Ctrl+D quits", async () => {
    if (!hasTmux) throw new Error(TMUX_MISSING); // never a silent skip
    // CI runs this with CI=true, which tmux passes on to lash: the TUI must stay interactive
    try {
      tm("kill-server");
    } catch {
      // no server yet
    }
    await server?.close();
    server = await startMockServer({ replies: replies() });
    const attempt = mkdtempSync(join(root, "attempt-"));
    const cwd = join(attempt, "work");
    mkdirSync(cwd);
    const home = join(attempt, "lash-home");
    sandboxOffWhereBwrapCannotRun(home);
    const script = join(attempt, "run.sh");
    const env = {
      HOME: root,
      LASH_HOME: home,
      LASH_MODEL: "openai-compatible/mock",
      OPENAI_COMPATIBLE_BASE_URL: server!.baseUrl("openai-chat"),
      PATH: process.env.PATH ?? "",
      TERM: "xterm-256color",
    };
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        ...Object.entries(env).map(([k, v]) => `export ${k}='${v}'`),
        `'${process.execPath}' '${MAIN}' 2>'${join(root, "stderr.log")}'`,
        'echo "LASH-EXITED $?"',
        "sleep 60",
      ].join("\n"),
      { mode: 0o755 },
    );
    tm("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", cwd, script);

    // the prompt box and the status bar
    const first = await waitScreen((s) => s.includes("ask anything"), "the prompt");
    expect(first).toMatch(/openai-compatible\/mock · standard · ctx/);

    // type a prompt: the streamed answer (markdown rendered) and the shell card appear
    tm("send-keys", "-t", name, "-l", "run the command");
    tm("send-keys", "-t", name, "Enter");
    const answered = await waitScreen(
      (s) => s.includes("streamed in pieces.") && s.includes("ask anything"),
      "the answer",
    );
    expect(answered).toContain("› run the command");
    expect(answered).toContain("● Let me look.");
    expect(answered).toMatch(/● Shell \$ echo tool-ran-ok {2}exit 0 · [\d.]+s/);
    expect(answered).toMatch(/⎿ tool-ran-ok/);
    expect(answered).toContain("● Summary"); // a heading, without the ##
    expect(answered).toContain("The command printed tool-ran-ok, streamed in pieces."); // bold markers gone
    expect(answered).toMatch(/ctx 1\.6k/); // context tokens of the last response
    // it streamed: some screen showed the answer's start before its end had arrived
    expect(seen.some((s) => s.includes("● Summary") && !s.includes("streamed in pieces."))).toBe(true);
    const lines = answered.split("\n");
    expect(lines.filter((l) => l.includes("› run the command")).length).toBe(1); // no duplicated frames

    // a slow tool: the live card shows its output and a spinner; Esc cancels it
    tm("send-keys", "-t", name, "-l", "now the slow one");
    tm("send-keys", "-t", name, "Enter");
    const running = await waitScreen(
      (s) => s.includes("slow-started") && /Running shell… [\d.]+s · esc to cancel/.test(s),
      "the running slow tool",
    );
    expect(running).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Shell \$ echo slow-started; sleep 60/);
    tm("send-keys", "-t", name, "Escape");
    const cancelled = await waitScreen((s) => s.includes("⊘ cancelled"), "the cancel mark", 15_000);
    expect(cancelled).toMatch(/✗ Shell \$ echo slow-started; sleep 60 {2}cancelled/);
    expect(cancelled).toContain("● Starting the slow job.");
    expect(cancelled).toMatch(/⊘ cancelled — the work finished before the cancel is kept/);
    expect(cancelled).toMatch(/ask anything/);
    // the model was not asked again after the cancel
    expect(server!.requests.length).toBe(3);

    // Ctrl+D on the empty prompt quits with exit code 0
    tm("send-keys", "-t", name, "C-d");
    const exited = await waitScreen((s) => s.includes("LASH-EXITED"), "the exit");
    expect(exited).toContain("LASH-EXITED 0");
  }, 240_000);
});
