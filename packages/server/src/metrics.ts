// OWNER: helper s5 (metrics + bench). Prometheus text exposition derived from the event
// log. STUB until s5 lands.
import { Layer } from "effect";
import { Metrics } from "./services.ts";

export const MetricsLive = Layer.succeed(
  Metrics,
  Metrics.of({
    record: () => undefined,
    sseOpened: () => undefined,
    sseClosed: () => undefined,
    render: () => "",
  }),
);
