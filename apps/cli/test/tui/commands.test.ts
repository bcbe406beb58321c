import { describe, expect, it } from "vitest";
import { COMMANDS, complete, helpLines, parseCommand } from "../../src/tui/commands.ts";

describe("slash commands", () => {
  it("parses commands, aliases and arguments", () => {
    const r = parseCommand("/model  test/other ");
    expect(r.kind).toBe("command");
    if (r.kind === "command") {
      expect(r.command.spec.name).toBe("model");
      expect(r.command.args).toBe("test/other");
    }
    const q = parseCommand("/exit");
    expect(q.kind === "command" && q.command.spec.name).toBe("quit");
    const h = parseCommand("/?");
    expect(h.kind === "command" && h.command.spec.name).toBe("help");
  });

  it("treats paths and ordinary text as prompts", () => {
    expect(parseCommand("/usr/bin/env is missing").kind).toBe("text");
    expect(parseCommand("hello /help").kind).toBe("text");
  });

  it("suggests the nearest command for an unknown one", () => {
    expect(parseCommand("/hlep")).toEqual({ kind: "unknown", name: "hlep", suggestion: "help" });
    expect(parseCommand("/res")).toEqual({ kind: "unknown", name: "res", suggestion: "resume" });
    expect(parseCommand("/zzzzzz")).toEqual({ kind: "unknown", name: "zzzzzz" });
  });

  it("completes prefixes and documents every command", () => {
    expect(complete("/e")).toEqual(["export", "expand"]);
    expect(complete("c")).toEqual(["compact", "cost", "clear"]);
    const help = helpLines().join("\n");
    for (const c of COMMANDS) expect(help).toContain(`/${c.name}`);
  });
});
