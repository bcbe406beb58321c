// The RLM prompt describes processes, sleep, signals and (when the host offers them) triggers, and
// the Lashlang it shows passes the checker with the abilities the RLM executor enables.
import { checkCell } from "@lash/lashlang";
import { renderSystemPrompt } from "@lash/sansio/internal";
import { describe, expect, it } from "vitest";
import { hostSurface, rlmOperations } from "../../src/internal.ts";

const ABILITIES = { processes: true, sleep: true, processSignals: true };

/** The inline code spans of the bullet that starts with `label`. */
function spans(prompt: string, label: string): string[] {
  const line = prompt.split("\n").find((l) => l.startsWith(`- ${label}`));
  if (!line) throw new Error(`no bullet ${label}`);
  return [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

describe("the RLM prompt: processes, sleep, signals, triggers", () => {
  it("has process, sleep and signal bullets whose examples pass the checker; no trigger bullet without the ability", () => {
    const prompt = renderSystemPrompt(undefined, rlmOperations(new Map()));
    expect(prompt).toContain("- Sleep: pause foreground code or process code");
    expect(prompt).toContain("- Background processes:");
    expect(prompt).toContain("- Signalling processes:");
    expect(prompt).not.toContain("- Trigger registry:");
    const decl = spans(prompt, "Background processes").find((s) => s.startsWith("process worker()"))!;
    const program = `${decl}\nw = start worker()\nsignal_run(w, "approve", { ok: true })\nsleep for "5s"\nfinish (await w)?`;
    expect(checkCell(program, { abilities: ABILITIES })).toMatchObject({ ok: true });
  });

  it("with the triggers ability the registry bullet's example registers against the catalog", () => {
    const ops = rlmOperations(new Map(), { triggers: true });
    const prompt = renderSystemPrompt(undefined, ops);
    const code = spans(prompt, "Trigger registry");
    const source = code.find((s) => s.startsWith("source = cron.Schedule"))!;
    const register = code.find((s) => s.startsWith("receipt = await triggers.register"))!;
    const program = `process daily_digest(tick: any) { finish tick }\n${source}\n${register}\nprint receipt.id`;
    expect(
      checkCell(program, {
        surface: hostSurface(ops),
        abilities: { ...ABILITIES, triggers: true },
        projected: ["trigger"],
      }),
    ).toMatchObject({ ok: true });
  });
});
