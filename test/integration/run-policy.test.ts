// The policy layers `lash run` adds after the config's (the project file's and the agent
// spec's), through a real `lash run` against the mock wire server over hand-written manifests:
// their `redaction.keys` hide values like the config's do, their sandbox settings cannot
// loosen the sandbox, and a layer that no longer decodes fails closed and says why.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Manifest, ResolvedAgent } from "@lash/agents";
import { afterEach, describe, expect, it } from "vitest";
import {
  chatMessages,
  lash,
  type Sandbox,
  sandbox,
  testAgent,
  textOf,
  writeManifest,
} from "./cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

/** A build of one agent `a` (shell as its tool unless `agent` says otherwise) under `project`. */
const writeBuild = (cwd: string, agent: Partial<ResolvedAgent>, project: Manifest["project"] = {}): string =>
  writeManifest(
    cwd,
    [testAgent({ name: "a", tools: [{ name: "shell", kind: "builtin" }], ...agent })],
    project,
  );

const toolTexts = (b: Sandbox): string =>
  chatMessages(b.server.requests.at(-1)?.body)
    .filter((m) => m.role === "tool")
    .map((m) => textOf(m.content))
    .join("\n");

const VALUE = "FAKE-deploy-value-0123456789";

describe("lash run: the project file's and the agent's policy layers", () => {
  for (const where of ["project file", "agent spec"] as const)
    it(`redaction.keys of the ${where} keep the variable from the shell and redact KEY=value`, async () => {
      box = await sandbox([
        {
          toolCalls: [
            { id: "s1", name: "shell", arguments: { command: 'echo "V=$DEPLOY_VAR"; cat deploy.env' } },
          ],
        },
        { text: "done" },
      ]);
      writeFileSync(join(box.cwd, "deploy.env"), "DEPLOY_VAR=FAKE-in-file-42\n");
      const policy = { redaction: { keys: ["DEPLOY_VAR"] } };
      writeBuild(
        box.cwd,
        where === "agent spec" ? { policy } : {},
        where === "project file" ? { policy } : {},
      );
      const r = await lash(["run", "a", "go", "--approval-mode", "approve-all"], {
        env: { ...box.env, DEPLOY_VAR: VALUE },
        cwd: box.cwd,
      });
      expect(r.code, r.stderr).toBe(0);
      const texts = toolTexts(box);
      expect(texts).toContain("V=");
      expect(texts).toContain("DEPLOY_VAR=[REDACTED:DEPLOY_VAR]");
      const all = JSON.stringify(box.server.requests.map((q) => q.body));
      expect(all).not.toContain(VALUE);
      expect(all).not.toContain("FAKE-in-file-42");
    });

  it("an agent layer that no longer decodes denies every tool and says why on stderr, once", async () => {
    box = await sandbox([
      { toolCalls: [{ id: "r1", name: "shell", arguments: { command: "echo hi" } }] },
      { toolCalls: [{ id: "r2", name: "shell", arguments: { command: "echo again" } }] },
      { text: "done" },
    ]);
    writeBuild(box.cwd, { policy: { alow: ["shell"] } });
    const r = await lash(["run", "a", "go", "--approval-mode", "approve-all"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(toolTexts(box)).toContain('denied by "*"');
    expect(r.stderr).toContain('alow: unknown key "alow"');
    expect(r.stderr).toContain('did you mean "allow"?');
    expect(r.stderr).toContain("agents/a.agent.md");
    expect(r.stderr).toContain("run `lash build`");
    expect(r.stderr.split('unknown key "alow"')).toHaveLength(2);
  });

  it("the project file's sandbox.mode off is ignored, with a warning", async () => {
    box = await sandbox([{ text: "done" }]);
    writeBuild(box.cwd, {}, { policy: { sandbox: { mode: "off" } } });
    const r = await lash(["run", "a", "go"], { env: box.env, cwd: box.cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('policy.sandbox.mode "off" in the project file (lash.yaml) is ignored');
  });
});
