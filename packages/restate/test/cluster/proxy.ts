// An h2c round-robin proxy in front of the workers, as a load balancer would be: Restate has one
// deployment URL (the proxy); each new stream goes to the next worker in turn that accepts a
// connection (a dead worker is skipped).
import { once } from "node:events";
import { type ClientHttp2Session, connect, createServer, type IncomingHttpHeaders } from "node:http2";
import type { AddressInfo } from "node:net";

const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]);

const clean = (headers: IncomingHttpHeaders, pseudo: boolean) =>
  Object.fromEntries(
    Object.entries(headers).filter(
      ([k]) => !HOP.has(k) && (pseudo ? k !== ":authority" : !k.startsWith(":")),
    ),
  );

export async function startProxy(backends: readonly string[]) {
  const sessions = new Map<string, ClientHttp2Session>();
  const sessionFor = async (url: string): Promise<ClientHttp2Session | undefined> => {
    const known = sessions.get(url);
    if (known && !known.closed && !known.destroyed) return known;
    const s = connect(url);
    s.on("error", () => sessions.delete(url));
    s.on("close", () => sessions.delete(url));
    try {
      await Promise.race([
        once(s, "connect"),
        once(s, "error").then(([e]) => {
          throw e;
        }),
      ]);
    } catch {
      s.destroy();
      return undefined;
    }
    sessions.set(url, s);
    return s;
  };
  const server = createServer();
  let next = 0;
  server.on("stream", (stream, headers) => {
    void (async () => {
      const start = next++;
      for (let i = 0; i < backends.length; i++) {
        const url = backends[(start + i) % backends.length]!;
        const session = await sessionFor(url);
        if (!session) continue;
        const req = session.request(clean(headers, true));
        stream.pipe(req);
        let responded = false;
        req.on("response", (h) => {
          responded = true;
          if (!stream.destroyed) stream.respond(clean(h, false));
          req.pipe(stream);
        });
        req.on("error", () => stream.destroy());
        // the worker went away before it answered (killed while the stream opened): without this,
        // Restate's stream stays open until its abort timeout instead of being retried at once
        req.on("close", () => {
          if (!responded) stream.destroy();
        });
        stream.on("error", () => req.destroy());
        stream.on("close", () => req.close());
        return;
      }
      stream.respond({ ":status": 503 });
      stream.end("no worker is up");
    })();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const s of sessions.values()) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
