// Acceptance 7 of issue 17: the risk evaluator against a corpus of shell commands, patches,
// edits and other tool calls, each with its expected level and category (and for many the
// expected reason). The corpus is data (risk-corpus.json); this file only runs it.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ToolEffectKind, ToolPreview } from "@lash/core";
import { describe, expect, it } from "vitest";
import { assessRisk, decide, resolvePolicy, riskAssessor } from "../src/index.ts";

interface Case {
  readonly command?: string;
  readonly cwd?: string;
  readonly tool?: string;
  readonly args?: unknown;
  readonly effects?: readonly ToolEffectKind[];
  readonly preview?: ToolPreview;
  readonly level: "low" | "medium" | "high";
  readonly category: string;
  readonly reason?: string;
}

const corpus = JSON.parse(readFileSync(path.join(import.meta.dirname, "risk-corpus.json"), "utf8")) as {
  readonly workspace: string;
  readonly home: string;
  readonly cases: readonly Case[];
};

const label = (c: Case) =>
  c.command !== undefined ? `shell: ${c.command}` : `${c.tool} ${JSON.stringify(c.args).slice(0, 80)}`;

describe("risk corpus", () => {
  it("has at least 60 shell commands and some patches and edits", () => {
    expect(corpus.cases.filter((c) => c.command !== undefined).length).toBeGreaterThanOrEqual(60);
    expect(corpus.cases.filter((c) => c.tool === "apply_patch").length).toBeGreaterThanOrEqual(5);
    expect(
      corpus.cases.filter((c) => c.tool === "edit" || c.tool === "write_file").length,
    ).toBeGreaterThanOrEqual(5);
    for (const level of ["low", "medium", "high"])
      expect(corpus.cases.some((c) => c.level === level)).toBe(true);
  });

  it.each(corpus.cases.map((c) => [label(c), c] as const))("%s", (_, c) => {
    const risk = assessRisk(
      c.command !== undefined
        ? {
            name: "shell",
            args: { command: c.command, ...(c.cwd ? { cwd: c.cwd } : {}) },
            effects: ["exec"],
            workspace: corpus.workspace,
            home: corpus.home,
          }
        : {
            name: c.tool ?? "",
            args: c.args,
            effects: c.effects ?? ["write"],
            workspace: corpus.workspace,
            home: corpus.home,
            ...(c.preview ? { preview: c.preview } : {}),
          },
    );
    expect({ level: risk.level, category: risk.category }, risk.reasons.join(" | ")).toEqual({
      level: c.level,
      category: c.category,
    });
    if (c.reason !== undefined) expect(risk.reasons.join(" | ")).toContain(c.reason);
  });
});

describe("risk in decide", () => {
  const policy = resolvePolicy([{ name: "global", layer: { approval: "risk" } }]);
  const shell = (command: string) => ({ name: "shell", args: { command }, effects: ["exec"] as const });
  const options = { root: "/work/ws", assessRisk: riskAssessor("/work/ws", "/home/u") };

  it("approval risk lets a low-risk command run and asks about a high-risk one, with the risk attached", () => {
    expect(decide(policy, shell("git status && ls -la"), options).action).toBe("allow");
    const v = decide(policy, shell("ls; sudo reboot"), options);
    expect(v.action).toBe("ask");
    expect(v.risk).toMatchObject({ level: "high", category: "privilege" });
    expect(v.reason).toContain("runs as another user");
  });

  it("asks at medium with the default threshold, not with threshold high", () => {
    expect(decide(policy, shell("npm install left-pad"), options).action).toBe("ask");
    const lenient = resolvePolicy([
      { name: "global", layer: { approval: "risk", risk: { threshold: "high" } } },
    ]);
    expect(decide(lenient, shell("npm install left-pad"), options).action).toBe("allow");
    expect(decide(lenient, shell("rm -rf build"), options).action).toBe("ask");
  });
});

describe("paths", () => {
  it("judges a file by its path below the workspace root, not by the directories the workspace lives in", () => {
    const at = (workspace: string, path: string) =>
      assessRisk({ name: "write_file", args: { path, content: "x\n" }, effects: ["write"], workspace });
    expect(at("/home/u/.ssh-tools/.git-mirror/.lash-work", "src/a.ts").level).toBe("low");
    expect(at("/srv/.git/checkout", "src/a.ts")).toMatchObject({ level: "low", category: "write" });
    expect(at("/srv/.git/checkout", ".git/config")).toMatchObject({ level: "high", category: "write" });
  });
});
