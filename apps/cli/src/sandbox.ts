// The shell sandbox in the CLI: config `policy.sandbox.mode` ("bwrap" | "off"; default bwrap on
// Linux, off elsewhere) and `policy.sandbox.network`. Where bwrap is wanted but cannot run, the
// shell tool still gets the sandbox: its calls fail with the reason and the fix (never a silent
// fallback to running unsandboxed).
import {
  type BwrapSandbox,
  bwrapSandbox,
  bwrapStatus,
  describeSandbox,
  type Policy,
  SANDBOX_FIX,
} from "@lash/policy";

/** The sandbox mode in effect: the config's, else bwrap on Linux and off elsewhere. */
export function sandboxMode(policy: Policy, platform: NodeJS.Platform = process.platform): "bwrap" | "off" {
  return policy.sandbox.mode ?? (platform === "linux" ? "bwrap" : "off");
}

/**
 * The shell tool's sandbox under this policy, or undefined when the sandbox is off; `home`
 * (`$LASH_HOME`: auth.json, the database) is hidden from commands, as is `$XDG_RUNTIME_DIR`.
 */
export function shellSandbox(
  policy: Policy,
  workspace: string,
  home: string,
  env: { readonly [name: string]: string | undefined } = process.env,
): BwrapSandbox | undefined {
  if (sandboxMode(policy) === "off") return undefined;
  const runtimeDir = env.XDG_RUNTIME_DIR;
  return bwrapSandbox({
    workspace,
    home,
    network: policy.sandbox.network === true,
    ...(runtimeDir ? { runtimeDir } : {}),
  });
}

/** `lash doctor`'s sandbox line. */
export function sandboxCheck(policy: Policy): {
  readonly status: "ok" | "warn" | "info";
  readonly detail: string;
} {
  const mode = sandboxMode(policy);
  if (mode === "off")
    return {
      status: "info",
      detail:
        policy.sandbox.mode === "off"
          ? "off (policy.sandbox.mode): shell commands run unsandboxed"
          : `off: the bwrap sandbox runs only on Linux (this is ${process.platform}); shell commands run unsandboxed`,
    };
  const status = bwrapStatus();
  if (!status.available)
    return {
      status: "warn",
      detail: `bwrap wanted but ${status.reason}: the shell tool will refuse to run. To fix: ${SANDBOX_FIX}`,
    };
  return { status: "ok", detail: describeSandbox({ network: policy.sandbox.network === true }) };
}
