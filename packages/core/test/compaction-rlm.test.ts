// RLM sessions compact their transcript like standard ones; the Lashlang REPL state is kept.
import type { LlmEvent, LlmRequest } from "@lash/sansio";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { COMPACTION_SYSTEM, rlmMode, SUMMARY_PREFIX, withRlm } from "../src/index.ts";
import { say, scriptedProvider, withRuntime } from "./support.ts";

const cell = (code: string): LlmEvent[] => say(`<lashlang>\n${code}\n</lashlang>`);
const all = (r: LlmRequest) =>
  [r.system ?? "", ...r.messages.flatMap((m) => m.parts.map((p) => (p.type === "text" ? p.text : "")))].join(
    "\n",
  );

describe("compaction in RLM mode", () => {
  it("the transcript is summarised; variables bound before the compaction are still there", async () => {
    const provider = scriptedProvider([
      cell('secret = 41 + 1\nnote = "the first task"\nfinish secret'),
      say("SUMMARY R: the user asked for a value; secret holds 42."),
      cell("finish secret + 1"),
    ]);
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const t1 = yield* rt.turn(s.id, { text: "Remember the original question, please." });
            expect(t1.finalValue).toBe(42);
            const c = yield* rt.compact(s.id);
            expect(c?.payload.summary).toBe("SUMMARY R: the user asked for a value; secret holds 42.");
            expect(provider.requests[1]!.system).toBe(COMPACTION_SYSTEM);
            expect(all(provider.requests[1]!)).toContain("finish secret");

            const t2 = yield* rt.turn(s.id, { text: "Add one." });
            expect(t2.finalValue).toBe(43);
            const seen = all(provider.requests[2]!);
            expect(seen).toContain(SUMMARY_PREFIX);
            expect(seen).toContain("SUMMARY R");
            expect(seen).not.toContain("Remember the original question");
            // the REPL state is not part of the window: its variables are still bound and listed
            expect(seen).toContain("secret");
          }),
        withRlm({}, rlmMode()),
      ),
    );
  });
});
