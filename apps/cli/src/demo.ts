// `lash demo`: a scripted session against the built-in mock wire server. Real runtime, real tools on a
// temporary workspace, real SQLite, real HTTP on 127.0.0.1 — only the model's replies are scripted.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LashRuntime, type TurnActivity } from "@lash/core";
import { type MockReply, startMockServer } from "@lash/providers/testing";
import { Effect } from "effect";
import type { DemoFlags } from "./args.ts";
import { loadConfig } from "./config.ts";
import { createCliContext, type LocalContext } from "./create-context.ts";
import { CliError, ExitCode } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { resolvePaths } from "./paths.ts";
import { renderTranscript } from "./sessions.ts";

export const DEMO_MODEL = "openai-compatible/lash-demo";

const NOTE = "# Hello from lash\n\nThis file was written by a tool call in `lash demo`.\n";

/** The scripted replies, in request order. */
export function demoScript(): MockReply[] {
  const slow = { chunkDelayMs: 25 };
  return [
    {
      text: "I'll write a small note, read it back, and check it with a shell command.",
      textChunks: 8,
      ...slow,
      toolCalls: [{ name: "write_file", arguments: { path: "notes/hello.md", content: NOTE } }],
      usage: { input: 812, output: 64 },
    },
    {
      toolCalls: [{ name: "read_file", arguments: { path: "notes/hello.md" } }],
      usage: { input: 905, output: 22 },
    },
    {
      toolCalls: [{ name: "shell", arguments: { command: "wc -l notes/hello.md && ls notes" } }],
      usage: { input: 980, output: 25 },
    },
    {
      text: "Done. I wrote `notes/hello.md`, read it back (3 lines, as written), and `wc` agrees. Every step above was a real tool call on a temporary workspace; the session is stored in SQLite.",
      textChunks: 16,
      ...slow,
      usage: { input: 1090, output: 48 },
    },
    {
      text: "In this session I wrote notes/hello.md, read it back and ran `wc -l` on it. I know because lash reloaded the whole conversation from its database before this turn.",
      textChunks: 12,
      ...slow,
      usage: { input: 1210, output: 40 },
    },
  ];
}

function renderer(io: MainIO) {
  let inText = false;
  const endText = () => {
    if (inText) io.stdout.write("\n");
    inText = false;
  };
  const short = (v: unknown) => {
    const s = JSON.stringify(v) ?? "";
    return s.length > 100 ? `${s.slice(0, 97)}...` : s;
  };
  return {
    endText,
    onEvent(e: TurnActivity) {
      switch (e.type) {
        case "textDelta":
          if (!inText) io.stdout.write("  assistant: ");
          inText = true;
          io.stdout.write(e.text);
          break;
        case "toolStarted":
          endText();
          io.stdout.write(`  ⚙ ${e.name} ${short(e.args)}\n`);
          break;
        case "toolCompleted": {
          const text = e.content.map((c) => (c.type === "text" ? c.text : "")).join("");
          const first = text.split("\n").find((l) => l.trim() !== "") ?? "";
          io.stdout.write(
            `    ${e.isError ? "✗" : "✓"} ${Math.round(e.durationMs)}ms  ${first.slice(0, 90)}${text.includes("\n") ? " …" : ""}\n`,
          );
          break;
        }
        case "turnFinished":
          endText();
          break;
      }
    },
  };
}

async function turn(ctx: LocalContext, sessionId: string, text: string, onEvent: (e: TurnActivity) => void) {
  return ctx.rt.runPromise(
    Effect.flatMap(LashRuntime, (rt) => rt.turn(sessionId, { text }, { onEvent, resumePending: false })),
  );
}

export async function runDemo(flags: DemoFlags, io: MainIO): Promise<number> {
  const say = (s: string) => io.stdout.write(`${s}\n`);
  const workspace = mkdtempSync(join(tmpdir(), "lash-demo-ws-"));
  const tempHome = flags.keep ? undefined : mkdtempSync(join(tmpdir(), "lash-demo-home-"));
  const env: NodeJS.ProcessEnv = { ...io.env, ...(tempHome ? { LASH_HOME: tempHome } : {}) };
  const paths = resolvePaths(env, workspace);
  const server = await startMockServer({ replies: demoScript() });
  const providerEnv: NodeJS.ProcessEnv = {
    ...env,
    OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
    OPENAI_COMPATIBLE_API_KEY: "demo",
  };
  const open = () =>
    createCliContext({
      settings: { model: DEMO_MODEL, mode: "standard", cwd: workspace, scripted: true },
      paths,
      config: loadConfig(paths.config).config,
      env: providerEnv,
    });
  const view = renderer(io);
  try {
    say(
      "lash demo — the model in this demo is SCRIPTED: a mock server on 127.0.0.1 plays back fixed replies.",
    );
    say("Everything else is real: the runtime, the tools, the HTTP streaming, the SQLite session store.");
    say(`  workspace  ${workspace} (temporary)`);
    say(
      `  sessions   ${paths.db} ${tempHome ? "(a temporary LASH_HOME; `lash demo --keep` uses your real one)" : "(your real LASH_HOME)"}`,
    );
    say(`  model      ${DEMO_MODEL} at ${server.url}\n`);

    say("1. A turn with streamed text and three tool calls");
    say("  you: Write a short note to notes/hello.md, read it back, then check it with a shell command.");
    let ctx = await open();
    const session = await ctx.newSession();
    const first = await turn(
      ctx,
      session.id,
      "Write a short note to notes/hello.md, read it back, then check it with a shell command.",
      view.onEvent,
    );
    view.endText();
    if (first.outcome.type !== "finished")
      throw new CliError(`lash demo: the scripted turn ended ${first.outcome.type}`, ExitCode.failed);
    say(
      `  (${first.toolCalls} tool calls, ${first.usage.input ?? 0} input / ${first.usage.output ?? 0} output tokens)\n`,
    );
    await ctx.close();

    say("2. Persistence: a fresh runtime reopens the database, as a new `lash` process would");
    ctx = await open();
    const [record, messages] = await ctx.rt.runPromise(
      Effect.flatMap(LashRuntime, (rt) => Effect.all([rt.getSession(session.id), rt.readView(session.id)])),
    );
    say(
      `  session ${record.id} — "${record.title ?? ""}": ${record.turnCount} turn, ${messages.length} messages`,
    );
    for (const line of renderTranscript(messages).split("\n").slice(0, 8)) say(`  │ ${line}`);
    say("");

    say("3. Resume: a second turn in the same session sees the whole history");
    say("  you: What did you do in this session?");
    const before = server.requests.length;
    const second = await turn(ctx, session.id, "What did you do in this session?", view.onEvent);
    view.endText();
    const sent = server.requests[before]?.body as { messages?: unknown[] } | undefined;
    say(
      `  (the model received ${sent?.messages?.length ?? "?"} messages, including the first turn's tool calls)\n`,
    );
    if (second.outcome.type !== "finished")
      throw new CliError(`lash demo: the scripted turn ended ${second.outcome.type}`, ExitCode.failed);

    say("4. Export: the session as one self-contained HTML page (tool calls, usage, cost per turn)");
    const html = await ctx.exportSession(session.id, "html", join(tmpdir(), `lash-demo-${session.id}.html`));
    say(`  wrote ${html} (${Math.round(statSync(html).size / 1024)} KiB) — open it in a browser`);
    say(`  (from your own sessions: lash export <id> --format html|json|md -o file)\n`);
    await ctx.close();
    say("That was a scripted model. To run lash for real, set a key and start it:");
    say("  export ANTHROPIC_API_KEY=…   (or OPENAI_API_KEY, GEMINI_API_KEY)   then: lash");
    say("  or a local server: lash --model openai-compatible/llama3.1 --base-url http://localhost:11434/v1");
    if (flags.keep)
      say(
        `Resume this demo session: lash --resume ${session.id}   (needs the mock server, so it will ask for a key)`,
      );
    return ExitCode.ok;
  } finally {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
    if (tempHome) rmSync(tempHome, { recursive: true, force: true });
  }
}
