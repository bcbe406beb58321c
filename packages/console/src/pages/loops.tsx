// Placeholder: this page is not built yet. Scheduled agents with their next and last firings and a trigger button come here.
import type { PageProps } from "../page.ts";

export function LoopsPage(_props: PageProps) {
  return (
    <p class="empty">
      Not built yet. Scheduled agents with their next and last firings and a trigger button come here.
    </p>
  );
}
