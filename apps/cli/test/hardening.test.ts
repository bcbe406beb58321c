// Hardening of the CLI shell (issue 14): typo'd subcommands, config files with a BOM or the wrong
// top-level type, LASH_HOME pointing at a file, the base URL kept with a session.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreError } from "@lash/core";
import { Effect } from "effect";
import { afterAll, describe, expect, it } from "vitest";
import { editDistance, parseCommand, typoedSubcommand } from "../src/args.ts";
import { loadConfig } from "../src/config.ts";
import { CliError, damageHint, taggedFailure } from "../src/errors.ts";
import { recordSessionEndpoint, resolvePaths, sessionEndpoint } from "../src/paths.ts";

const usage = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(2);
    return (e as Error).message;
  }
  throw new Error("expected a usage error");
};

const root = mkdtempSync(join(tmpdir(), "lash-hardening-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a typo'd subcommand", () => {
  it("is an error naming the subcommand and how to send the words as a prompt", () => {
    const m = usage(() => parseCommand(["sesions", "list"]));
    expect(m).toContain('unknown command "sesions"');
    expect(m).toContain("did you mean `lash sessions`?");
    expect(m).toContain("lash -- sesions list");
    expect(usage(() => parseCommand(["exprot", "last"]))).toContain("did you mean `lash export`?");
    expect(usage(() => parseCommand(["doctr"]))).toContain("`lash doctor`");
    expect(usage(() => parseCommand(["lashlnag", "run", "x"]))).toContain("`lash lashlang`");
    expect(usage(() => parseCommand(["Sessions"]))).toContain("`lash sessions`");
    expect(usage(() => parseCommand(["confgi", "--json"]))).toContain("`lash config`");
  });

  it("after --, behind -p, or quoted as one argument, the words are the prompt", () => {
    expect(parseCommand(["--", "sesions", "list"])).toMatchObject({
      kind: "run",
      flags: { prompt: "sesions list" },
    });
    expect(parseCommand(["-p", "sesions list"])).toMatchObject({
      kind: "run",
      flags: { print: true, prompt: "sesions list" },
    });
    expect(parseCommand(["sesions list"])).toMatchObject({ kind: "run", flags: { prompt: "sesions list" } });
  });

  it("ordinary first words of a prompt are not taken for typos", () => {
    const prompts = [
      "hello there",
      "help me fix the build",
      "track down the leak",
      "trade offs of sqlite",
      "explain this repo",
      "fix the failing test",
      "expert review please",
      "memo for the team",
      "demon process won't stop",
      "session handling is broken",
      "race condition in the pool",
      "lessons learned",
      "config",
      "write a test",
      "import the csv",
      "tracing is slow",
      "docs for export",
      "do it",
      "make",
      "look at the logs",
      "loom video summary",
    ];
    const flagged: string[] = [];
    for (const p of prompts) {
      const [first, ...rest] = p.split(" ");
      // exact subcommands are subcommands, not typos
      if (["config", "import", "help"].includes(first!)) continue;
      try {
        parseCommand([first!, ...rest]);
      } catch {
        flagged.push(p);
      }
    }
    // "session" (one letter from "sessions") is the one deliberate hit: `lash session list` is a typo
    expect(flagged).toEqual(["session handling is broken"]);
  });

  it("the distance counts an adjacent transposition as one edit", () => {
    expect(editDistance("exprot", "export")).toBe(1);
    expect(editDistance("sesions", "sessions")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(typoedSubcommand("abc")).toBeUndefined();
    expect(typoedSubcommand("deno")).toBe("demo");
    expect(typoedSubcommand("refactor")).toBeUndefined();
  });
});

describe("config files", () => {
  it("a UTF-8 byte-order mark is accepted", () => {
    const file = join(root, "bom.json");
    writeFileSync(file, `\ufeff${JSON.stringify({ model: "openai/gpt-5-mini" })}`);
    expect(loadConfig(file).config).toEqual({ model: "openai/gpt-5-mini" });
  });

  it("an array (or any non-object) is one short error, not the whole schema", () => {
    const file = join(root, "array.json");
    for (const [text, got] of [
      ["[]", "an array"],
      ["42", "42"],
      ["null", "null"],
      ['"x"', '"x"'],
    ] as const) {
      writeFileSync(file, text);
      const m = usage(() => loadConfig(file));
      expect(m).toBe(`invalid config in ${file}: expected a JSON object ({ "model": … }), got ${got}`);
      expect(m.length).toBeLessThan(200);
    }
  });
});

describe("LASH_HOME", () => {
  it("pointing at a file (or under one) is a usage error naming it", () => {
    const file = join(root, "not-a-dir");
    writeFileSync(file, "x");
    expect(usage(() => resolvePaths({ LASH_HOME: file }, root))).toContain(
      `LASH_HOME (${file}) cannot be used: it is a file, not a directory`,
    );
    expect(usage(() => resolvePaths({ LASH_HOME: join(file, "a", "b") }, root))).toContain(
      `${file} is a file, not a directory`,
    );
    const dir = join(root, "home-ok");
    mkdirSync(dir);
    expect(resolvePaths({ LASH_HOME: dir }, root).db).toBe(join(dir, "lash.db"));
    expect(resolvePaths({ LASH_HOME: join(root, "missing", "home") }, root).home).toBe(
      join(root, "missing", "home"),
    );
  });
});

describe("the base URL kept with a session", () => {
  it("is recorded per session, replaced by a new one, and never written when it carries credentials", () => {
    const home = join(root, "endpoints-home");
    mkdirSync(home);
    expect(sessionEndpoint(home, "ses_a")).toBeUndefined();
    recordSessionEndpoint(home, "ses_a", "http://127.0.0.1:11434/v1");
    recordSessionEndpoint(home, "ses_b", "http://127.0.0.1:8080/v1");
    recordSessionEndpoint(home, "ses_a", "http://127.0.0.1:9999/v1");
    expect(sessionEndpoint(home, "ses_a")).toBe("http://127.0.0.1:9999/v1");
    expect(sessionEndpoint(home, "ses_b")).toBe("http://127.0.0.1:8080/v1");
    recordSessionEndpoint(home, "ses_c", "https://user:s3cret@proxy.example/v1");
    expect(sessionEndpoint(home, "ses_c")).toBeUndefined();
    expect(readFileSync(join(home, "endpoints.json"), "utf8")).not.toContain("s3cret");
    writeFileSync(join(home, "endpoints.json"), "not json");
    expect(sessionEndpoint(home, "ses_a")).toBeUndefined();
  });
});

describe("a store error thrown where a payload is first read", () => {
  it("is the store's message, with the doctor hint, not an internal error; other defects stay internal", async () => {
    const damaged = new StoreError({ message: "/x/lash.db is damaged (database disk image is malformed)." });
    const died = await Effect.runPromise(Effect.die(damaged)).catch((e: unknown) => e);
    const typed = taggedFailure(died);
    expect(typed).toEqual({ _tag: "StoreError", message: damaged.message });
    expect(damageHint(typed!)).toContain("lash doctor --repair");
    const bug = await Effect.runPromise(Effect.die(new TypeError("x is undefined"))).catch((e: unknown) => e);
    expect(taggedFailure(bug)).toBeUndefined();
  });
});
