// lash as a library, through the promise facade (`createLash`): a custom tool, a turn,
// the session resumed in a second process, and a fork.
//
//   npm run build
//   LASH_DB=/tmp/lash-example.db node dist/main.js first          # prints the session id
//   LASH_DB=/tmp/lash-example.db node dist/main.js second <id>    # resumes it, forks it
//
// The model is `anthropic/claude-sonnet-4-5` from @lash/providers, configured from the
// environment (ANTHROPIC_API_KEY, and ANTHROPIC_BASE_URL to point it elsewhere: the
// packaging test points it at lash's mock wire server). Each step prints one JSON line.
import { createLash, defineTool, type Lash, SqliteStore, textOutput } from "@lash/core";
import { createProvider } from "@lash/providers";

const MODEL = "anthropic/claude-sonnet-4-5";

const add = defineTool<{ a: number; b: number }>({
  name: "add",
  description: "Add two numbers.",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
  readOnly: true,
  run: async ({ a, b }) => textOutput(String(a + b)),
});

function open(filename: string): Lash {
  return createLash({
    store: SqliteStore.layer({ filename }),
    provider: createProvider(MODEL),
    plugins: [{ name: "math", tools: [add] }],
  });
}

function print(step: string, data: Record<string, unknown>): void {
  process.stdout.write(
    `${JSON.stringify({ example: "host-promise", node: process.versions.node, step, ...data })}\n`,
  );
}

async function first(lash: Lash): Promise<void> {
  const session = await lash.createSession({ model: MODEL, title: "example" });
  const turn = session.turn("What is 2 + 3?");
  const tools: string[] = [];
  for await (const event of turn) {
    if (event.type === "toolCompleted") tools.push(`${event.name} → ${JSON.stringify(event.content)}`);
  }
  const result = await turn.result;
  print("turn", { sessionId: session.id, text: result.text, outcome: result.outcome.type, tools });
}

async function second(lash: Lash, sessionId: string): Promise<void> {
  // A new process: the session comes back from the SQLite file with its history.
  const session = lash.session(sessionId);
  const before = (await session.readView()).length;
  const resumed = await session.turn("What did I ask you before?").result;
  print("resume", { sessionId, messagesBefore: before, text: resumed.text, outcome: resumed.outcome.type });

  // A fork continues from the leaf in a new session; the original is untouched.
  const forkRecord = await lash.session(sessionId).fork({ title: "example fork" });
  const fork = lash.session(forkRecord.id);
  const forked = await fork.turn("And what is 2 + 3 on the fork?").result;
  print("fork", {
    sessionId: forkRecord.id,
    parent: sessionId,
    text: forked.text,
    outcome: forked.outcome.type,
    forkMessages: (await fork.readView()).length,
    originalMessages: (await session.readView()).length,
  });
}

const [step, sessionId] = process.argv.slice(2);
const filename = process.env.LASH_DB;
if (!filename || (step !== "first" && step !== "second") || (step === "second" && !sessionId)) {
  process.stderr.write("usage: LASH_DB=<file> node dist/main.js first | second <session id>\n");
  process.exit(2);
}
const lash = open(filename);
try {
  if (step === "first") await first(lash);
  else await second(lash, sessionId!);
} finally {
  await lash.close();
}
