// Handlers of `LoopsApi`: the build's loops (scheduled agents), their firings, a manual
// trigger, pause and resume. Access as for a chat with the loop's agent: listing and
// firings need `read`, trigger/pause/resume `execute` (`Access.checkAgent`).
import { HttpApiBuilder } from "@effect/platform";
import { Effect } from "effect";
import { BadRequest, CurrentPrincipal, LashApi } from "../api.ts";
import { Access, Scheduler } from "../services.ts";

const allowed = (name: string, need: "execute" | "read") =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal;
    const scheduler = yield* Scheduler;
    const loop = yield* scheduler.get(name);
    yield* (yield* Access).checkAgent(principal, loop.agent, need);
    return scheduler;
  });

export const LoopsGroupLive = HttpApiBuilder.group(LashApi, "loops", (handlers) =>
  handlers
    .handle("list", () =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const access = yield* Access;
        const all = yield* (yield* Scheduler).list();
        const loops = yield* Effect.filter(all, (loop) =>
          access.checkAgent(principal, loop.agent, "read").pipe(
            Effect.as(true),
            Effect.orElseSucceed(() => false),
          ),
        );
        return { loops };
      }),
    )
    .handle("firings", ({ path, urlParams }) =>
      Effect.gen(function* () {
        const limit = urlParams.limit ?? 50;
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
          return yield* Effect.fail(
            new BadRequest({
              code: "invalid_limit",
              message: `limit must be an integer from 1 to 1000, got ${limit}; e.g. ?limit=50`,
            }),
          );
        const scheduler = yield* allowed(path.name, "read");
        return { firings: yield* scheduler.firings(path.name, limit) };
      }),
    )
    .handle("trigger", ({ path, payload }) =>
      Effect.flatMap(allowed(path.name, "execute"), (s) => s.trigger(path.name, payload.instruction)),
    )
    .handle("pause", ({ path }) =>
      Effect.flatMap(allowed(path.name, "execute"), (s) => s.setPaused(path.name, true)),
    )
    .handle("resume", ({ path }) =>
      Effect.flatMap(allowed(path.name, "execute"), (s) => s.setPaused(path.name, false)),
    ),
);
