// `/health` (always ok), `/ready` (503 until startup resume is under way), `/metrics`.
import { HttpApiBuilder } from "@effect/platform";
import { Effect } from "effect";
import { LashApi, Unavailable } from "../api.ts";
import { Metrics } from "../services.ts";

/** What `/ready` reports; `startServer` flips it once it resumed the previous daemon's runs. */
export interface Readiness {
  ready: boolean;
  resumed: number;
}

export const HealthGroupLive = (readiness: Readiness) =>
  HttpApiBuilder.group(LashApi, "health", (handlers) =>
    handlers
      .handle("health", () => Effect.succeed({ ok: true }))
      .handle("ready", () =>
        readiness.ready
          ? Effect.succeed({ ready: true, resumed: readiness.resumed })
          : Effect.fail(
              new Unavailable({
                code: "starting",
                message: "lash serve is starting (resuming the previous daemon's runs); retry shortly",
              }),
            ),
      )
      .handle("metrics", () => Effect.map(Metrics, (m) => m.render())),
  );
