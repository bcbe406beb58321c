// What the serve benchmark's model says and how a client reads it back; an SSE reader of the
// daemon's event streams (node:http, reconnecting with `Last-Event-ID`); the daemon's CPU and RSS.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";

/** One chunk of a reply: its index and the time it leaves the mock, fixed width (so replies split evenly). */
export function chunkText(k: number, sentAt: number): string {
  return `[${String(k).padStart(4, "0")}@${sentAt.toFixed(3).padStart(17, "0")}]`;
}

const CHUNK = /\[(\d{4})@(\d+\.\d{3})\]/g;

/** The chunks in a text delta, in order. */
export function chunksOf(text: string): { k: number; sentAt: number }[] {
  const out: { k: number; sentAt: number }[] = [];
  for (const m of text.matchAll(CHUNK)) out.push({ k: Number(m[1]), sentAt: Number(m[2]) });
  return out;
}

/** The whole text of a reply of `chunks` chunks is these tokens, in order, and nothing else. */
export function isReplyText(text: string, chunks: number): boolean {
  const cs = chunksOf(text);
  if (cs.length !== chunks || cs.map((c) => chunkText(c.k, c.sentAt)).join("") !== text) return false;
  return cs.every((c, i) => c.k === i && (i === 0 || c.sentAt >= cs[i - 1]!.sentAt));
}

/** Epoch ms with sub-millisecond resolution (the same clock in every process of the machine). */
export const nowMs = (): number => performance.timeOrigin + performance.now();

export interface SseEvent {
  readonly id: number;
  readonly event: string;
  readonly data: string;
}

export interface SseHandlers {
  /** Called once per event with the time its bytes arrived. */
  readonly onEvent: (e: SseEvent, receivedAt: number) => void;
  readonly onOpen?: () => void;
  /** The stream ended (by the server, or an error): `why` says how. */
  readonly onEnd: (why: string) => void;
}

/** Follow an event stream from `after` (sent as `Last-Event-ID`). Returns a function that closes it. */
export function follow(url: string, after: number, h: SseHandlers): () => void {
  let closed = false;
  let ended = false;
  const end = (why: string) => {
    if (ended) return;
    ended = true;
    if (!closed) h.onEnd(why);
  };
  const req = request(
    url,
    { headers: { accept: "text/event-stream", "last-event-id": String(after) }, agent: false },
    (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        end(`HTTP ${res.statusCode}`);
        return;
      }
      h.onOpen?.();
      res.setEncoding("utf8");
      let buf = "";
      res.on("data", (chunk: string) => {
        const at = nowMs();
        buf += chunk;
        let cut = buf.indexOf("\n\n");
        while (cut >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          cut = buf.indexOf("\n\n");
          let id = Number.NaN;
          let event = "message";
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) continue;
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
            if (field === "id") id = Number(value);
            else if (field === "event") event = value;
            else if (field === "data") data = data ? `${data}\n${value}` : value;
          }
          if (data) h.onEvent({ id, event, data }, at);
        }
      });
      res.on("end", () => end("ended by the server"));
      res.on("error", (e) => end(`error: ${e.message}`));
    },
  );
  req.on("error", (e) => end(`error: ${e.message}`));
  req.end();
  return () => {
    closed = true;
    req.destroy();
  };
}

let ticks: number | undefined;
/** CPU ms (user + system) of a process so far, from /proc (undefined where there is none). */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process now and its peak, in MiB, from /proc. */
export function rssOf(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
    return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/** Latency histogram: 0.05 ms buckets up to 10 s; above, counted apart with the maximum. */
export const BUCKET_MS = 0.05;
const BUCKETS = 200_000;

/** A histogram as sent between processes: sparse [bucket, count] pairs. */
export interface HistData {
  readonly buckets: readonly (readonly [number, number])[];
  readonly count: number;
  readonly over: number;
  readonly max: number;
  readonly negative: number;
}

export class Hist {
  private readonly counts = new Uint32Array(BUCKETS);
  count = 0;
  over = 0;
  max = 0;
  negative = 0;

  add(ms: number): void {
    this.count++;
    if (ms < 0) this.negative++;
    const b = Math.floor(Math.max(0, ms) / BUCKET_MS);
    if (b < BUCKETS) this.counts[b]!++;
    else this.over++;
    if (ms > this.max) this.max = ms;
  }

  data(): HistData {
    const buckets: [number, number][] = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i]) buckets.push([i, this.counts[i]!]);
    const { count, over, max, negative } = this;
    return { buckets, count, over, max, negative };
  }
}

/** Merge histograms; `pct(p)` is the upper edge of the bucket holding the p-th percentile (ms). */
export function merged(hs: readonly HistData[]): {
  count: number;
  max: number;
  negative: number;
  pct: (p: number) => number;
} {
  const m = new Map<number, number>();
  for (const h of hs) for (const [b, n] of h.buckets) m.set(b, (m.get(b) ?? 0) + n);
  const sorted = [...m].sort((a, b) => a[0] - b[0]);
  const count = hs.reduce((a, h) => a + h.count, 0);
  const max = Math.max(0, ...hs.map((h) => h.max));
  const negative = hs.reduce((a, h) => a + h.negative, 0);
  const pct = (p: number): number => {
    const rank = Math.max(1, Math.ceil((p / 100) * count));
    let acc = 0;
    for (const [b, n] of sorted) {
      acc += n;
      if (acc >= rank) return (b + 1) * BUCKET_MS;
    }
    return max; // in the overflow (> 10 s)
  };
  return { count, max, negative, pct };
}

/**
 * A `lash serve` child (`args` after node's own: `node_args…, main.ts, serve, …`), resolved with
 * its base URL once it says it listens; rejected, with its output, if it exits first.
 */
export async function startServe(
  args: readonly string[],
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
): Promise<{ readonly daemon: ChildProcessWithoutNullStreams; readonly base: string }> {
  const daemon = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: "pipe" });
  daemon.stdin.end();
  let err = "";
  daemon.stderr.setEncoding("utf8").on("data", (d: string) => {
    err = (err + d).slice(-4000);
  });
  const base = await new Promise<string>((resolve, reject) => {
    let out = "";
    daemon.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!.replace(/\/$/, ""));
    });
    daemon.once("exit", (code) =>
      reject(new Error(`lash serve exited (${code}) before listening:\n${out}\n${err}`)),
    );
  });
  return { daemon, base };
}
