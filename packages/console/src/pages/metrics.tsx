// Placeholder: this page is not built yet. Per-agent calls, errors, latency, tokens and cost come here.
import type { PageProps } from "../page.ts";

export function MetricsPage(_props: PageProps) {
  return <p class="empty">Not built yet. Per-agent calls, errors, latency, tokens and cost come here.</p>;
}
