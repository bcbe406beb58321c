// lash's own transport for the adapters' streamed requests: one JSON POST over node:http or
// node:https with a keep-alive Agent, the answer's body read as it arrives — no `fetch`, no web
// streams, no SDK request pipeline. Measured per streamed Chat Completions request (2,000
// requests, 20 in flight, CPU of the client process): the `openai` SDK ~480 µs, global `fetch`
// ~285 µs, node:http with a keep-alive Agent ~90 µs. The SDKs stay the source of the wire types
// and of the error classes: the caller says how a failure becomes its SDK's error
// (`TransportErrors`), so classification (errors.ts) sees what it saw through the SDK.
import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";

/** How each failure becomes the vendor SDK's own error. */
export interface TransportErrors {
  /** A non-2xx answer: its status, its body as text and its headers (a real `Headers`, built on this path only). */
  status(status: number, text: string, headers: Headers): Error;
  /** The connection failed before an answer (refused, reset, DNS, TLS). */
  connection(cause: Error): Error;
  /** No answer's headers within `timeoutMs`, or the network layer timed out. */
  timeout(cause: Error): Error;
  /** The caller aborted before the answer's headers. */
  aborted(signal: AbortSignal): Error;
}

/** A 2xx answer whose body is still arriving. */
export interface HttpResponse {
  readonly status: number;
  /** The response headers as Node parsed them (lower-case names): a cheap view for the rate limiter. */
  readonly headers: IncomingHttpHeaders;
  /** The body; the caller reads it to its end or destroys it. */
  readonly body: IncomingMessage;
}

export interface HttpTransportOptions {
  /** The full URL requests are POSTed to (http: or https:). */
  readonly url: string;
  /** Headers of every request (names any case; later ones win over earlier ones, case-insensitively). */
  readonly headers: readonly Readonly<Record<string, string | null | undefined>>[];
  /**
   * Time allowed until the answer's headers arrive, as the SDKs apply their `timeout` to a
   * streamed request: once the headers are in, the body may take as long as it streams
   * (the idle timeout and the per-call deadline watch it, in runSdkStream).
   */
  readonly timeoutMs: number;
  readonly errors: TransportErrors;
}

export interface HttpTransport {
  /** POSTs `body` (JSON text); resolves with a 2xx answer, rejects with the SDK's error otherwise. */
  post(body: string, signal: AbortSignal): Promise<HttpResponse>;
  /** Closes the idle keep-alive connections. */
  close(): void;
}

/** What lash says it is (user-agent). */
export const userAgent = `lash (node/${process.versions.node})`;

/** Merges header sets case-insensitively (a null or undefined value removes the header). */
export function mergeHeaders(
  sets: readonly Readonly<Record<string, string | null | undefined>>[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const set of sets)
    for (const name of Object.keys(set)) {
      const key = name.toLowerCase();
      const value = set[name];
      if (value === null || value === undefined) delete out[key];
      else out[key] = value;
    }
  return out;
}

const timeoutText = /timed? ?out/i;

/** An abort's reason, as the error that destroys the request (never thrown to the caller). */
function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new Error("This operation was aborted");
}

/**
 * A transport to one URL with its own keep-alive Agent. Idle sockets are unref'd by the Agent, so
 * they never keep a process alive; `close()` ends them at once.
 */
export function httpTransport(options: HttpTransportOptions): HttpTransport {
  const url = new URL(options.url);
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:")
    throw new Error(`unsupported URL scheme ${url.protocol} in ${options.url}: use http: or https:`);
  // An idle connection is closed after 4 s, or 1 s before the server's `Keep-Alive: timeout=N`
  // hint when that is sooner (Node's Agent applies the hint only with a `timeout` set), as
  // undici does: a request never goes out on a socket the server is just closing. (On a socket in
  // use the timeout only emits an event nobody acts on: the idle timeout and deadline of
  // runSdkStream watch a stream.)
  // Behind a proxy, as `fetch` is: Node routes `fetch` and its global agents through
  // HTTP(S)_PROXY / NO_PROXY when NODE_USE_ENV_PROXY=1 or --use-env-proxy is on; an Agent of our
  // own gets the same only when given the environment (`proxyEnv`).
  const agentOptions = {
    keepAlive: true,
    scheduling: "lifo" as const,
    timeout: 4_000,
    ...(useEnvProxy() ? { proxyEnv: process.env } : {}),
  };
  const agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const send = secure ? https.request : http.request;
  const base = mergeHeaders(options.headers);
  const errors = options.errors;
  const timeoutMs = options.timeoutMs;
  const target = {
    protocol: url.protocol,
    hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    method: "POST",
    agent,
  };

  function post(body: string, signal: AbortSignal): Promise<HttpResponse> {
    return new Promise<HttpResponse>((resolve, reject) => {
      if (signal.aborted) {
        reject(errors.aborted(signal));
        return;
      }
      const headers: Record<string, string | number> = { ...base, "content-length": Buffer.byteLength(body) };
      const req = send({ ...target, headers });
      let settled = false;
      let timedOut = false;
      let response: IncomingMessage | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error("Request timed out."));
      }, timeoutMs);
      const onAbort = (): void => {
        const reason = abortReason(signal);
        if (response) response.destroy(reason);
        else req.destroy(reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      const fail = (e: Error): void => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) reject(errors.aborted(signal));
        else if (timedOut || timeoutText.test(String(e)) || timeoutText.test(String(e.cause ?? "")))
          reject(errors.timeout(e));
        else reject(errors.connection(e));
      };
      req.on("error", fail);
      req.on("response", (res) => {
        clearTimeout(timer);
        response = res;
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          settled = true;
          res.once("close", () => signal.removeEventListener("abort", onAbort));
          resolve({ status, headers: res.headers, body: res });
          return;
        }
        // An HTTP error: its body, whole, for the SDK's error (as the SDK reads it: a failed read's message stands for the text).
        res.setEncoding("utf8");
        let text = "";
        res.on("data", (s: string) => {
          text += s;
        });
        const done = (t: string): void => {
          if (settled) return;
          settled = true;
          signal.removeEventListener("abort", onAbort);
          if (signal.aborted) {
            reject(errors.aborted(signal));
            return;
          }
          reject(errors.status(status, t, headersOf(res.headers)));
        };
        res.on("end", () => done(text));
        res.on("error", (e) => done(e.message));
        res.on("close", () => {
          if (!res.complete) done("aborted");
        });
      });
      req.end(body);
    });
  }

  return { post, close: () => agent.destroy() };
}

/** Whether Node is told to use the environment's proxy settings (as `fetch` then does). */
function useEnvProxy(): boolean {
  return process.env.NODE_USE_ENV_PROXY === "1" || process.execArgv.includes("--use-env-proxy");
}

/** A real `Headers` from Node's parsed headers (error path only). */
export function headersOf(h: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const name of Object.keys(h)) {
    const v = h[name];
    if (Array.isArray(v)) for (const x of v) out.append(name, x);
    else if (v !== undefined) out.set(name, v);
  }
  return out;
}

/**
 * The body of a 2xx answer as an async iterable of what `parse` makes of each network read
 * (UTF-8 decoded across reads): `parse(text)` returns the items that read completed (an empty
 * array for none) and `parse(undefined)` at the body's end flushes the rest. `stop()` says the
 * body needs no more reading (an end-of-stream sentinel was seen): iteration ends, and the rest
 * of the body is read and dropped, so the connection goes back to the pool. A body cut short
 * rejects with `TypeError("terminated")` caused by the socket's error; ending the iteration early
 * otherwise destroys the body.
 */
export function bodyItems<T>(
  res: IncomingMessage,
  parse: (text: string | undefined) => T[],
  stop: () => boolean,
): AsyncIterable<T[]> {
  const queue: T[][] = [];
  let failure: unknown;
  let ended = false;
  let waiting: { resolve: (r: IteratorResult<T[]>) => void; reject: (e: unknown) => void } | undefined;
  const settle = (): void => {
    const w = waiting;
    if (!w) return;
    const next = queue.shift();
    if (next !== undefined) {
      waiting = undefined;
      w.resolve({ value: next, done: false });
    } else if (failure !== undefined) {
      waiting = undefined;
      w.reject(failure);
    } else if (ended) {
      waiting = undefined;
      w.resolve({ value: undefined, done: true });
    }
  };
  const take = (items: T[]): void => {
    if (items.length > 0) queue.push(items);
    if (stop() && !ended) {
      ended = true;
      res.resume(); // read the rest (normally just the end) so the socket is reused
    }
  };
  const onData = (text: string): void => {
    if (ended || failure !== undefined) return;
    try {
      take(parse(text));
    } catch (e) {
      failure = e;
      res.destroy();
    }
    settle();
  };
  res.setEncoding("utf8");
  res.on("data", onData);
  res.on("end", () => {
    if (ended || failure !== undefined) return;
    try {
      take(parse(undefined));
    } catch (e) {
      failure = e;
    }
    ended = true;
    settle();
  });
  const cut = (e: unknown): void => {
    if (ended || failure !== undefined) return;
    failure = new TypeError("terminated", { cause: e });
    settle();
  };
  res.on("error", cut);
  res.on("close", () => {
    if (!res.complete) cut(res.errored ?? new Error("the connection closed before the response ended"));
  });
  return {
    [Symbol.asyncIterator]: () => ({
      next: () =>
        new Promise<IteratorResult<T[]>>((resolve, reject) => {
          waiting = { resolve, reject };
          settle();
        }),
      return: () => {
        if (!ended && failure === undefined) {
          ended = true;
          if (stop()) res.resume();
          else res.destroy();
        }
        return Promise.resolve({ value: undefined, done: true });
      },
    }),
  };
}
