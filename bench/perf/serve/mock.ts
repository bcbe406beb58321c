// The model of the serve benchmark, in its own process: the project's mock wire server
// (`startMockServer`, OpenAI Chat Completions) whose every reply is `--chunks` text chunks, each
// `[kkkk@<epoch ms>]` — the chunk's index and the time it leaves this process (one write per
// reply, right after the responder runs, so the stamp is the send time). Started by run.ts with
// an IPC channel: it sends `{ type: "ready", url }`; `{ type: "count" }` is answered with
// `{ type: "count", requests, streamed }`.
//
// `{ type: "pace", ms }` (answered `{ type: "paced" }`) sets how replies are sent: ms = 0, one
// write per reply as above; ms > 0, one event at a time, `ms` apart, like a model streaming,
// each chunk stamped as its event is written.
import { startMockServer } from "@lash/providers/testing";
import { argValue } from "../util.ts";
import { chunkText, nowMs } from "./shape.ts";

const CHUNKS = Number(argValue("--chunks") ?? 20);
/** Stands for the send time in a paced reply's text until its event is written (same width). */
const UNSTAMPED = "~".repeat(17);
const stamp = (event: string) => event.replaceAll(UNSTAMPED, nowMs().toFixed(3).padStart(17, "0"));
let streamed = 0;
let paceMs = 0;
const server = await startMockServer({
  // a soak sends every session's whole history each turn: a log of bodies would fill the heap
  recordBodies: false,
  responder: (req) => {
    if (req.stream) streamed++;
    const usage = { input: 20, output: CHUNKS };
    if (paceMs > 0) {
      let text = "";
      for (let k = 0; k < CHUNKS; k++) text += chunkText(k, 0).replace(/@\d+\.\d{3}/, `@${UNSTAMPED}`);
      return { text, textChunks: CHUNKS, usage, chunkDelayMs: paceMs, atWrite: stamp };
    }
    const now = nowMs();
    let text = "";
    for (let k = 0; k < CHUNKS; k++) text += chunkText(k, now);
    return { text, textChunks: CHUNKS, usage };
  },
});

process.on("message", (m: { type: string; ms?: number }) => {
  if (m.type === "pace") {
    paceMs = m.ms ?? 0;
    process.send?.({ type: "paced" });
  }
  if (m.type === "count") process.send?.({ type: "count", requests: server.requests.length, streamed });
  if (m.type === "close") void server.close().then(() => process.exit(0));
});
process.send?.({ type: "ready", url: server.baseUrl("openai-chat") });
