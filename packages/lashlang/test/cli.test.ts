import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runLashlangCli } from "../src/index.ts";

function io(input: string) {
  const stdin = new PassThrough();
  stdin.end(input);
  let out = "";
  let err = "";
  return {
    io: { stdin, stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } },
    out: () => out,
    err: () => err,
  };
}

describe("runLashlangCli", () => {
  it("run - --json prints the outcome object", async () => {
    const t = io('print "hi"\nfinish {a: 1}');
    expect(await runLashlangCli(["run", "-", "--json"], t.io)).toBe(0);
    expect(JSON.parse(t.out())).toEqual({ outcome: "finished", value: { a: 1 }, prints: ["hi"] });
  });

  it("run reports errors with exit code 1", async () => {
    const t = io("x = 1\ny = nope");
    expect(await runLashlangCli(["run", "-", "--json"], t.io)).toBe(1);
    const o = JSON.parse(t.out());
    expect(o.outcome).toBe("error");
    expect(o.error).toMatchObject({ message: "unknown name `nope`", line: 2, column: 1 });
    expect(o.error.rendered).toContain("--> line 2, column 1\ny = nope\n^~~~~~~~");
  });

  it("run without --json prints prints and the final value", async () => {
    const t = io("x = 2\nprint x\n");
    expect(await runLashlangCli(["run", "-"], t.io)).toBe(0);
    expect(t.out()).toBe("2\n");
  });

  it("repl keeps state across cells", async () => {
    const t = io("x = 1\nif x == 1 {\n  y = 2\n}\nfinish x + y\n\nprint nope\n");
    expect(await runLashlangCli(["repl"], t.io)).toBe(0);
    expect(t.out()).toBe("=> 3\n");
    expect(t.err()).toContain("unknown name `nope`");
  });

  it("usage on bad arguments", async () => {
    const t = io("");
    expect(await runLashlangCli(["bogus"], t.io)).toBe(2);
    expect(t.err()).toContain("usage:");
  });
});

describe("runLashlangCli --step-budget", () => {
  it("rejects a budget that is not a positive integer (exit 2, nothing run)", async () => {
    for (const bad of [
      ["--step-budget", "-5"],
      ["--step-budget", "0"],
      ["--step-budget", "abc"],
      ["--step-budget=1.5"],
      ["--step-budget"],
    ]) {
      const t = io("print 1");
      expect(await runLashlangCli(["run", "-", ...bad], t.io)).toBe(2);
      expect(t.err()).toContain("--step-budget expects a positive integer");
      expect(t.out()).toBe("");
    }
  });

  it("a positive budget is used (both spellings)", async () => {
    for (const flag of [["--step-budget", "5"], ["--step-budget=5"]]) {
      const t = io("x = 0\nwhile true { x = x + 1 }");
      expect(await runLashlangCli(["run", "-", ...flag], t.io)).toBe(1);
      expect(t.err()).toContain("more than 5 steps");
    }
  });
});
