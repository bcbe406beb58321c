import type { Message, ToolResultContent } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Option from "effect/Option";
import { Artifacts, type ArtifactsShape, artifactRef } from "./artifacts.ts";
import type { Plugin, ProjectedResult } from "./plugin.ts";
import {
  type GraphNode,
  SessionStore,
  type SessionStoreShape,
  type StoreError,
  type StoreFailure,
  type ToolOutputRecord,
} from "./store.ts";
import { type ToolContext, type ToolDefinition, ToolFailure, type ToolOutput, textOutput } from "./tool.ts";

/**
 * Where the output budget keeps the full text of cut tool outputs so that `read_output`
 * serves them after a restart. By default nothing extra is stored: the committed graph
 * already holds each cut result's full content (`full` on the tool result), and after a
 * restart the plugin finds it on the session's path. A host that wants a second, indexed
 * copy (`SessionStore.putToolOutput`/`getToolOutput`) provides this service around its turns.
 */
export interface ToolOutputsShape {
  readonly put: (output: ToolOutputRecord) => Effect.Effect<void, StoreFailure>;
  readonly get: (
    sessionId: string,
    callId: string,
  ) => Effect.Effect<ToolOutputRecord | undefined, StoreError>;
}

export class ToolOutputs extends Context.Tag("@lash/core/ToolOutputs")<ToolOutputs, ToolOutputsShape>() {
  static fromStore(store: SessionStoreShape): ToolOutputsShape {
    return { put: store.putToolOutput, get: store.getToolOutput };
  }
  /** Over the `SessionStore` in context. */
  static readonly layer: Layer.Layer<ToolOutputs, never, SessionStore> = Layer.effect(
    ToolOutputs,
    Effect.map(SessionStore, ToolOutputs.fromStore),
  );
}

/** The full text of the latest cut result of `callId` (lash's or the provider's id) on the session's path. */
function fromGraph(nodes: readonly GraphNode[], callId: string): string | undefined {
  let byProvider: string | undefined;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const n = nodes[i]!;
    if (n.kind !== "message") continue;
    for (const part of (n.payload as Message).parts) {
      if (part.type !== "toolResult" || part.full === undefined) continue;
      const text = part.full.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
      if (part.lashCallId === callId) return text;
      if (part.callId === callId && byProvider === undefined) byProvider = text;
    }
  }
  return byProvider;
}

export interface OutputBudgetOptions {
  /** Bytes of text the model sees per tool result (default 16 KiB). */
  readonly maxBytes?: number;
  /** Lines the model sees per tool result (default 400). */
  readonly maxLines?: number;
  /** Full outputs kept in memory for `read_output` (default 200); the store keeps every one when the runtime provides `ToolOutputs`. */
  readonly keep?: number;
  /**
   * Keep each cut output whole as a content-addressed artifact (when the runtime
   * provides `Artifacts`, as `LashRuntime` does) and point the model at
   * `read_artifact` (a tool of `@lash/tools`, which must then be in the catalog)
   * instead of this plugin's `read_output`. The graph then holds a reference to
   * the artifact (`full: [{type: "attachment", ref: "artifact:<sha256>"}]`), not a
   * second copy of the text. Default false.
   */
  readonly artifacts?: boolean;
}

const encoder = new TextEncoder();

/** The media type of a tool output kept as an artifact. */
const ARTIFACT_TEXT = "text/plain; charset=utf-8";

/** Cut `text` to the budget, keeping the head or the tail. Returns undefined when it fits. */
export function cutText(
  text: string,
  direction: "head" | "tail",
  maxBytes: number,
  maxLines: number,
): { readonly kept: string; readonly removedLines: number; readonly totalLines: number } | undefined {
  const lines = text.split("\n");
  const bytes = encoder.encode(text).length;
  if (lines.length <= maxLines && bytes <= maxBytes) return undefined;
  const kept: string[] = [];
  let used = 0;
  const order = direction === "head" ? lines : [...lines].reverse();
  for (const line of order) {
    const size = encoder.encode(line).length + 1;
    if (kept.length >= maxLines || used + size > maxBytes) {
      if (kept.length === 0) {
        // a single over-long line: cut it at a character boundary
        const chars = [...line];
        let piece = "";
        let n = 0;
        const seq = direction === "head" ? chars : chars.reverse();
        for (const ch of seq) {
          const b = encoder.encode(ch).length;
          if (n + b > maxBytes) break;
          n += b;
          piece = direction === "head" ? piece + ch : ch + piece;
        }
        kept.push(piece);
      }
      break;
    }
    kept.push(line);
    used += size;
  }
  if (direction === "tail") kept.reverse();
  return { kept: kept.join("\n"), removedLines: lines.length - kept.length, totalLines: lines.length };
}

/**
 * The tool-output budget: results over the byte/line budget are cut (head, or
 * tail for tools that declare `truncate: "tail"` such as shell) before the
 * model sees them. The full output stays in the graph; the model is told how
 * to read the rest with the plugin's `read_output` tool.
 */
export function outputBudgetPlugin(options: OutputBudgetOptions = {}): Plugin {
  const maxBytes = options.maxBytes ?? 16 * 1024;
  const maxLines = options.maxLines ?? 400;
  const keep = options.keep ?? 200;
  /** Cut outputs by lash's call id (unique in the session; the provider's id for a call without one). */
  const full = new Map<string, string>();
  /** The provider's id → the latest call that used it (providers reuse ids across turns). */
  const alias = new Map<string, string>();

  const remember = (key: string, providerId: string, text: string) => {
    full.set(key, text);
    if (providerId !== key) {
      alias.delete(providerId);
      alias.set(providerId, key);
    }
    while (full.size > keep) full.delete(full.keys().next().value as string);
    while (alias.size > keep) alias.delete(alias.keys().next().value as string);
  };

  /** This process's copy, else the store, else the graph (a restart without the store). */
  const lookup = (callId: string, context: ToolContext): Effect.Effect<string | undefined> =>
    Effect.gen(function* () {
      const byAlias = alias.get(callId);
      const held = full.get(callId) ?? (byAlias !== undefined ? full.get(byAlias) : undefined);
      if (held !== undefined) return held;
      const outputs = yield* Effect.serviceOption(ToolOutputs);
      if (Option.isSome(outputs)) {
        const stored = yield* Effect.orElseSucceed(
          outputs.value.get(context.sessionId, callId),
          () => undefined,
        );
        if (stored !== undefined) return stored.text;
      }
      const sessions = context.host?.sessions;
      if (sessions === undefined) return undefined;
      const nodes = yield* Effect.orElseSucceed(sessions.chronological(context.sessionId), () => []);
      return fromGraph(nodes, callId);
    });

  const readOutput: ToolDefinition<{ callId: string; offset?: number; limit?: number }> = {
    name: "read_output",
    description:
      "Read more of a tool result that was cut to fit the context budget. Give the callId from the truncation note, " +
      "and a 1-based line offset and a line limit. Returns the requested lines with line numbers.",
    inputSchema: {
      type: "object",
      properties: {
        callId: { type: "string", description: "The tool call id named in the truncation note." },
        offset: { type: "integer", minimum: 1, description: "First line to return (1-based, default 1)." },
        limit: { type: "integer", minimum: 1, description: "Number of lines (default 200)." },
      },
      required: ["callId"],
      additionalProperties: false,
    },
    readOnly: true,
    helper: true,
    family: "read",
    execute: ({ callId, offset = 1, limit = 200 }, context) =>
      Effect.flatMap(lookup(callId, context), (text) => {
        if (text === undefined) {
          return Effect.fail(
            new ToolFailure({
              class: "invalidRequest",
              message: `No stored output for call ${callId} in this session. Re-run the original tool with a narrower query instead.`,
            }),
          );
        }
        const lines = text.split("\n");
        const slice = lines.slice(offset - 1, offset - 1 + limit);
        const body = slice.map((l, i) => `${String(offset + i).padStart(6)}\t${l}`).join("\n");
        const more =
          offset - 1 + limit < lines.length
            ? `\n\n(${lines.length - (offset - 1 + limit)} more lines; continue with offset ${offset + limit})`
            : "";
        return Effect.succeed(textOutput(`${body}${more}`));
      }),
  };

  /** Artifact mode: the cut view plus a pointer to the stored whole output. */
  const projectToArtifact = (
    name: string,
    direction: "head" | "tail",
    output: ToolOutput,
    store: ArtifactsShape,
    slim: boolean,
  ): Effect.Effect<ProjectedResult | undefined, StoreError> =>
    Effect.gen(function* () {
      const texts = output.content.flatMap((c) => (c.type === "text" ? [c.text] : []));
      if (texts.length === 0) return undefined;
      const whole = texts.join("\n");
      const cut = cutText(whole, direction, maxBytes, maxLines);
      if (!cut) return undefined;
      const now = yield* Clock.currentTimeMillis;
      const bytes = encoder.encode(whole);
      const info = yield* store.put({ bytes, mediaType: ARTIFACT_TEXT, createdAt: now });
      const marker = `[… ${cut.removedLines} of ${cut.totalLines} lines cut from the ${direction === "head" ? "end" : "start"} to fit the context budget …]`;
      const hint =
        `The full output of ${name} (${cut.totalLines} lines, ${bytes.length} bytes) is stored as artifact ${info.id}. ` +
        `Read it in pages with read_artifact {"id": "${info.id}", "offset": N, "limit": M} (1-based line offset, a line limit).`;
      const text =
        direction === "head" ? `${cut.kept}\n\n${marker}\n${hint}` : `${marker}\n${hint}\n\n${cut.kept}`;
      const others = output.content.filter((c) => c.type !== "text");
      const note = `[${bytes.length} bytes: the full output is artifact ${info.id}]`;
      const value = slim ? slimmed(output.value, note) : undefined;
      const details = slim ? slimmed(output.details, note) : undefined;
      return {
        content: [{ type: "text", text }, ...others],
        // RLM programs read a result's full content: it keeps the text, and the reference beside it
        full: [
          ...(slim ? [] : output.content.filter((c) => c.type === "text")),
          { type: "attachment", mediaType: ARTIFACT_TEXT, ref: artifactRef(info.id), name: `${name} output` },
          ...others,
        ],
        ...(value !== undefined ? { value } : {}),
        ...(details !== undefined ? { details } : {}),
      } satisfies ProjectedResult;
    });

  /**
   * `value`/`details` with each top-level string over the budget replaced by `note`
   * (shell's stdout/stderr hold the output again); undefined when nothing is long.
   */
  const slimmed = (v: unknown, note: string): unknown => {
    const long = (x: unknown) => typeof x === "string" && x.length > maxBytes;
    if (long(v)) return note;
    if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
    const entries = Object.entries(v);
    if (!entries.some(([, x]) => long(x))) return undefined;
    return Object.fromEntries(entries.map(([k, x]) => [k, long(x) ? note : x]));
  };

  const project = (
    callId: string,
    providerId: string,
    name: string,
    direction: "head" | "tail",
    output: ToolOutput,
    keepDurably: (text: string) => void,
  ): ProjectedResult => {
    let cutAny = false;
    const content: ToolResultContent[] = output.content.map((part) => {
      if (part.type !== "text") return part;
      const cut = cutText(part.text, direction, maxBytes, maxLines);
      if (!cut) return part;
      cutAny = true;
      remember(callId, providerId, part.text);
      keepDurably(part.text);
      const marker = `[… ${cut.removedLines} of ${cut.totalLines} lines cut from the ${direction === "head" ? "end" : "start"} to fit the context budget …]`;
      const hint = `The full output of ${name} is kept. Read the rest with read_output {"callId": "${callId}", "offset": N, "limit": M}${direction === "tail" ? " (line 1 is the first line of the full output)" : ""}.`;
      return {
        type: "text",
        text:
          direction === "head" ? `${cut.kept}\n\n${marker}\n${hint}` : `${marker}\n${hint}\n\n${cut.kept}`,
      };
    });
    return cutAny ? { content, full: output.content } : { content: output.content };
  };

  return {
    name: "output-budget",
    tools: options.artifacts === true ? [] : [readOutput],
    hooks: {
      projectToolResult: (ctx, call, output) =>
        Effect.gen(function* () {
          if (call.name === "read_output") return { content: output.content };
          if (options.artifacts === true) {
            const store = yield* Effect.serviceOption(Artifacts);
            if (Option.isSome(store)) {
              // read_artifact's own pages are already within the budget it is given
              if (call.name === "read_artifact") return { content: output.content };
              // RLM programs receive the structured value and the full text: standard sessions only
              // keep the reference alone
              const stored = yield* Effect.either(
                projectToArtifact(
                  call.name,
                  call.tool?.truncate ?? "head",
                  output,
                  store.value,
                  ctx.session.mode === "standard",
                ),
              );
              if (stored._tag === "Right") return stored.right ?? { content: output.content };
              // the store failed: cut as without artifacts (the graph keeps the full text)
              const callId = call.lashCallId ?? call.callId;
              const plain = project(
                callId,
                call.callId,
                call.name,
                call.tool?.truncate ?? "head",
                output,
                () => {},
              );
              return {
                ...plain,
                content: [
                  ...plain.content,
                  { type: "text", text: `(The full output could not be stored: ${stored.left.message})` },
                ],
              };
            }
          }
          const callId = call.lashCallId ?? call.callId;
          const cut: string[] = [];
          const projected = project(
            callId,
            call.callId,
            call.name,
            call.tool?.truncate ?? "head",
            output,
            (t) => cut.push(t),
          );
          const outputs = yield* Effect.serviceOption(ToolOutputs);
          if (cut.length > 0 && Option.isSome(outputs)) {
            const now = yield* Clock.currentTimeMillis;
            // best effort: this process's copy and the graph's `full` content still serve it
            yield* Effect.ignore(
              outputs.value.put({
                sessionId: ctx.session.id,
                callId,
                ...(call.callId !== callId ? { providerCallId: call.callId } : {}),
                text: cut[cut.length - 1]!,
                createdAt: now,
              }),
            );
          }
          return projected;
        }),
    },
  };
}
