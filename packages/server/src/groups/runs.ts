// Handlers of `RunsApi`: a run's state, its cancellation and its event stream.
import { HttpApiBuilder } from "@effect/platform";
import { Effect } from "effect";
import { CurrentPrincipal, LashApi } from "../api.ts";
import { Access, EventLog, RunManager } from "../services.ts";
import { tracePage } from "../views.ts";
import { eventsResponse, pageResponse } from "./sessions.ts";

const checkedRun = (id: string) =>
  Effect.gen(function* () {
    const run = yield* (yield* RunManager).get(id);
    yield* (yield* Access).checkSession(yield* CurrentPrincipal, run.sessionId);
    return run;
  });

export const RunsGroupLive = HttpApiBuilder.group(LashApi, "runs", (handlers) =>
  handlers
    .handle("get", ({ path }) => checkedRun(path.id))
    .handle("cancel", ({ path }) =>
      Effect.gen(function* () {
        yield* checkedRun(path.id);
        return yield* (yield* RunManager).cancel(path.id);
      }),
    )
    .handleRaw("events", ({ path, urlParams, request }) =>
      Effect.gen(function* () {
        const run = yield* checkedRun(path.id);
        return yield* eventsResponse(run.sessionId, run.id, request.headers, urlParams.after);
      }),
    )
    .handleRaw("trace", ({ path, urlParams }) =>
      Effect.gen(function* () {
        const run = yield* checkedRun(path.id);
        const events = (yield* EventLog).read(run.sessionId, 0, run.id);
        return pageResponse(
          yield* tracePage(events, {
            format: urlParams.format ?? "html",
            level: urlParams.level ?? "standard",
            title: `lash trace · run ${run.id}`,
          }),
        );
      }),
    ),
);
