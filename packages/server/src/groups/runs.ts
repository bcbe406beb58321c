// Handlers of `RunsApi`: a run's state, its cancellation and its event stream.
import { HttpApiBuilder } from "@effect/platform";
import { Effect } from "effect";
import { CurrentPrincipal, LashApi } from "../api.ts";
import { Access, RunManager } from "../services.ts";
import { eventsResponse } from "./sessions.ts";

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
    ),
);
