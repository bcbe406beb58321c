// Placeholder: this page is not built yet. The approvals inbox (previews, approve / deny / edit) comes here.
import type { PageProps } from "../page.ts";

export function ApprovalsPage(_props: PageProps) {
  return (
    <p class="empty">Not built yet. The approvals inbox (previews, approve / deny / edit) comes here.</p>
  );
}
