// A child agent's and a resumed session's policy (review findings 3 and 4): a real `lash`
// process against the mock wire server. A child's own layer is decided even when no config
// sets a policy; what a child cannot have (writes, sandbox, limits, redaction) refuses the
// spawn; the layers a `lash run` session and its children were created under are stored with
// them and restored when they are resumed with `lash -p --resume`.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jsonLines, lash, type Sandbox, sandbox, testAgent, writeManifest } from "./cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const agent = testAgent;

const write = (id: string, path: string) => ({
  toolCalls: [{ id, name: "write_file", arguments: { path, content: "x" } }],
});
const WRITE = { name: "write_file", kind: "builtin" } as const;

/** Tool results the model was sent in request `i`. */
const sentAt = (i: number) => JSON.stringify(box!.server.requests[i]?.body ?? {});

describe("a child agent's policy", () => {
  for (const leadPolicy of [undefined, { tools: { read_file: { approval: "never" as const } } }])
    it(`denies what the child's own spec denies (lead policy: ${leadPolicy ? "some" : "none, and none in any config"})`, async () => {
      box = await sandbox([
        { toolCalls: [{ id: "c1", name: "worker", arguments: { task: "write it" } }] },
        write("w1", "pwned.txt"),
        { text: "worker done" },
        { text: "lead done" },
      ]);
      writeManifest(box.cwd, [
        agent({
          name: "lead",
          tools: [WRITE, { name: "worker", kind: "agent" }],
          ...(leadPolicy ? { policy: leadPolicy } : {}),
        }),
        agent({ name: "worker", tools: [WRITE], policy: { deny: ["write_file"] } }),
      ]);
      const r = await lash(["run", "lead", "go"], { env: box.env, cwd: box.cwd });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(box.cwd, "pwned.txt"))).toBe(false);
      expect(sentAt(2)).toContain("deny");
      expect(sentAt(2)).toContain("capability:worker");
    });

  it("refuses to spawn a child whose spec asks for writes: stub (not applied per child), saying where to set it", async () => {
    box = await sandbox([
      { toolCalls: [{ id: "c1", name: "worker", arguments: { task: "write it" } }] },
      { text: "lead done" },
    ]);
    writeManifest(box.cwd, [
      agent({ name: "lead", tools: [WRITE, { name: "worker", kind: "agent" }] }),
      agent({ name: "worker", tools: [WRITE], policy: { writes: "stub" } }),
    ]);
    const r = await lash(["run", "lead", "go"], { env: box.env, cwd: box.cwd });
    expect(r.code, r.stderr).toBe(0);
    // the lead got the refusal as the tool's result; no child ran (the next request is the lead's)
    const second = sentAt(1);
    expect(second).toContain('writes: \\"stub\\" (capability:worker)');
    expect(second).toContain("set them there");
    expect(box.server.requests).toHaveLength(2);
  });
});

describe("a resumed session keeps the policy it was created under", () => {
  it("lash -p --resume of a lash run session applies the agent's layer", async () => {
    box = await sandbox([
      write("w1", "one.txt"),
      { text: "first" },
      write("w2", "two.txt"),
      { text: "second" },
    ]);
    writeManifest(box.cwd, [agent({ name: "a", tools: [WRITE], policy: { deny: ["write_file"] } })]);
    const r1 = await lash(["run", "a", "go", "--output-format", "json"], { env: box.env, cwd: box.cwd });
    expect(r1.code, r1.stderr).toBe(0);
    expect(existsSync(join(box.cwd, "one.txt"))).toBe(false);
    const sid = jsonLines(r1.stdout).at(-1)!.sessionId as string;
    const r2 = await lash(["-p", "--resume", sid, "again"], { env: box.env, cwd: box.cwd });
    expect(r2.code, r2.stderr).toBe(0);
    expect(existsSync(join(box.cwd, "two.txt"))).toBe(false);
    expect(sentAt(3)).toContain("agent:a");
  });

  it("a child resumed on its own keeps its own and its parent's layers", async () => {
    box = await sandbox([
      { toolCalls: [{ id: "c1", name: "worker", arguments: { task: "read" } }] },
      { text: "worker done" },
      { text: "lead done" },
      write("w1", "child.txt"),
      { text: "child again" },
    ]);
    writeManifest(box.cwd, [
      agent({ name: "lead", tools: [WRITE, { name: "worker", kind: "agent" }] }),
      agent({ name: "worker", tools: [WRITE], policy: { deny: ["write_file"] } }),
    ]);
    const r1 = await lash(["run", "lead", "go", "--output-format", "json"], { env: box.env, cwd: box.cwd });
    expect(r1.code, r1.stderr).toBe(0);
    const sid = jsonLines(r1.stdout).at(-1)!.sessionId as string;
    const show = await lash(["sessions", "show", sid, "--json"], { env: box.env, cwd: box.cwd });
    const childId = (
      JSON.parse(show.stdout) as {
        messages: { role: string; parts: { details?: { childSessionId?: string } }[] }[];
      }
    ).messages.find((m) => m.role === "tool")!.parts[0]!.details!.childSessionId!;
    const r2 = await lash(["-p", "--resume", childId, "write it now"], { env: box.env, cwd: box.cwd });
    expect(r2.code, r2.stderr).toBe(0);
    expect(existsSync(join(box.cwd, "child.txt"))).toBe(false);
    expect(sentAt(4)).toContain("capability:worker");
  });

  it("refuses to resume, outside lash run, a session whose agent stubs writes (this process would not)", async () => {
    box = await sandbox([
      write("w1", "one.txt"),
      { text: "first" },
      write("w2", "two.txt"),
      { text: "second" },
    ]);
    writeManifest(box.cwd, [agent({ name: "a", tools: [WRITE], policy: { writes: "stub" } })]);
    const r1 = await lash(["run", "a", "go", "--output-format", "json"], { env: box.env, cwd: box.cwd });
    expect(r1.code, r1.stderr).toBe(0);
    expect(existsSync(join(box.cwd, "one.txt"))).toBe(false);
    const sid = jsonLines(r1.stdout).at(-1)!.sessionId as string;
    const r2 = await lash(["-p", "--resume", sid, "again"], { env: box.env, cwd: box.cwd });
    expect(r2.code).not.toBe(0);
    expect(r2.stderr).toContain('writes: "stub" (agent:a)');
    expect(existsSync(join(box.cwd, "two.txt"))).toBe(false);
    expect(box.server.requests).toHaveLength(2);
  });
});
