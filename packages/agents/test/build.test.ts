// `lash build` over the fixtures tree (issue 18, acceptance 1): every problem with its file,
// line and column, model suggestions, cycles and unknown references in one run, and a
// content-addressed manifest (same inputs → same hash; any input byte changed → another).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelCatalog } from "@lash/providers";
import { canonicalJson, sha256Hex } from "@lash/sansio";
import { afterEach, describe, expect, it } from "vitest";
import {
  agentSpecJsonSchema,
  BuildError,
  type BuildOptions,
  type BuildSkill,
  buildProject,
  formatDiagnostic,
  type Manifest,
  readManifest,
  skillFiles,
} from "../src/index.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");
const catalog = ModelCatalog.default();
const models = {
  ids: catalog.list().map((m) => m.id),
  known: (id: string) => catalog.lookup(id) !== undefined,
};
const options = (root: string): BuildOptions => ({ root, lashVersion: "0.0.0-test", models });
/** The fixture's skills as discovery reports them (name, description, directory, files). */
const skillsOf = (root: string): BuildSkill[] =>
  [
    ["review-checklist", "The checklist for reviewing a diff. Use when reviewing changes."],
    ["unused", "A skill no agent lists."],
  ].map(([name, description]) => ({
    name: name as string,
    description: description as string,
    dir: join(root, ".agents", "skills", name as string),
    displayDir: `.agents/skills/${name}`,
    files: skillFiles(join(root, ".agents", "skills", name as string)),
  }));
const lines = (root: string) =>
  buildProject({ ...options(root), write: false }).diagnostics.map(formatDiagnostic);

const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});
function copyOf(fixture: string): string {
  const dir = mkdtempSync(join(tmpdir(), "lash-build-test-"));
  temps.push(dir);
  cpSync(join(FIXTURES, fixture), dir, { recursive: true });
  return dir;
}

describe("lash build: problems", () => {
  it("reports every problem of a broken project at once, each at its file, line and column", () => {
    expect(lines(join(FIXTURES, "broken"))).toEqual([
      'agents/Bad_Name.yaml:1:7: name: expected a name of lowercase letters, digits and dashes (^[a-z0-9][a-z0-9-]*$), got "Bad_Name"',
      "agents/Bad_Name.yaml:2:14: description: expected a string, got 42",
      'agents/Bad_Name.yaml:3:7: mode: expected "standard" or "rlm", got "fast"',
      "agents/Bad_Name.yaml:4:11: maxTurns: expected a positive integer, got -3",
      'agents/alpha.agent.md:4:8: unknown model "openai/gpt-5-mnii"; did you mean "openai/gpt-5-mini", "openai/gpt-4o-mini", "openai/gpt-5-nano"?',
      "agents/alpha.agent.md:6:5: agent cycle: alpha → beta → gamma → alpha",
      'agents/alpha.agent.md:7:5: unknown tool "raed_file"; did you mean "read_file"?',
      'agents/alpha.agent.md:8:5: unknown MCP server "gitlab" (tool "mcp:gitlab"); did you mean "github"?',
      'agents/delta.agent.md:3:1: unknown key "descripton" in the agent spec; did you mean "description"?',
      'agents/gamma.yaml:5:11: schedule: invalid cron "61 * * * *": CronPattern: Invalid value for minute: 61',
      'lash.yaml:3:10: unknown model "claude-sonet-4-5"; did you mean "anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4", "anthropic/claude-opus-4-5"?',
      'lash.yaml:7:1: unknown key "entri" in lash.yaml; did you mean "entry"?',
    ]);
    expect(buildProject({ ...options(join(FIXTURES, "broken")), write: false }).manifest).toBeUndefined();
  });

  it("reports YAML syntax errors and a missing front matter with positions in the whole file", () => {
    expect(lines(join(FIXTURES, "syntax"))).toEqual([
      "agents/broken.agent.md:4:1: Flow sequence in block collection must be sufficiently indented and end with a ]",
      "agents/nofront.agent.md:1:1: expected YAML front matter: the file must start with a line `---`",
    ]);
  });

  it("offsets front-matter positions by the opening line, reports duplicates, bad schemas, entries and nested unknown keys", () => {
    const dir = copyOf("valid");
    writeFileSync(
      join(dir, "reviewer.agent.md"),
      [
        "---",
        "name: reviewer",
        "description: Reviews.",
        "budget: { tokens: 10, dollars: 2 }",
        "tools:",
        "  - { name: read_file, acces: read }",
        "output: { verdict: strng }",
        "schedule: { cron: '0 9 * * *', tz: Mars/Olympus }",
        "policy: { alow: [read_file] }",
        "instruction: Review.",
        "---",
        "Body.",
      ].join("\n"),
    );
    writeFileSync(join(dir, "agents", "copy.yaml"), "name: summarizer\ndescription: again\n");
    writeFileSync(
      join(dir, "lash.yaml"),
      "entry: flows/missing.ts#main\nagents: [agents, ., nowhere]\nskills: [flows, no-skills]\n",
    );
    expect(lines(dir)).toEqual([
      'agents/summarizer.yaml:1:7: agent "summarizer" is already defined in agents/copy.yaml',
      'lash.yaml:1:8: entry file "flows/missing.ts" does not exist',
      'lash.yaml:2:21: agent directory "nowhere" does not exist',
      'lash.yaml:3:17: skill root "no-skills" does not exist',
      'reviewer.agent.md:4:23: unknown key "dollars" in budget',
      'reviewer.agent.md:6:24: unknown key "acces" in tools[0]; did you mean "access"?',
      expect.stringMatching(/^reviewer\.agent\.md:7:9: output: /),
      'reviewer.agent.md:8:36: schedule: unknown time zone "Mars/Olympus" (an IANA name such as "Europe/Berlin")',
      'reviewer.agent.md:9:11: unknown key "alow" in policy; did you mean "allow"?',
    ]);
  });

  it("checks a loop's fields: instruction with schedule, durations, retry, no loop fields without a schedule", () => {
    const dir = copyOf("valid");
    writeFileSync(
      join(dir, "agents", "tick.yaml"),
      [
        "name: tick",
        "description: Ticks.",
        "schedule: { every: 5m }",
        "missed: later",
        "concurrency: 0",
        "timeout: 10 minutes",
        "retry: { attempts: 3, backoff: soon }",
      ].join("\n"),
    );
    writeFileSync(join(dir, "agents", "plain.yaml"), "name: plain\ndescription: Plain.\ninstruction: Go.\n");
    expect(lines(dir)).toEqual([
      'agents/plain.yaml:3:14: instruction: only a scheduled agent has it; add schedule: (a cron string, { cron, tz } or { every: "15m" }) or remove instruction',
      'agents/tick.yaml:4:9: missed: expected "run" or "skip", got "later"',
      "agents/tick.yaml:5:14: concurrency: expected a positive integer, got 0",
      'agents/tick.yaml:6:10: timeout: expected a duration such as "30s", "10m", "2h" or "1d", got "10 minutes"',
      'agents/tick.yaml:7:32: retry.backoff: expected a duration such as "30s", "10m", "2h" or "1d", got "soon"',
    ]);
    // the fields fixed, the missing instruction is the one problem left
    writeFileSync(
      join(dir, "agents", "tick.yaml"),
      "name: tick\ndescription: Ticks.\nschedule: { every: 5m }\n",
    );
    rmSync(join(dir, "agents", "plain.yaml"));
    expect(lines(dir)).toEqual([
      'agents/tick.yaml:3:11: schedule: a scheduled agent needs an instruction, the message each firing sends it; add instruction: "<what to do each time>"',
    ]);
  });

  it("resolves a loop's settings with their defaults into the manifest", () => {
    const dir = copyOf("valid");
    writeFileSync(
      join(dir, "agents", "tick.yaml"),
      "name: tick\ndescription: Ticks.\nschedule: { every: 5m }\ninstruction: Tick.\ntimeout: 2m\nretry: { attempts: 2 }\n",
    );
    const m = buildProject({ ...options(dir), write: false }).manifest as Manifest;
    expect(m.agents.find((a) => a.name === "tick")?.loop).toEqual({
      instruction: "Tick.",
      missed: "run",
      concurrency: 1,
      timeout: "2m",
      retry: { attempts: 2 },
    });
  });

  it("reads lash.json with positions too", () => {
    const dir = copyOf("valid");
    rmSync(join(dir, "lash.yaml"));
    writeFileSync(
      join(dir, "lash.json"),
      '{\n  "entry": "reviewer",\n  "defaults": { "mode": "rlm", "modle": "openai/gpt-5" }\n}\n',
    );
    expect(lines(dir)).toEqual([
      'lash.json:3:32: unknown key "modle" in defaults; did you mean "mode"?',
      'reviewer.agent.md:10:5: unknown MCP server "docs" (tool "mcp:docs/search"); add it under mcpServers in lash.json',
    ]);
  });

  it("warns about policy grants no tool uses and still builds", () => {
    const dir = copyOf("valid");
    const path = join(dir, "agents", "summarizer.yaml");
    writeFileSync(
      path,
      readFileSync(path, "utf8").replace("allow: [read_file]", "allow: [read_file, shell]"),
    );
    const r = buildProject({ ...options(dir), write: false });
    expect(r.ok).toBe(true);
    expect(r.diagnostics.map(formatDiagnostic)).toEqual([
      'agents/summarizer.yaml:9:22: warning: policy.allow grants "shell", which none of the agent\'s tools is',
    ]);
  });
});

describe("lash build: the manifest", () => {
  it("resolves a valid project: tool kinds, models from globs, expanded schemas, the entry", () => {
    const r = buildProject({ ...options(join(FIXTURES, "valid")), write: false });
    expect(r.diagnostics).toEqual([]);
    const m = r.manifest as Manifest;
    expect(m.agents.map((a) => a.name)).toEqual(["reviewer", "summarizer"]);
    const [reviewer, summarizer] = m.agents;
    expect(reviewer?.tools).toEqual([
      { name: "read_file", kind: "builtin" },
      { name: "grep", kind: "builtin" },
      { name: "summarizer", kind: "agent", access: "read" },
      { name: "mcp:docs/search", kind: "mcp" },
    ]);
    expect(reviewer?.input).toEqual({
      type: "object",
      properties: { diff: { type: "string" } },
      required: ["diff"],
      additionalProperties: false,
    });
    expect(reviewer?.instructions).toBe(
      "You review diffs. Be specific: name the file and line of every problem.",
    );
    expect(summarizer?.model).toBe("anthropic/claude-haiku-4-5");
    expect(summarizer?.mode).toBe("rlm");
    expect(summarizer?.schedule).toEqual({ cron: "0 9 * * 1", tz: "Europe/Berlin" });
    expect(m.project.entry).toEqual({ agent: "reviewer" });
    expect(m.inputs.map((i) => i.path)).toEqual(["agents/summarizer.yaml", "lash.yaml", "reviewer.agent.md"]);
    expect(m.lashVersion).toBe("0.0.0-test");
  });

  it("builds the same manifest, byte for byte, twice; writes it under .lash/build/<hash>.json", () => {
    const dir = copyOf("valid");
    const a = buildProject(options(dir));
    const bytesA = readFileSync(a.manifestPath as string, "utf8");
    const b = buildProject(options(dir));
    expect(b.manifest?.hash).toBe(a.manifest?.hash);
    expect(readFileSync(b.manifestPath as string, "utf8")).toBe(bytesA);
    expect(a.manifestPath).toBe(join(dir, ".lash", "build", `${a.manifest?.hash}.json`));
    expect(readManifest(dir)?.hash).toBe(a.manifest?.hash);
    // a copy elsewhere builds to the same hash (nothing absolute goes in)
    expect(buildProject({ ...options(copyOf("valid")), write: false }).manifest?.hash).toBe(a.manifest?.hash);
  });

  it("changes the hash when any input byte changes: project file, .agent.md front matter and body, agents/*.yaml, entry function", () => {
    const dir = copyOf("valid");
    writeFileSync(join(dir, "flows", "main.ts"), "export async function main() {}\n");
    const lash = join(dir, "lash.yaml");
    writeFileSync(lash, readFileSync(lash, "utf8").replace("entry: reviewer", "entry: flows/main.ts#main"));
    const hash = () => {
      const r = buildProject({ ...options(dir), write: false });
      expect(r.diagnostics).toEqual([]);
      return r.manifest?.hash as string;
    };
    const base = hash();
    const seen = new Set([base]);
    for (const file of ["lash.yaml", "reviewer.agent.md", "agents/summarizer.yaml", "flows/main.ts"]) {
      const path = join(dir, file);
      const original = readFileSync(path);
      writeFileSync(path, Buffer.concat([original, Buffer.from("\n")]));
      const changed = hash();
      expect(changed, file).not.toBe(base);
      seen.add(changed);
      writeFileSync(path, original);
      expect(hash(), `${file} restored`).toBe(base);
    }
    // one changed byte inside the Markdown body
    const md = join(dir, "reviewer.agent.md");
    writeFileSync(md, readFileSync(md, "utf8").replace("Be specific", "Be Specific"));
    seen.add(hash());
    expect(seen.size).toBe(6);
  });
});

describe("agent-spec.schema.json", () => {
  it("is the JSON Schema of AgentSpec as committed (regenerate: pnpm --filter @lash/agents schema)", () => {
    const committed = readFileSync(join(import.meta.dirname, "..", "agent-spec.schema.json"), "utf8");
    // compared as JSON: the committed file is formatted by biome
    expect(JSON.parse(committed)).toEqual(agentSpecJsonSchema());
  });
});

describe("lash build: skills", () => {
  it("checks skill references, warns about unreferenced skills, applies the catalog and writes skills.lock", () => {
    const dir = copyOf("valid");
    const reviewer = join(dir, "reviewer.agent.md");
    writeFileSync(
      reviewer,
      readFileSync(reviewer, "utf8").replace("maxTurns: 12", "maxTurns: 12\nskills: [review-checklist]"),
    );
    const summarizer = join(dir, "agents", "summarizer.yaml");
    writeFileSync(summarizer, `${readFileSync(summarizer, "utf8")}skills: [review-checklst]\n`);
    const broken = buildProject({ ...options(dir), skills: skillsOf(dir), write: false });
    expect(broken.diagnostics.map(formatDiagnostic)).toEqual([
      '.agents/skills/unused/SKILL.md:1:1: warning: skill "unused" is not in any agent\'s skills',
      'agents/summarizer.yaml:12:10: unknown skill "review-checklst"; did you mean "review-checklist"?',
    ]);
    writeFileSync(
      summarizer,
      readFileSync(summarizer, "utf8").replace("review-checklst", "review-checklist"),
    );
    const r = buildProject({ ...options(dir), skills: skillsOf(dir) });
    expect(r.ok).toBe(true);
    const m = r.manifest as Manifest;
    expect(m.skills.map((s) => [s.name, s.dir])).toEqual([
      ["review-checklist", ".agents/skills/review-checklist"],
      ["unused", ".agents/skills/unused"],
    ]);
    const instructions = m.agents[0]?.instructions ?? "";
    expect(
      instructions.startsWith(
        "You review diffs. Be specific: name the file and line of every problem.\n\n## Skills\n",
      ),
    ).toBe(true);
    expect(instructions).toContain("call `load_skill` with its name");
    expect(
      instructions.endsWith(
        "\n- review-checklist: The checklist for reviewing a diff. Use when reviewing changes.",
      ),
    ).toBe(true);
    expect(instructions).not.toContain("- unused:");
    expect(m.inputs.map((i) => i.path)).toContain(".agents/skills/review-checklist/templates/report.md");
    const lock = JSON.parse(readFileSync(join(dir, "skills.lock"), "utf8"));
    expect(Object.keys(lock.skills)).toEqual(["review-checklist", "unused"]);
    expect(lock.skills["review-checklist"].sha256).toBe(m.skills[0]?.sha256);

    // any byte of any skill file changes the skill's sha256 and the manifest's hash
    const template = join(dir, ".agents", "skills", "review-checklist", "templates", "report.md");
    writeFileSync(template, readFileSync(template, "utf8").replace("verdict", "Verdict"));
    const changed = buildProject({ ...options(dir), skills: skillsOf(dir), write: false })
      .manifest as Manifest;
    expect(changed.skills[0]?.sha256).not.toBe(m.skills[0]?.sha256);
    expect(changed.skills[1]?.sha256).toBe(m.skills[1]?.sha256);
    expect(changed.hash).not.toBe(m.hash);
  });
});

describe("lash build: the same hash in every locale", () => {
  it("orders agents and skills by code point, not by the process's locale", () => {
    const dir = copyOf("valid");
    // names Czech collation orders differently ("ch" sorts after "h")
    for (const name of ["ch-agent", "d-agent", "h-agent"])
      writeFileSync(join(dir, "agents", `${name}.yaml`), `name: ${name}\ndescription: ${name}\n`);
    const skills = ["ch-skill", "d-skill", "h-skill"].map((name) => ({
      name,
      description: name,
      dir: join(dir, ".agents", "skills", "review-checklist"),
      displayDir: `.agents/skills/${name}`,
      files: ["SKILL.md"],
    }));
    const build = () => buildProject({ ...options(dir), skills, write: false }).manifest as Manifest;
    const here = build();
    // run the build as a process whose locale is cs-CZ would (localeCompare follows the locale)
    const original = String.prototype.localeCompare;
    const czech = new Intl.Collator("cs-CZ");
    String.prototype.localeCompare = function (this: string, that: string) {
      return czech.compare(this, that);
    };
    let there: Manifest;
    try {
      there = build();
    } finally {
      String.prototype.localeCompare = original;
    }
    expect(there.hash).toBe(here.hash);
    expect(here.agents.map((a) => a.name).slice(0, 3)).toEqual(["ch-agent", "d-agent", "h-agent"]);
    expect(here.skills.map((s) => s.name)).toEqual(["ch-skill", "d-skill", "h-skill"]);
  });
});

describe("readManifest: only an intact, current build", () => {
  /** A build file as `lash build` writes it (the hash over the canonical body). */
  const write = (dir: string, body: Omit<Manifest, "hash">): string => {
    const hash = sha256Hex(canonicalJson(body));
    mkdirSync(join(dir, ".lash", "build"), { recursive: true });
    writeFileSync(join(dir, ".lash", "build", `${hash}.json`), canonicalJson({ ...body, hash }));
    return hash;
  };
  const body = (lashVersion: string): Omit<Manifest, "hash"> => ({
    version: 1,
    lashVersion,
    inputs: [],
    project: {},
    agents: [],
    skills: [],
  });

  it("makes an ambiguous --manifest prefix an error that lists the matches", () => {
    const dir = mkdtempSync(join(tmpdir(), "lash-build-test-"));
    temps.push(dir);
    // two builds whose hashes share a first digit (one of the first 17 bodies must)
    const byDigit = new Map<string, number>();
    let pair: [number, number] | undefined;
    for (let i = 0; pair === undefined; i++) {
      const digit = sha256Hex(canonicalJson(body(`v${i}`)))[0] as string;
      const seen = byDigit.get(digit);
      if (seen !== undefined) pair = [seen, i];
      else byDigit.set(digit, i);
    }
    const a = write(dir, body(`v${pair[0]}`));
    const b = write(dir, body(`v${pair[1]}`));
    const prefix = a.slice(0, 1);
    expect(() => readManifest(dir, prefix)).toThrow(BuildError);
    expect(() => readManifest(dir, prefix)).toThrow(
      `--manifest ${prefix} matches 2 builds: ${[a, b].sort().join(", ")}; give more of the hash`,
    );
    expect(readManifest(dir, a)?.hash).toBe(a);
    expect(readManifest(dir, b.slice(0, 20))?.hash).toBe(b);
  });

  it("refuses a build whose recorded input is gone or changed, and a `~lash/` input under the home", () => {
    const dir = copyOf("valid");
    const home = mkdtempSync(join(tmpdir(), "lash-build-home-"));
    temps.push(home);
    mkdirSync(join(home, "skills", "x"), { recursive: true });
    writeFileSync(join(home, "skills", "x", "SKILL.md"), "one\n");
    const built = buildProject(options(dir)).manifest as Manifest;
    const hash = write(dir, {
      ...(({ hash: _, ...rest }) => rest)(built),
      inputs: [...built.inputs, { path: "~lash/skills/x/SKILL.md", sha256: sha256Hex("one\n") }],
    });
    rmSync(join(dir, ".lash", "build", `${built.hash}.json`));
    expect(readManifest(dir, { home })?.hash).toBe(hash);
    writeFileSync(join(home, "skills", "x", "SKILL.md"), "two\n");
    expect(() => readManifest(dir, { home })).toThrow(
      `~lash/skills/x/SKILL.md changed since build ${hash.slice(0, 12)}; run \`lash build\``,
    );
    rmSync(join(dir, "reviewer.agent.md"));
    expect(() => readManifest(dir, { checkInputs: true })).toThrow(
      `reviewer.agent.md is gone since build ${hash.slice(0, 12)}; run \`lash build\``,
    );
    expect(readManifest(dir, { checkInputs: false })?.hash).toBe(hash);
  });
});
