// `lash login codex` / `lash logout [codex]`: sign in to Codex with a ChatGPT plan.
// The browser flow prints the authorize URL (and opens it unless --no-browser), then
// waits for the redirect on 127.0.0.1:1455; `--device-code` prints a code to enter
// at the verification page instead. Tokens go to $LASH_HOME/auth.json (mode 0600);
// nothing here ever prints a token.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { CodexTokens } from "@lash/providers";
import { CliError, ExitCode, errorMessage, usageError } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { resolvePaths } from "./paths.ts";

export const LOGIN_PROVIDERS = ["codex"] as const;

function authFileOf(io: MainIO): string {
  return join(resolvePaths(io.env, process.cwd()).home, "auth.json");
}

/** Opens a URL in the desktop's browser; false when there is no opener. */
function openBrowser(url: string): boolean {
  const cmd = process.platform === "darwin" ? "open" : process.platform === "win32" ? "cmd" : "xdg-open";
  const args = process.platform === "win32" ? ["/c", "start", "", url] : [url];
  try {
    const child = spawn(cmd, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}

/** One line describing a sign-in, without any token. */
export function describeSignIn(t: CodexTokens, now: number = Date.now()): string {
  const who = t.email ? `signed in as ${t.email}` : "signed in";
  const plan = t.plan ? ` (${t.plan} plan)` : "";
  const exp =
    t.expiresAt === undefined
      ? ""
      : t.expiresAt > now
        ? `; access token valid until ${new Date(t.expiresAt).toISOString().replace(/\.\d+Z$/, "Z")} (refreshed automatically)`
        : "; access token expired (refreshed on the next request)";
  return `${who}${plan}${exp}`;
}

export async function runLogin(argv: readonly string[], io: MainIO): Promise<number> {
  const { values, positionals } = (() => {
    try {
      return parseArgs({
        args: [...argv],
        options: {
          "device-code": { type: "boolean" },
          "no-browser": { type: "boolean" },
          help: { type: "boolean", short: "h" },
        },
        strict: true,
        allowPositionals: true,
      });
    } catch (e) {
      throw usageError(`lash login: ${errorMessage(e)}\nRun \`lash login --help\` for usage.`);
    }
  })();
  if (values.help) {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("login"));
    return ExitCode.ok;
  }
  const provider = positionals[0];
  if (
    provider === undefined ||
    positionals.length > 1 ||
    !(LOGIN_PROVIDERS as readonly string[]).includes(provider)
  )
    throw usageError(
      `lash login: ${provider === undefined ? "name the provider" : `cannot sign in to "${positionals.join(" ")}"`}: \`lash login codex\` (ChatGPT plan). Other providers take an API key from the environment.`,
    );
  const p = await import("@lash/providers");
  const file = authFileOf(io);
  const config = p.codexAuthConfig(io.env);
  let tokens: CodexTokens;
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once("SIGINT", onSignal);
  try {
    if (values["device-code"]) {
      const device = await p.requestDeviceCode(config, controller.signal);
      io.stdout.write(
        `To sign in to Codex with your ChatGPT plan:\n  1. open ${device.verificationUrl}\n  2. enter the code ${device.userCode} (it expires in 15 minutes; never share it)\nWaiting for you to finish in the browser…\n`,
      );
      tokens = await p.completeDeviceCode(config, device, { signal: controller.signal });
    } else {
      const portEnv = io.env.LASH_CODEX_CALLBACK_PORT?.trim();
      const port = portEnv ? Number(portEnv) : undefined;
      if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536))
        throw new CliError(
          `LASH_CODEX_CALLBACK_PORT=${JSON.stringify(portEnv)} is not a port: set it to a number from 0 (any free port) to 65535, or unset it to use 1455`,
          ExitCode.usage,
        );
      const login = await p.loginWithBrowser(config, port !== undefined ? { ports: [port] } : {});
      controller.signal.addEventListener("abort", () => login.cancel(), { once: true });
      const opened = !values["no-browser"] && openBrowser(login.url);
      io.stdout.write(
        `${opened ? "Opening your browser to sign in to Codex. If it does not open, visit" : "To sign in to Codex, open this URL in a browser on this machine"}:\n  ${login.url}\nWaiting for the browser to come back to http://localhost:${login.port}/auth/callback … (no browser here? \`lash login codex --device-code\`)\n`,
      );
      tokens = await login.done;
    }
  } catch (e) {
    if ((e as { _tag?: string })._tag === "CodexAuthError")
      throw new CliError(`lash login codex: ${(e as Error).message}`, ExitCode.failed);
    throw e;
  } finally {
    process.off("SIGINT", onSignal);
  }
  p.writeCodexTokens(file, tokens);
  io.stdout.write(
    `Codex: ${describeSignIn(tokens)}.\nTokens saved to ${file} (mode 0600). Use a model such as codex/gpt-5-codex.\n`,
  );
  return ExitCode.ok;
}

export async function runLogout(argv: readonly string[], io: MainIO): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("login"));
    return ExitCode.ok;
  }
  const [provider = "codex", ...more] = argv;
  if (more.length || !(LOGIN_PROVIDERS as readonly string[]).includes(provider))
    throw usageError(`lash logout: expected \`lash logout [codex]\` (got "${argv.join(" ")}")`);
  const { removeCodexTokens } = await import("@lash/providers");
  const file = authFileOf(io);
  const removed = removeCodexTokens(file);
  io.stdout.write(
    removed ? `Signed out of Codex (removed from ${file}).\n` : "Not signed in to Codex: nothing to do.\n",
  );
  return ExitCode.ok;
}
