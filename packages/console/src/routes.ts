// Every page of the console, in one table: the shell (app.tsx) renders the first route whose
// `path` matches the hash, and lists the routes with a `nav` label in its navigation. To add a
// page: write `src/pages/<name>.tsx` exporting a component that takes `PageProps` (./page.ts), and add a
// row here.
import type { ComponentType } from "preact";
import type { PageProps } from "./page.ts";
import { AgentsPage } from "./pages/agents.tsx";
import { ApprovalsPage } from "./pages/approvals.tsx";
import { ChatPage } from "./pages/chat.tsx";
import { LoopsPage } from "./pages/loops.tsx";
import { MetricsPage } from "./pages/metrics.tsx";
import { RunPage } from "./pages/run.tsx";
import { ComparePage, SessionsPage } from "./pages/sessions.tsx";
import type { Params } from "./router.ts";

export type { PageProps };

export interface Route {
  /** `/agents/:name`: segments starting with `:` are parameters. */
  readonly path: string;
  /** The page's title (the document title and its heading). */
  readonly title: (params: Params) => string;
  readonly page: ComponentType<PageProps>;
  /** The label in the navigation, for top-level pages. */
  readonly nav?: string;
  /** Which navigation entry is current on this page (default: its own path). */
  readonly section?: string;
}

export const routes: readonly Route[] = [
  { path: "/agents", nav: "Agents", title: () => "Agents", page: AgentsPage },
  { path: "/agents/:name", section: "/agents", title: (p) => `Chat with ${p.name}`, page: ChatPage },
  { path: "/sessions", nav: "Runs & sessions", title: () => "Runs and sessions", page: SessionsPage },
  { path: "/sessions/:id", section: "/sessions", title: (p) => `Session ${p.id}`, page: SessionsPage },
  {
    path: "/sessions/:id/compare/:other",
    section: "/sessions",
    title: (p) => `Compare ${p.id} with ${p.other}`,
    page: ComparePage,
  },
  { path: "/runs/:id", section: "/sessions", title: (p) => `Run ${p.id}`, page: RunPage },
  { path: "/approvals", nav: "Approvals", title: () => "Approvals", page: ApprovalsPage },
  { path: "/loops", nav: "Loops", title: () => "Loops", page: LoopsPage },
  { path: "/metrics", nav: "Metrics", title: () => "Metrics", page: MetricsPage },
];

/** The page `/` shows. */
export const HOME = "/agents";
