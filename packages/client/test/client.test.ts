// The promise client's own behaviour without a daemon: an unreachable daemon rejects with a
// ClientError naming the URL and the fix. (Its calls against a real `lash serve` are in
// test/integration/serve-client.test.ts.)
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ClientError, createClient } from "../src/index.ts";

/** A port nothing listens on: bound once, then closed. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("createClient", () => {
  it("rejects with ClientError `unreachable` when no daemon listens, naming the URL and the fix", async () => {
    const port = await freePort();
    const lash = createClient({ baseUrl: `http://127.0.0.1:${port}/`, token: "t" });
    expect(lash.baseUrl).toBe(`http://127.0.0.1:${port}`);
    const error = await lash.sessions.list().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ _tag: "ClientError", code: "unreachable" });
    expect((error as ClientError).message).toContain(`http://127.0.0.1:${port}`);
    expect((error as ClientError).message).toContain("lash serve");
  });

  it("a non-API answer (an HTTP server that is not lash serve) is a ClientError, not a decode crash", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("boom");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const error = await createClient({ baseUrl: `http://127.0.0.1:${port}` })
        .runs.get("r1")
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toMatchObject({ _tag: "ClientError", code: "unexpected_response" });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
