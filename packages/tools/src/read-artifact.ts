// read_artifact: page through a content-addressed artifact (a tool output the
// output budget cut, kept whole in the store) by lines.
import { isArtifactId, type ToolDefinition, ToolFailure, textOutput } from "@lash/core";
import { Effect } from "effect";

export interface ReadArtifactArgs {
  readonly id: string;
  readonly offset?: number;
  readonly limit?: number;
}

export interface ReadArtifactLimits {
  /** Lines per page when the model gives no limit (default 200). */
  readonly defaultLines?: number;
  /** Bytes of text per page at most (default 12 KiB, below the output budget); a longer page stops early. */
  readonly maxBytes?: number;
}

const fail = (message: string) => new ToolFailure({ class: "invalidRequest", message, retry: "never" });

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");

/**
 * `read_artifact {id, offset?, limit?}`: lines `offset` (1-based, default 1) to
 * `offset + limit - 1` of the artifact's text, numbered; a page also stops at
 * `maxBytes` and ends with the offset to continue from. Reads the artifacts the
 * runtime lends tools (`ToolContext.host.artifacts`).
 */
export function readArtifactTool(limits: ReadArtifactLimits = {}): ToolDefinition<ReadArtifactArgs> {
  const defaultLines = limits.defaultLines ?? 200;
  const maxBytes = limits.maxBytes ?? 12 * 1024;
  // the last artifact read, split into lines (a model pages through one artifact at a time)
  let cached: { readonly id: string; readonly lines: readonly string[] } | undefined;

  return {
    name: "read_artifact",
    description: [
      "Read a stored artifact (the full output of a tool call that was cut to fit the context) in pages of lines.",
      "Give the artifact id (64 hex digits) named in the truncation note, a 1-based line `offset` and a line `limit`.",
      "Returns the lines with their numbers and, when more remain, the offset to continue from.",
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        id: {
          type: "string",
          description: "The artifact id (sha256, 64 hex digits) from the truncation note.",
        },
        offset: { type: "integer", minimum: 1, description: "First line to return (1-based, default 1)." },
        limit: { type: "integer", minimum: 1, description: `Number of lines (default ${defaultLines}).` },
      },
      required: ["id"],
      additionalProperties: false,
    },
    readOnly: true,
    family: "read",
    binding: {
      module: "artifacts",
      operation: "read",
      returns: "str — the numbered lines of the page, then the offset to continue from",
    },
    execute: ({ id, offset = 1, limit = defaultLines }, context) =>
      Effect.gen(function* () {
        const store = context.host?.artifacts;
        if (store === undefined)
          return yield* Effect.fail(
            new ToolFailure({
              class: "unavailable",
              message: "read_artifact: this host keeps no artifacts (run the tool inside a lash runtime).",
              retry: "never",
            }),
          );
        const want = id
          .trim()
          .toLowerCase()
          .replace(/^(artifact:|sha256:)/, "");
        if (!isArtifactId(want))
          return yield* Effect.fail(
            fail(
              `read_artifact: "${id}" is not an artifact id. An id is the 64 hex digits of a sha256, as named in the truncation note ("stored as artifact …").`,
            ),
          );
        let lines = cached?.id === want ? cached.lines : undefined;
        if (lines === undefined) {
          const info = yield* store.info(want);
          if (info === undefined)
            return yield* Effect.fail(
              fail(
                `read_artifact: no artifact ${want} is stored. Copy the id exactly from the truncation note, or re-run the original tool.`,
              ),
            );
          if (!info.mediaType.startsWith("text/"))
            return yield* Effect.fail(
              fail(
                `read_artifact: artifact ${want} is ${info.mediaType} (${info.size} bytes), not text; it cannot be read as lines.`,
              ),
            );
          const bytes = yield* store.read(want);
          if (bytes === undefined)
            return yield* Effect.fail(fail(`read_artifact: artifact ${want} was removed while being read.`));
          lines = decoder.decode(bytes).split("\n");
          cached = { id: want, lines };
        }
        const total = lines.length;
        if (offset > total)
          return yield* Effect.fail(
            fail(
              `read_artifact: offset ${offset} is past the end of artifact ${want}, which has ${total} lines. Use an offset from 1 to ${total}.`,
            ),
          );
        const out: string[] = [];
        let used = 0;
        let next = offset;
        const end = Math.min(total, offset - 1 + limit);
        for (let n = offset; n <= end; n++) {
          let line = `${String(n).padStart(6)}\t${lines[n - 1]!}`;
          const size = encoder.encode(line).length + 1;
          if (used + size > maxBytes) {
            if (out.length > 0) break;
            // one line longer than a page: show its start
            line = `${[...line].slice(0, Math.floor(maxBytes / 4)).join("")} [… line ${n} cut at the page size …]`;
          }
          out.push(line);
          used += size;
          next = n + 1;
        }
        const more =
          next <= total
            ? `\n\n(lines ${offset}–${next - 1} of ${total}; continue with offset ${next})`
            : `\n\n(lines ${offset}–${total} of ${total}: the end)`;
        return textOutput(`${out.join("\n")}${more}`);
      }).pipe(
        Effect.catchTag("StoreError", (e) =>
          Effect.fail(
            new ToolFailure({
              class: "unavailable",
              message: `read_artifact: the artifact store failed: ${e.message}`,
              retry: "never",
            }),
          ),
        ),
      ),
  };
}
