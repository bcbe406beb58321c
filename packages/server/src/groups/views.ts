// Handlers of `ViewsApi`: links a browser can open in a tab of its own (which sends no bearer
// header) to a session's export or a session's or run's trace page.
//
// `POST /v1/views` (authenticated) checks that the caller may see the session or run, then
// keeps a ticket {kind, id, format, level, principal, exp} in memory under a random id (24
// bytes). `GET /v1/views/<id>` looks it up, checks the expiry and the access of the principal
// it names once more, and answers the page (the same renderings as `…/export` and
// `…/trace`). A link lives `VIEW_TTL_MS` and dies with the daemon; it grants nothing but that
// one page.
import { randomBytes } from "node:crypto";
import { HttpApiBuilder } from "@effect/platform";
import { Effect } from "effect";
import {
  BadRequest,
  CurrentPrincipal,
  LashApi,
  Principal,
  Unauthorized,
  ViewLink,
  type ViewRequest,
} from "../api.ts";
import { Access, EventLog, RunManager } from "../services.ts";
import { exportPage, tracePage } from "../views.ts";
import { pageResponse } from "./sessions.ts";

/** How long a view link can be opened (and reloaded). */
export const VIEW_TTL_MS = 5 * 60_000;

interface Ticket {
  readonly kind: "export" | "sessionTrace" | "runTrace";
  readonly id: string;
  readonly format: "html" | "json" | "md" | "jsonl";
  readonly level: "standard" | "extended";
  readonly principal: string;
  readonly admin: boolean;
  readonly exp: number;
}

const expired = () =>
  new Unauthorized({
    code: "view_link_expired",
    message:
      "this view link has expired (links live 5 minutes and end when the daemon restarts); open the page again from the console",
  });
const invalid = () =>
  new Unauthorized({
    code: "invalid_view_link",
    message:
      "this daemon made no such view link (or it restarted since); open the page again from the console",
  });

/** May `principal` see what the request names? 404/403 as the session and run routes. */
const checkTarget = (principal: Principal, kind: Ticket["kind"], id: string) =>
  Effect.gen(function* () {
    const access = yield* Access;
    if (kind === "runTrace") {
      const run = yield* (yield* RunManager).get(id);
      yield* access.checkSession(principal, run.sessionId);
      return run.sessionId;
    }
    yield* access.checkSession(principal, id);
    return id;
  });

const render = (t: Ticket) =>
  Effect.gen(function* () {
    if (t.kind === "export") return yield* exportPage(t.id, t.format as "html" | "json" | "md");
    const log = yield* EventLog;
    const format = t.format as "html" | "jsonl";
    if (t.kind === "sessionTrace")
      return yield* tracePage(log.read(t.id, 0), {
        format,
        level: t.level,
        title: `lash trace · session ${t.id}`,
      });
    const run = yield* (yield* RunManager).get(t.id);
    return yield* tracePage(log.read(run.sessionId, 0, run.id), {
      format,
      level: t.level,
      title: `lash trace · run ${run.id}`,
    });
  });

function formatOf(body: typeof ViewRequest.Type): Ticket["format"] | undefined {
  const format = body.format ?? "html";
  const allowed = body.kind === "export" ? ["html", "json", "md"] : ["html", "jsonl"];
  return allowed.includes(format) ? format : undefined;
}

export const ViewsGroupLive = HttpApiBuilder.group(LashApi, "views", (handlers) => {
  const tickets = new Map<string, Ticket>();
  const sweep = (now: number) => {
    for (const [id, t] of tickets) if (t.exp < now) tickets.delete(id);
  };

  const verify = (id: string) =>
    Effect.gen(function* () {
      const t = tickets.get(id);
      if (t === undefined) return yield* Effect.fail(invalid());
      if (t.exp < Date.now()) {
        tickets.delete(id);
        return yield* Effect.fail(expired());
      }
      return t;
    });

  return handlers
    .handle("link", ({ payload }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const format = formatOf(payload);
        if (format === undefined)
          return yield* Effect.fail(
            new BadRequest({
              code: "bad_view_format",
              message: `a ${payload.kind === "export" ? "session export" : "trace"} has no format "${payload.format}"; use ${payload.kind === "export" ? "html, json or md" : "html or jsonl"}`,
            }),
          );
        yield* checkTarget(principal, payload.kind, payload.id);
        const ticket: Ticket = {
          kind: payload.kind,
          id: payload.id,
          format,
          level: payload.level ?? "standard",
          principal: principal.name,
          admin: principal.admin,
          exp: Date.now() + VIEW_TTL_MS,
        };
        sweep(Date.now());
        const id = randomBytes(24).toString("base64url");
        tickets.set(id, ticket);
        return new ViewLink({ url: `/v1/views/${id}`, expiresAt: ticket.exp });
      }),
    )
    .handleRaw("open", ({ path }) =>
      Effect.gen(function* () {
        const t = yield* verify(path.ticket);
        yield* checkTarget(new Principal({ name: t.principal, admin: t.admin }), t.kind, t.id);
        return pageResponse(yield* render(t));
      }),
    );
});
