// Dry-run (`--dry-run`, config `policy.writes: "stub"`): a plugin whose `beforeToolCall` hook
// settles every call of a tool that writes or executes with what the call would have done —
// the tool's preview (diff, files and line counts, command and cwd) — instead of running it.
// Read-only tools run as usual, so an agent can be exercised safely against a real workspace.
import {
  type Plugin,
  type ToolCallInfo,
  type ToolDefinition,
  ToolFailure,
  type ToolOutput,
  type ToolPreview,
  toolEffects,
} from "@lash/core";
import { Effect } from "effect";

export interface DryRunOptions {
  /** Which calls are stubbed. Default: tools whose effects include `write` or `exec`. */
  readonly stubs?: (tool: ToolDefinition) => boolean;
}

/** What `details` of a stubbed call holds (for UIs and exporters). */
export interface DryRunDetails {
  readonly dryRun: true;
  readonly preview?: ToolPreview;
  /** The tool's preview failed: the error the call would have given. */
  readonly error?: string;
}

const writesOrExecs = (tool: ToolDefinition) => {
  const effects = toolEffects(tool);
  return effects.includes("write") || effects.includes("exec");
};

/** The preview of a tool without one: its name and arguments. */
function genericPreview(call: ToolCallInfo): ToolPreview {
  let args: string;
  try {
    args = JSON.stringify(call.args) ?? "undefined";
  } catch {
    args = String(call.args);
  }
  return { summary: `call ${call.name} with ${args.length > 2000 ? `${args.slice(0, 2000)}…` : args}` };
}

/** The tool result a stubbed call gets: what it would have done, and the diff or command. */
export function dryRunOutput(preview: ToolPreview): ToolOutput {
  const parts = [`Dry run: not run. It would have: ${preview.summary}`];
  if (preview.command !== undefined) {
    parts.push(
      `command: ${preview.command.command}\ncwd: ${preview.command.cwd}${preview.command.sandbox ? `\nsandbox: ${preview.command.sandbox}` : ""}`,
    );
  }
  if (preview.files !== undefined && preview.files.length > 0) {
    parts.push(preview.files.map((f) => `  ${f.action} ${f.path} (+${f.added} -${f.removed})`).join("\n"));
  }
  if (preview.diff !== undefined && preview.diff !== "") parts.push(preview.diff);
  const details: DryRunDetails = { dryRun: true, preview };
  return { content: [{ type: "text", text: parts.join("\n\n") }], details };
}

/**
 * The dry-run plugin: calls of tools that write or execute are not run; their result says
 * "Dry run: not run. It would have: …" with the tool's preview (a failing preview — a
 * missing file, a hunk that does not apply — gives the error the call would have given).
 * Register it after the plugins whose `beforeToolCall` hooks rewrite arguments.
 */
export function dryRunPlugin(options: DryRunOptions = {}): Plugin {
  const stubs = options.stubs ?? writesOrExecs;
  return {
    name: "dry-run",
    prompt:
      "Dry-run mode: tools that change files or run commands do not run; their result describes what they would have done. Treat those changes as not made.",
    hooks: {
      beforeToolCall: (ctx, call) =>
        Effect.gen(function* () {
          const tool = call.tool;
          if (tool === undefined || !stubs(tool)) return undefined;
          if (tool.preview === undefined) return { output: dryRunOutput(genericPreview(call)) };
          const controller = new AbortController();
          const result = yield* Effect.either(
            Effect.catchAllDefect(
              tool.preview(call.args, {
                sessionId: ctx.session.id,
                callId: call.callId,
                signal: controller.signal,
              }),
              (defect) =>
                Effect.fail(
                  new ToolFailure({
                    class: "internal",
                    message: `${call.name}: its preview failed: ${defect instanceof Error ? defect.message : String(defect)}`,
                  }),
                ),
            ),
          );
          if (result._tag === "Right") return { output: dryRunOutput(result.right) };
          const details: DryRunDetails = { dryRun: true, error: result.left.message };
          const output: ToolOutput = {
            content: [
              {
                type: "text",
                text: `Dry run: not run. It would have failed: ${result.left.message}`,
              },
            ],
            isError: true,
            details,
          };
          return { output };
        }),
    },
  };
}
