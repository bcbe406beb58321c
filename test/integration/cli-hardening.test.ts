// The real `lash` process on the rough edges of issue 14 (items 8, 10, 11): typo'd subcommands,
// errors printed once, blank prompts, a workspace at /, LASH_HOME on a file.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lash, type Sandbox, sandbox } from "./cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const sessionCount = async (b: Sandbox): Promise<number> => {
  const r = await lash(["sessions", "list", "--all", "--json"], { env: b.env, cwd: b.cwd });
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as unknown[]).length;
};

describe("lash on the rough edges", () => {
  it("a typo'd subcommand is an error and reaches no model; after -- it is the prompt", async () => {
    box = await sandbox([{ text: "answered" }]);
    const typo = await lash(["sesions", "list"], { env: box.env, cwd: box.cwd, input: "" });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean `lash sessions`?");
    expect(box.server.requests).toHaveLength(0);

    const sent = await lash(["-p", "--", "sesions", "list"], { env: box.env, cwd: box.cwd });
    expect(sent.code).toBe(0);
    expect(sent.stdout).toBe("answered\n");
    expect(JSON.stringify(box.server.requests[0]?.body)).toContain("sesions list");
  });

  it("a provider error is printed once in text mode", async () => {
    box = await sandbox([{ error: { code: "badRequest", message: "model mock does not exist here" } }]);
    const r = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(1);
    expect(r.stderr.split("model mock does not exist here").length - 1).toBe(1);
    expect(r.stderr).toContain("[lash] stopped (providerError)");
  });

  it("a blank prompt is a usage error that leaves no empty session behind", async () => {
    box = await sandbox([{ text: "never" }]);
    for (const [args, input] of [
      [["-p", "   "], undefined],
      [["-p"], "  \n\t\n"],
      [["-p", "--continue", " "], undefined],
    ] as const) {
      const r = await lash(args, { env: box.env, cwd: box.cwd, ...(input !== undefined ? { input } : {}) });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("no prompt");
    }
    expect(await sessionCount(box)).toBe(0);
    expect(box.server.requests).toHaveLength(0);
  });

  it("--cwd / runs with a warning that the tools can reach the whole file system", async () => {
    box = await sandbox([{ text: "ok" }]);
    const r = await lash(["-p", "--cwd", "/", "--no-session", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("warning: the workspace is /, the root of the file system");
    const plain = await lash(["-p", "--no-session", "hi"], { env: box.env, cwd: box.cwd });
    expect(plain.stderr).not.toContain("warning");
  });

  it("LASH_HOME pointing at a file is a usage error, not an internal EEXIST", async () => {
    box = await sandbox([{ text: "never" }]);
    const file = join(box.cwd, "home-file");
    writeFileSync(file, "");
    const r = await lash(["-p", "hi"], { env: { ...box.env, LASH_HOME: file }, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`LASH_HOME (${file}) cannot be used: it is a file, not a directory`);
    expect(r.stderr).not.toContain("internal error");
  });
});
