// Placeholder: this page is not built yet. Sessions as a tree with fork and compare, and their runs, come here.
import type { PageProps } from "../page.ts";

export function SessionsPage(_props: PageProps) {
  return (
    <p class="empty">Not built yet. Sessions as a tree with fork and compare, and their runs, come here.</p>
  );
}
