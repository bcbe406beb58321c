// Handlers of `MetricsApi`: per-agent figures as JSON (the console's charts); `/metrics`
// (health group) is the same daemon's Prometheus text.
import { HttpApiBuilder } from "@effect/platform";
import { Effect } from "effect";
import { LashApi } from "../api.ts";
import { Metrics } from "../services.ts";

export const MetricsGroupLive = HttpApiBuilder.group(LashApi, "metrics", (handlers) =>
  handlers.handle("agents", () => Effect.map(Metrics, (m) => m.agents())),
);
