// The shell: checks the connection (a token when the daemon wants one), then renders the
// navigation and the page the hash names (routes.ts). Landmarks: a banner with the main
// navigation, one main region that takes focus on navigation, and a skip link to it.
import type { LashClientPromise } from "@lash/client";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { describeError, isUnauthorized, makeClient, storedToken, storeToken } from "./connection.ts";
import { ClientContext } from "./context.ts";
import { LoginPage } from "./pages/login.tsx";
import { href, match, usePath } from "./router.ts";
import { HOME, routes } from "./routes.ts";

type Status =
  | { readonly kind: "checking" }
  | { readonly kind: "ready"; readonly client: LashClientPromise; readonly token: string | undefined }
  | { readonly kind: "login"; readonly problem?: string }
  | { readonly kind: "unreachable"; readonly problem: string };

/** Whether the daemon accepts `token` (or none): one authenticated call through the client. */
async function check(token: string | undefined): Promise<Status> {
  const client = makeClient(token);
  try {
    await client.sessions.list();
    return { kind: "ready", client, token };
  } catch (e) {
    if (isUnauthorized(e))
      return {
        kind: "login",
        ...(token === undefined
          ? {}
          : {
              problem: `The daemon refused this token: ${describeError(e)}. Check it for typos, or create a new one with \`lash serve token create <name>\`.`,
            }),
      };
    return { kind: "unreachable", problem: describeError(e) };
  }
}

export function App() {
  const [status, setStatus] = useState<Status>({ kind: "checking" });
  const path = usePath();
  const main = useRef<HTMLElement>(null);

  useEffect(() => {
    void check(storedToken()).then(setStatus);
  }, []);

  const signIn = useCallback(async (token: string) => {
    const next = await check(token);
    if (next.kind === "ready") storeToken(token);
    setStatus(next);
  }, []);

  const signOut = useCallback(() => {
    storeToken(undefined);
    setStatus({ kind: "login" });
  }, []);

  const found = routes
    .map((route) => ({ route, params: match(route.path, path) }))
    .find((r) => r.params !== undefined);
  const route = found?.route;
  const params = found?.params ?? {};
  const title =
    status.kind === "ready"
      ? (route?.title(params) ?? "Not found")
      : status.kind === "login"
        ? "Sign in"
        : "";

  useEffect(() => {
    document.title = title === "" ? "lash console" : `${title} · lash console`;
  }, [title]);

  // a navigation moves focus to the new page's main region (as a page load would)
  const previous = useRef<string | undefined>(undefined);
  useEffect(() => {
    const from = previous.current;
    previous.current = path;
    if (from !== undefined && from !== "/" && from !== "") main.current?.focus();
  }, [path]);

  if (status.kind === "ready" && (path === "/" || path === "")) {
    location.replace(href(HOME));
    return null;
  }

  const section = route?.section ?? route?.path;
  return (
    <>
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="banner">
        <a class="brand" href={href(HOME)}>
          lash
        </a>
        {status.kind === "ready" && (
          <nav aria-label="Main">
            <ul>
              {routes
                .filter((r) => r.nav !== undefined)
                .map((r) => (
                  <li key={r.path}>
                    <a href={href(r.path)} aria-current={r.path === section ? "page" : undefined}>
                      {r.nav}
                    </a>
                  </li>
                ))}
            </ul>
          </nav>
        )}
        {status.kind === "ready" && status.token !== undefined && (
          <button type="button" class="quiet" onClick={signOut}>
            Sign out
          </button>
        )}
      </header>
      <main id="main" ref={main} tabIndex={-1} aria-busy={status.kind === "checking"}>
        {status.kind === "checking" && <p class="empty">Connecting to the daemon…</p>}
        {status.kind === "unreachable" && (
          <div role="alert" class="error">
            <p>The console cannot reach the daemon: {status.problem}</p>
            <p>Check that `lash serve` is still running, then reload this page.</p>
          </div>
        )}
        {status.kind === "login" && <LoginPage problem={status.problem} onSubmit={signIn} />}
        {status.kind === "ready" && (
          <ClientContext.Provider value={status.client}>
            <h1>{title}</h1>
            {route ? (
              <route.page key={path} params={params} />
            ) : (
              <p class="empty">
                There is no page at {path}. Go to <a href={href(HOME)}>the agents</a>.
              </p>
            )}
          </ClientContext.Provider>
        )}
      </main>
    </>
  );
}
