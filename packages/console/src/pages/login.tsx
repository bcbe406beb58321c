// Token entry: shown when the daemon answers 401. The token is kept in this tab's
// sessionStorage (gone when the tab closes) and sent as `Authorization: Bearer …`.
import { useState } from "preact/hooks";

export function LoginPage(props: {
  readonly problem?: string | undefined;
  readonly onSubmit: (token: string) => Promise<void>;
}) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  return (
    <>
      <h1>Sign in</h1>
      <p>
        This daemon wants a bearer token. Create one with <code>lash serve token create &lt;name&gt;</code>{" "}
        and paste it here; it is kept only in this browser tab.
      </p>
      <form
        class="login"
        onSubmit={(e) => {
          e.preventDefault();
          const value = token.trim();
          if (value === "") return;
          setBusy(true);
          void props.onSubmit(value).finally(() => setBusy(false));
        }}
      >
        <label for="token">Bearer token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          required
          value={token}
          aria-invalid={props.problem !== undefined}
          aria-describedby={props.problem !== undefined ? "token-problem" : undefined}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
        {props.problem !== undefined && (
          <p id="token-problem" role="alert" class="error">
            {props.problem}
          </p>
        )}
      </form>
    </>
  );
}
