// SSE subscribers of the serve benchmark, in their own process (run.ts forks a few of them).
// Each subscriber follows one session's stream (`GET /v1/sessions/:id/events`) from the start and
// checks what it gets as it arrives: seq exactly last + 1 (nothing lost, nothing twice, in order —
// a session's seq is contiguous from 1), each run's model chunks complete and in order, every run
// finished `completed`. A stream the daemon ends (a reader that fell behind is dropped) is
// followed again from `Last-Event-ID` = the last seq seen, and counted. Latency of each chunk: the
// time its bytes arrived here minus the time the mock stamped on it when it sent it.
//
// Two phases (run.ts's paced load, then its burst): an event belongs to the first while its seq
// is at most its session's boundary, which run.ts sends between the phases.
//
// IPC: `{ type: "start", url, assign: [{ sessionId, count }], chunks }` → `{ type: "ready" }` once
// every stream is open; `{ type: "boundary", seqs: { [sessionId]: seq } }` → `{ type:
// "boundary-set" }`; `{ type: "finish", finalSeq: { [sessionId]: seq } }` → each subscriber stops
// at that seq → `{ type: "result", subs, phases: [{ latency, … }, …] }`.
import { chunksOf, follow, Hist, type HistData, type SseEvent } from "./shape.ts";

interface Start {
  readonly type: "start";
  readonly url: string;
  readonly assign: readonly { readonly sessionId: string; readonly count: number }[];
  readonly chunks: number;
  /** Make the first subscriber skip one event (to see the checks fail). */
  readonly sabotage?: boolean;
}

export interface SubResult {
  readonly sessionId: string;
  readonly events: number;
  readonly lastSeq: number;
  /** Over (seq, type) of every event, in order: equal for every subscriber of a session. */
  readonly hash: number;
  readonly chunks: number;
  readonly runsFinished: number;
  readonly reconnects: number;
  readonly problems: readonly string[];
}

export interface PhaseResult {
  /** Per chunk: sent by the mock → received here. */
  readonly latency: HistData;
  /** Per chunk: sent by the mock → appended to the daemon's log (the event's `at`, whole ms). */
  readonly toAppend: HistData;
  /** Per text event: appended to the log → received here. */
  readonly fromAppend: HistData;
}

export interface WorkerResult {
  readonly type: "result";
  readonly subs: readonly SubResult[];
  /** The figures of each phase: [paced, burst]. */
  readonly phases: readonly PhaseResult[];
}

const phases = [0, 1].map(() => ({ latency: new Hist(), toAppend: new Hist(), fromAppend: new Hist() }));

class Sub {
  events = 0;
  lastSeq = 0;
  hash = 0;
  chunks = 0;
  runsFinished = 0;
  reconnects = 0;
  nextK = 0;
  problems: string[] = [];
  target = Number.POSITIVE_INFINITY;
  /** The last seq of the first phase in this session (unknown until run.ts says). */
  boundary = Number.POSITIVE_INFINITY;
  done = false;
  opened = false;
  close: () => void = () => undefined;

  readonly url: string;
  readonly sessionId: string;
  readonly chunkCount: number;
  readonly onOpen: () => void;
  readonly onDone: () => void;

  constructor(url: string, sessionId: string, chunkCount: number, onOpen: () => void, onDone: () => void) {
    this.url = url;
    this.sessionId = sessionId;
    this.chunkCount = chunkCount;
    this.onOpen = onOpen;
    this.onDone = onDone;
  }

  problem(text: string) {
    if (this.problems.length < 5) this.problems.push(text);
  }

  open() {
    this.close = follow(`${this.url}/v1/sessions/${this.sessionId}/events`, this.lastSeq, {
      onOpen: () => {
        if (this.opened) return;
        this.opened = true;
        this.onOpen();
      },
      onEvent: (e, at) => this.event(e, at),
      onEnd: (why) => {
        if (this.done) return;
        this.reconnects++;
        if (this.reconnects > 1000) {
          this.problem(`gave up after 1000 reconnects (last: ${why})`);
          this.finish();
          return;
        }
        this.open();
      },
    });
  }

  skip = false;

  event(e: SseEvent, at: number) {
    if (this.done) return;
    if (this.skip && e.id === 5) return;
    if (e.id !== this.lastSeq + 1) this.problem(`seq ${e.id} after ${this.lastSeq}`);
    if (e.id <= this.lastSeq) return; // a duplicate: not counted twice
    this.lastSeq = e.id;
    this.events++;
    this.hash = (Math.imul(this.hash ^ e.id, 0x01000193) + e.event.length) | 0;
    if (e.event === "textDelta") {
      const { data, at: appendedAt } = JSON.parse(e.data) as { data: { text: string }; at: number };
      const { latency, toAppend, fromAppend } = phases[e.id <= this.boundary ? 0 : 1]!;
      fromAppend.add(at - appendedAt);
      for (const c of chunksOf(data.text)) {
        if (c.k !== this.nextK) this.problem(`chunk ${c.k} where ${this.nextK} was next (seq ${e.id})`);
        this.nextK = c.k + 1;
        this.chunks++;
        latency.add(at - c.sentAt);
        toAppend.add(appendedAt - c.sentAt);
      }
    } else if (e.event === "runStarted" || e.event === "runResumed") {
      this.nextK = 0;
    } else if (e.event === "runFinished") {
      const { data } = JSON.parse(e.data) as { data: { state: string } };
      if (data.state !== "completed") this.problem(`run finished ${data.state} (seq ${e.id})`);
      if (this.nextK !== this.chunkCount)
        this.problem(`run ended after ${this.nextK} of ${this.chunkCount} chunks`);
      this.nextK = 0;
      this.runsFinished++;
    }
    if (this.lastSeq >= this.target) this.finish();
  }

  finish() {
    if (this.done) return;
    this.done = true;
    this.close();
    this.onDone();
  }

  result(): SubResult {
    const { sessionId, events, lastSeq, hash, chunks, runsFinished, reconnects, problems } = this;
    return { sessionId, events, lastSeq, hash, chunks, runsFinished, reconnects, problems };
  }
}

const subs: Sub[] = [];
let open = 0;
let finished = 0;

const maybeReport = () => {
  if (finished < subs.length) return;
  const result: WorkerResult = {
    type: "result",
    subs: subs.map((s) => s.result()),
    phases: phases.map((p) => ({
      latency: p.latency.data(),
      toAppend: p.toAppend.data(),
      fromAppend: p.fromAppend.data(),
    })),
  };
  process.send?.(result, () => process.exit(0));
};

type Message =
  | Start
  | { type: "boundary"; seqs: Record<string, number> }
  | { type: "finish"; finalSeq: Record<string, number> };
process.on("message", (m: Message) => {
  if (m.type === "start") {
    for (const { sessionId, count } of m.assign)
      for (let i = 0; i < count; i++)
        subs.push(
          new Sub(
            m.url,
            sessionId,
            m.chunks,
            () => {
              open++;
              if (open === subs.length) process.send?.({ type: "ready" });
            },
            () => {
              finished++;
              maybeReport();
            },
          ),
        );
    if (m.sabotage && subs[0]) subs[0].skip = true;
    for (const s of subs) s.open();
  } else if (m.type === "boundary") {
    for (const s of subs) s.boundary = m.seqs[s.sessionId] ?? 0;
    process.send?.({ type: "boundary-set" });
  } else if (m.type === "finish") {
    for (const s of subs) {
      s.target = m.finalSeq[s.sessionId] ?? 0;
      if (s.lastSeq >= s.target) s.finish();
    }
    maybeReport();
  }
});
