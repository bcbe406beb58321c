// Serving the built console over node:http: `GET /` (and `/index.html`) is the page, `GET
// /console/<file>` its script and stylesheet. The page is revalidated on every load (`no-cache`,
// an ETag); the script and stylesheet carry a content hash in their names, so they are cached
// for a year (`immutable`). The page's Content-Security-Policy allows only this origin: no CDN,
// no inline script, no external font, nothing from the network but the daemon.
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** The built files by name (index.html, main-<hash>.js, main-<hash>.css) and the sources' stamp. */
export interface ConsoleFiles {
  readonly files: Readonly<Record<string, string>>;
  readonly stamp: string;
}

interface Asset {
  readonly body: Buffer;
  readonly headers: Record<string, string>;
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function assets(built: ConsoleFiles): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const [name, text] of Object.entries(built.files)) {
    const body = Buffer.from(text, "utf8");
    const ext = name.slice(name.lastIndexOf(".") + 1);
    const page = name === "index.html";
    const headers: Record<string, string> = {
      "content-type": TYPES[ext] ?? "application/octet-stream",
      "content-length": String(body.length),
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
      "cache-control": page ? "no-cache" : "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    };
    if (page) {
      headers["content-security-policy"] = CONTENT_SECURITY_POLICY;
      headers["x-frame-options"] = "DENY";
    }
    out.set(page ? "/" : `/console/${name}`, { body, headers });
  }
  const index = out.get("/");
  if (index) out.set("/index.html", index);
  return out;
}

const send = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
};

/**
 * A raw route for `lash serve`: returns false for paths that are not the console's (the API's
 * handler takes them), else answers the request. `load` runs once, on the first request.
 */
export function consoleRoute(
  load: () => Promise<ConsoleFiles>,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  let table: Promise<Map<string, Asset>> | undefined;
  return (req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (path !== "/" && path !== "/index.html" && !path.startsWith("/console/")) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      send(res, 405, {
        _tag: "BadRequest",
        code: "method_not_allowed",
        message: `${req.method} ${path}: the console's files are read with GET`,
      });
      return true;
    }
    table ??= load().then(assets);
    table.then(
      (files) => {
        const asset = files.get(path);
        if (!asset) {
          send(res, 404, {
            _tag: "NotFound",
            code: "console_file_not_found",
            message: `${path} is not a file of the console (it may be from an older build); reload / to get the current one`,
          });
          return;
        }
        if (req.headers["if-none-match"] === asset.headers.etag) {
          res.writeHead(304, {
            etag: asset.headers.etag!,
            "cache-control": asset.headers["cache-control"]!,
          });
          res.end();
          return;
        }
        res.writeHead(200, asset.headers);
        res.end(req.method === "HEAD" ? undefined : asset.body);
      },
      (e: unknown) => {
        table = undefined; // try again on the next request
        send(res, 500, {
          _tag: "InternalError",
          code: "console_build_failed",
          message: `the console could not be built: ${e instanceof Error ? e.message : String(e)}. Run \`pnpm install\` and \`pnpm --filter @lash/console build\` to see the full error.`,
        });
      },
    );
    return true;
  };
}
