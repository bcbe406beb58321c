// The model of the serve benchmark, in its own process: the project's mock wire server
// (`startMockServer`, OpenAI Chat Completions) whose every reply is `--chunks` text chunks, each
// `[kkkk@<epoch ms>]` — the chunk's index and the time it leaves this process (one write per
// reply, right after the responder runs, so the stamp is the send time). Started by run.ts with
// an IPC channel: it sends `{ type: "ready", url }`; `{ type: "count" }` is answered with
// `{ type: "count", requests, streamed }`.
import { startMockServer } from "@lash/providers/testing";
import { argValue } from "../util.ts";
import { chunkText } from "./shape.ts";

const CHUNKS = Number(argValue("--chunks") ?? 20);
let streamed = 0;
const server = await startMockServer({
  responder: (req) => {
    if (req.stream) streamed++;
    const now = performance.timeOrigin + performance.now();
    let text = "";
    for (let k = 0; k < CHUNKS; k++) text += chunkText(k, now);
    return { text, textChunks: CHUNKS, usage: { input: 20, output: CHUNKS } };
  },
});

process.on("message", (m: { type: string }) => {
  if (m.type === "count") process.send?.({ type: "count", requests: server.requests.length, streamed });
  if (m.type === "close") void server.close().then(() => process.exit(0));
});
process.send?.({ type: "ready", url: server.baseUrl("openai-chat") });
