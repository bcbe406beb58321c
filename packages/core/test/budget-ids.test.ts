// The output budget's read_output with a provider that reuses one tool-call id in every turn:
// each cut output is kept under lash's call id (named in the truncation note), so reading the
// rest of an older call's output returns that call's output, not the latest one's.
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import { outputBudgetPlugin, type Plugin, type ToolDefinition, textOutput } from "../src/index.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

const toolsPlugin = (...tools: ToolDefinition[]): Plugin => ({ name: "test-tools", tools });

describe("output budget with repeated provider ids", () => {
  it.effect(
    "read_output by the id in the note returns that call's output; the provider's id reads the latest",
    () => {
      const big = (turn: number) =>
        Array.from({ length: 1000 }, (_, i) => `turn ${turn} line ${i + 1}`).join("\n");
      let turn = 0;
      const dump: ToolDefinition = {
        name: "dump",
        description: "dump",
        inputSchema: { type: "object" },
        execute: () => Effect.succeed(textOutput(big(++turn))),
      };
      const noteOf = (req: { messages: readonly { parts: readonly unknown[] }[] }) =>
        /read_output \{"callId": "([^"]+)"/.exec(
          JSON.stringify(req.messages.at(-1)!.parts).replace(/\\"/g, '"'),
        )?.[1];
      let first: string | undefined;
      const provider = scriptedProvider([
        callTools({ id: "call_1", name: "dump", args: {} }),
        say("one"),
        callTools({ id: "call_1", name: "dump", args: {} }),
        say("two"),
        (req) => {
          void req;
          return callTools(
            { id: "call_1", name: "read_output", args: { callId: first!, offset: 500, limit: 1 } },
            { id: "call_2", name: "read_output", args: { callId: "call_1", offset: 500, limit: 1 } },
          );
        },
        say("done"),
      ]);
      return withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            yield* rt.turn(s.id, { text: "first" });
            first = noteOf(provider.requests[1]!);
            yield* rt.turn(s.id, { text: "second" });
            const second = noteOf(provider.requests[3]!);
            expect(first).toMatch(/\.c0$/);
            expect(second).toMatch(/\.c0$/);
            expect(second).not.toBe(first);
            yield* rt.turn(s.id, { text: "read" });
            const read = JSON.stringify(provider.requests[5]!.messages.at(-1)!.parts);
            const [older, latest] = read.split('"read_output"').slice(1);
            expect(older).toContain("turn 1 line 500");
            expect(latest).toContain("turn 2 line 500");
          }),
        { plugins: [outputBudgetPlugin(), toolsPlugin(dump)] },
      );
    },
  );
});
