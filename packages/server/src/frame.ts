// The SSE wire format of one event: `id: <seq>\nevent: <type>\ndata: <json ServerEvent>\n\n`.
import type { ServerEvent } from "./api.ts";

/** An event's row in the log (its data stored as JSON). */
export interface EventRow {
  session_id: string;
  seq: number;
  run_id: string;
  type: string;
  at: number;
  data: string;
}

const json = (s: string) => JSON.stringify(s);

/** One event in the SSE wire format. */
export const sseFrame = (e: ServerEvent): string =>
  `id: ${e.seq}\nevent: ${e.type}\ndata: {"seq":${e.seq},"sessionId":${json(e.sessionId)},"runId":${json(e.runId)},"type":${json(e.type)},"at":${e.at},"data":${JSON.stringify(e.data ?? null)}}\n\n`;

/** A stored event in the SSE wire format, from its row (its data is stored as JSON). */
export const rowFrame = (r: EventRow): Buffer =>
  Buffer.from(
    `id: ${r.seq}\nevent: ${r.type}\ndata: {"seq":${r.seq},"sessionId":${json(r.session_id)},"runId":${json(r.run_id)},"type":${json(r.type)},"at":${r.at},"data":${r.data}}\n\n`,
  );
