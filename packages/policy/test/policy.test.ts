// The layered tool policy, table-driven: layers, groups, globs, profiles, deny-wins, the
// strictest approval, workspace.denyPatterns and subagent narrowing, over the real built-in
// tool definitions (their declared effects) and a few MCP-shaped ones.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GovernedCall, RiskSummary, ToolDefinition } from "@lash/core";
import {
  childPolicy,
  decide,
  decodePolicyLayer,
  explain,
  makeGovernance,
  type NamedLayer,
  type PolicyLayer,
  policyLayerIssues,
  policyLayerJsonSchema,
  resolvePolicy,
} from "@lash/policy";
import { toolsPlugin } from "@lash/tools";
import { Either } from "effect";
import { afterAll, describe, expect, it } from "vitest";

const root = mkdtempSync(join(tmpdir(), "lash-policy-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const builtins = toolsPlugin({ root }).tools;
// stand-ins shaped as @lash/subagents and @lash/plugin-mcp define them (their own tests check
// the effects they declare; this package's tests may not import them)
const stub = (name: string, family: string, effects: ToolDefinition["effects"]): ToolDefinition => ({
  name,
  description: name,
  inputSchema: { type: "object" },
  family,
  ...(effects ? { effects } : {}),
  execute: () => {
    throw new Error("not run");
  },
});
const tools = new Map<string, ToolDefinition>(
  [
    ...builtins,
    stub("spawn_agent", "agent", ["read"]),
    stub("submit_result", "agent", ["read"]),
    // a trusted server's write tool (openWorldHint absent), a trusted read-only one, an untrusted one
    stub("mcp__github__create_issue", "mcp", ["write", "network"]),
    stub("mcp__github__search", "mcp", ["read"]),
    stub("mcp__untrusted__read_thing", "mcp", ["write"]),
  ].map((t) => [t.name, t]),
);
const tool = (name: string): ToolDefinition => {
  const t = tools.get(name);
  if (!t) throw new Error(`no tool ${name}`);
  return t;
};

const layers = (...ls: (PolicyLayer | [string, PolicyLayer])[]): NamedLayer[] =>
  ls.map((l, i) => (Array.isArray(l) ? { name: l[0], layer: l[1] } : { name: `l${i}`, layer: l }));

const verdict = (ls: NamedLayer[], name: string, args: unknown = {}) =>
  decide(resolvePolicy(ls), { name, args, tool: tool(name) }, { root });

describe("classification", () => {
  it.each([
    ["read_file", ["read"]],
    ["glob", ["read"]],
    ["grep", ["read"]],
    ["write_file", ["write"]],
    ["edit", ["write"]],
    ["apply_patch", ["write"]],
    ["shell", ["exec"]],
    ["update_plan", ["read"]],
  ])("%s declares effects %j, and readOnly agrees", (name, effects) => {
    const t = tool(name);
    expect(t.effects).toEqual(effects);
    if (t.readOnly === true) expect(t.effects).toEqual(["read"]);
    if (effects.includes("write") || effects.includes("exec")) expect(t.readOnly).not.toBe(true);
  });
});

type Row = [
  label: string,
  layers: NamedLayer[],
  tool: string,
  action: "allow" | "deny" | "ask",
  layer?: string,
];

const table: Row[] = [
  ["no layers: everything allowed", [], "shell", "allow", "(default)"],
  ["empty allow means all", layers({ allow: [] }), "write_file", "allow"],
  ["allow by name", layers({ allow: ["read_file"] }), "read_file", "allow"],
  ["not in allow", layers({ allow: ["read_file"] }), "grep", "deny", "l0"],
  ["allow group:fs covers edit", layers({ allow: ["group:fs"] }), "edit", "allow"],
  ["allow group:fs excludes shell", layers({ allow: ["group:fs"] }), "shell", "deny", "l0"],
  ["group:fs:read excludes write_file", layers({ allow: ["group:fs:read"] }), "write_file", "deny", "l0"],
  ["group:fs:write covers apply_patch", layers({ allow: ["group:fs:write"] }), "apply_patch", "allow"],
  ["group:runtime covers shell", layers({ allow: ["group:runtime"] }), "shell", "allow"],
  ["group:plan covers update_plan", layers({ allow: ["group:plan"] }), "update_plan", "allow"],
  ["group:agents covers spawn_agent", layers({ allow: ["group:agents"] }), "spawn_agent", "allow"],
  ["group:mcp covers an MCP tool", layers({ allow: ["group:mcp"] }), "mcp__github__search", "allow"],
  ["group:mcp excludes a built-in", layers({ allow: ["group:mcp"] }), "read_file", "deny", "l0"],
  [
    "group:mcp:<server> covers its tools",
    layers({ allow: ["group:mcp:github"] }),
    "mcp__github__create_issue",
    "allow",
  ],
  [
    "group:mcp:<server> excludes another server",
    layers({ allow: ["group:mcp:github"] }),
    "mcp__untrusted__read_thing",
    "deny",
    "l0",
  ],
  ["group:read by effects", layers({ allow: ["group:read"] }), "grep", "allow"],
  ["group:write by effects", layers({ allow: ["group:write"] }), "grep", "deny", "l0"],
  ["group:exec by effects", layers({ allow: ["group:exec"] }), "shell", "allow"],
  [
    "group:network: trusted MCP with openWorld",
    layers({ deny: ["group:network"] }),
    "mcp__github__create_issue",
    "deny",
    "l0",
  ],
  [
    "untrusted MCP read-only claim is a write",
    layers({ deny: ["group:write"] }),
    "mcp__untrusted__read_thing",
    "deny",
    "l0",
  ],
  ["glob allow", layers({ allow: ["mcp__github__*"] }), "mcp__github__create_issue", "allow"],
  [
    "glob does not cover others",
    layers({ allow: ["mcp__github__*"] }),
    "mcp__untrusted__read_thing",
    "deny",
    "l0",
  ],
  ["brace glob", layers({ allow: ["{read_file,grep}"] }), "grep", "allow"],
  [
    "deny wins over allow in the same layer",
    layers({ allow: ["shell"], deny: ["shell"] }),
    "shell",
    "deny",
    "l0",
  ],
  [
    "deny in a later layer wins over allow",
    layers({ allow: ["group:fs"] }, { deny: ["edit"] }),
    "edit",
    "deny",
    "l1",
  ],
  [
    "deny in an earlier layer wins",
    layers({ deny: ["group:runtime"] }, { allow: ["shell"] }),
    "shell",
    "deny",
    "l0",
  ],
  [
    "allow is the intersection of layers",
    layers({ allow: ["group:fs"] }, { allow: ["group:fs:read", "shell"] }),
    "write_file",
    "deny",
    "l1",
  ],
  [
    "intersection: in both",
    layers({ allow: ["group:fs"] }, { allow: ["group:fs:read", "shell"] }),
    "read_file",
    "allow",
  ],
  [
    "intersection: shell only in the second",
    layers({ allow: ["group:fs"] }, { allow: ["group:fs:read", "shell"] }),
    "shell",
    "deny",
    "l0",
  ],
  ["profile minimal: read", layers({ profile: "minimal" }), "glob", "allow"],
  ["profile minimal: plan", layers({ profile: "minimal" }), "update_plan", "allow"],
  ["profile minimal: no shell", layers({ profile: "minimal" }), "shell", "deny", "profile:minimal (l0)"],
  ["profile readonly: effects only read", layers({ profile: "readonly" }), "mcp__github__search", "allow"],
  ["profile readonly: no write", layers({ profile: "readonly" }), "edit", "deny", "profile:readonly (l0)"],
  [
    "profile readonly: network reads are not read-only",
    layers({ profile: "readonly" }),
    "mcp__github__create_issue",
    "deny",
    "profile:readonly (l0)",
  ],
  [
    "profile coding: shell asks (risk, no evaluator)",
    layers({ profile: "coding" }),
    "shell",
    "ask",
    "profile:coding (l0)",
  ],
  ["profile coding: read never asks", layers({ profile: "coding" }), "read_file", "allow"],
  [
    "profile coding: no MCP",
    layers({ profile: "coding" }),
    "mcp__github__search",
    "deny",
    "profile:coding (l0)",
  ],
  ["profile full: everything", layers({ profile: "full" }), "mcp__github__create_issue", "allow"],
  [
    "profile + a layer's deny",
    layers({ profile: "full", deny: ["group:mcp"] }),
    "mcp__github__search",
    "deny",
    "l0",
  ],
  ["approval always", layers({ approval: "always" }), "grep", "ask", "l0"],
  ["approval never", layers({ approval: "never" }), "shell", "allow", "l0"],
  ["approval risk without evaluator: write asks", layers({ approval: "risk" }), "write_file", "ask", "l0"],
  ["approval risk without evaluator: read allowed", layers({ approval: "risk" }), "read_file", "allow", "l0"],
  [
    "per-tool approval by name",
    layers({ tools: { write_file: { approval: "always" } } }),
    "write_file",
    "ask",
    "l0",
  ],
  [
    "per-tool approval by glob",
    layers({ tools: { "mcp__*": { approval: "always" } } }),
    "mcp__github__search",
    "ask",
    "l0",
  ],
  [
    "per-tool approval by group",
    layers({ tools: { "group:fs:write": { approval: "always" } } }),
    "edit",
    "ask",
    "l0",
  ],
  [
    "exact name beats a group in one layer",
    layers({ tools: { "group:fs": { approval: "always" }, grep: { approval: "never" } } }),
    "grep",
    "allow",
    "l0",
  ],
  [
    "strictest wins across layers",
    layers({ approval: "never" }, { tools: { shell: { approval: "always" } } }),
    "shell",
    "ask",
    "l1",
  ],
  [
    "strictest wins: a later never does not relax",
    layers({ tools: { shell: { approval: "always" } } }, { approval: "never" }),
    "shell",
    "ask",
    "l0",
  ],
  ["risk beats never", layers({ approval: "never" }, { approval: "risk" }), "edit", "ask", "l1"],
  ["deny beats approval", layers({ approval: "always", deny: ["shell"] }), "shell", "deny", "l0"],
];

describe("decide", () => {
  it.each(table)("%s", (_label, ls, name, action, layer) => {
    const v = verdict(ls, name);
    expect(v.action, v.reason).toBe(action);
    if (layer !== undefined) expect(v.layer).toBe(layer);
    expect(v.reason.length).toBeGreaterThan(0);
  });

  it("a denial says which rule and layer, and that deny wins", () => {
    const v = verdict(layers(["project", { deny: ["group:runtime"] }]), "shell");
    expect(v).toMatchObject({ action: "deny", layer: "project", rule: 'deny "group:runtime"' });
    expect(v.reason).toContain("deny always wins");
  });

  // read_output (@lash/core's output budget), load_skill and read_skill_file (@lash/agents' skills),
  // shaped as those packages define them: every profile allows them, a deny still wins
  const readControl = [
    { name: "read_output", description: "", inputSchema: {}, readOnly: true, family: "read", execute: null },
    ...["load_skill", "read_skill_file"].map((name) => stub(name, "read", ["read"])),
  ] as unknown as ToolDefinition[];
  for (const profile of ["minimal", "readonly", "coding", "full"] as const)
    it(`profile ${profile} allows read_output, load_skill and read_skill_file`, () => {
      const p = resolvePolicy(layers({ profile }));
      for (const tool of readControl) {
        const v = decide(p, { name: tool.name, args: {}, tool });
        expect(v.action, `${tool.name}: ${v.reason}`).toBe("allow");
      }
    });
  it("a layer can still deny a read-only control tool", () => {
    const v = decide(resolvePolicy(layers({ profile: "coding", deny: ["load_skill"] })), {
      name: "load_skill",
      tool: readControl[1] as ToolDefinition,
    });
    expect(v.action).toBe("deny");
  });

  it("an unknown tool counts as a write", () => {
    const v = decide(resolvePolicy(layers({ approval: "risk" })), { name: "mystery", args: {} });
    expect(v).toMatchObject({ action: "ask", effects: ["write"] });
  });
});

describe("risk threshold", () => {
  const at = (level: RiskSummary["level"]) => (): RiskSummary => ({
    level,
    category: "exec",
    reasons: [`a ${level} thing`],
  });
  it.each([
    [undefined, "low", "allow"],
    [undefined, "medium", "ask"],
    [undefined, "high", "ask"],
    ["high", "medium", "allow"],
    ["high", "high", "ask"],
    ["low", "low", "ask"],
  ] as const)("threshold %s, risk %s → %s", (threshold, level, action) => {
    const policy = resolvePolicy(layers({ approval: "risk", ...(threshold ? { risk: { threshold } } : {}) }));
    const v = decide(
      policy,
      { name: "shell", args: { command: "x" }, tool: tool("shell") },
      { assessRisk: at(level) },
    );
    expect(v.action).toBe(action);
    expect(v.risk?.level).toBe(level);
  });
  it("the strictest threshold of all layers applies", () => {
    const policy = resolvePolicy(layers({ risk: { threshold: "high" } }, { risk: { threshold: "low" } }));
    expect(policy.riskThreshold).toBe("low");
  });
});

describe("workspace.denyPatterns", () => {
  const ls = layers(["global", { workspace: { denyPatterns: [".env*", "**/*.pem", "secrets/**"] } }]);
  it.each([
    ["read_file", { path: ".env" }, "deny"],
    ["read_file", { path: "config/.env.local" }, "deny"],
    ["read_file", { path: "./certs/server.pem" }, "deny"],
    ["read_file", { path: "src/../.env" }, "deny"],
    ["write_file", { path: "secrets/a/b.txt", content: "" }, "deny"],
    ["edit", { path: "deploy.pem", edits: [] }, "deny"],
    ["glob", { pattern: "*.ts", path: "secrets" }, "deny"],
    ["glob", { pattern: "*.ts", path: "src" }, "allow"],
    ["grep", { pattern: "x", path: "secrets/x" }, "deny"],
    ["read_file", { path: "src/env.ts" }, "allow"],
    ["read_file", { path: "README.md" }, "allow"],
    ["shell", { command: "cat .env" }, "allow"],
  ] as const)("%s %j → %s", (name, args, action) => {
    const v = verdict(ls, name, args);
    expect(v.action).toBe(action);
    if (action === "deny") {
      expect(v.layer).toBe("workspace.denyPatterns");
      expect(v.reason).toContain("workspace.denyPatterns");
    }
  });
  it("absolute paths under the root are matched relative to it", () => {
    expect(verdict(ls, "read_file", { path: join(root, "a", ".env.prod") }).action).toBe("deny");
  });
  it("apply_patch: every file the diff names is checked", () => {
    const patch = [
      "--- a/src/x.ts",
      "+++ b/src/x.ts",
      "@@ -1 +1 @@",
      "-a",
      "+b",
      "--- /dev/null",
      "+++ b/keys/new.pem",
      "@@ -0,0 +1 @@",
      "+k",
    ].join("\n");
    const v = verdict(ls, "apply_patch", { patch });
    expect(v).toMatchObject({ action: "deny", layer: "workspace.denyPatterns" });
    expect(v.reason).toContain("keys/new.pem");
  });
  it("patterns of every layer add up", () => {
    const p = resolvePolicy(
      layers({ workspace: { denyPatterns: ["a"] } }, { workspace: { denyPatterns: ["b"] } }),
    );
    expect(p.denyPatterns.map((d) => d.pattern)).toEqual(["a", "b"]);
  });
});

describe("subagent narrowing: a child never gains a tool its parent lacks", () => {
  const parents: [string, NamedLayer[]][] = [
    ["no policy", []],
    ["read-only fs", layers(["global", { allow: ["group:fs:read"] }])],
    ["coding, no agents", layers(["global", { profile: "coding", deny: ["group:agents"] }])],
    ["deny shell", layers(["project", { deny: ["shell"] }])],
    ["minimal", layers(["global", { profile: "minimal" }])],
  ];
  const children: [string, PolicyLayer][] = [
    ["nothing", {}],
    ["allow everything", { allow: [] }],
    ["full profile", { profile: "full" }],
    ["allow shell and writes", { allow: ["shell", "group:fs:write", "group:mcp"] }],
    ["approval never", { approval: "never" }],
  ];
  const names = [...tools.keys()];
  for (const [pl, parentLayers] of parents)
    for (const [cl, own] of children)
      it(`parent ${pl}, child ${cl}`, () => {
        const parent = resolvePolicy(parentLayers);
        const child = childPolicy(parent, [{ name: "capability:test", layer: own }]);
        for (const name of names) {
          const p = decide(parent, { name, args: {}, tool: tool(name) });
          const c = decide(child, { name, args: {}, tool: tool(name) });
          // a tool the parent may not run, the child may not either …
          if (p.action === "deny") expect(c.action, `${name}: ${c.reason}`).toBe("deny");
          // … and what the parent is asked about, the child is asked about too (approval only gets stricter)
          if (p.action === "ask") expect(c.action, name).not.toBe("allow");
        }
      });

  it("a child's own layer narrows further", () => {
    const parent = resolvePolicy(layers(["global", { profile: "coding" }]));
    const child = childPolicy(parent, [{ name: "capability:explore", layer: { profile: "readonly" } }]);
    expect(decide(parent, { name: "edit", args: {}, tool: tool("edit") }).action).toBe("allow");
    const v = decide(child, { name: "edit", args: {}, tool: tool("edit") });
    expect(v).toMatchObject({ action: "deny", layer: "profile:readonly (capability:explore)" });
  });

  it("governance with session layers: the child's calls get the child's policy", () => {
    const base = resolvePolicy(layers(["global", { deny: ["shell"] }]));
    const gov = makeGovernance(base, {
      root,
      sessionLayers: (sessionId) =>
        sessionId === "child" ? [{ name: "capability:explore", layer: { profile: "readonly" } }] : [],
    });
    const call = (sessionId: string, name: string): GovernedCall => ({
      sessionId,
      turnId: "t",
      callId: "c",
      name,
      args: {},
      tool: tool(name),
      effects: tool(name).effects ?? [],
    });
    expect(gov.decide(call("parent", "write_file")).action).toBe("allow");
    expect(gov.decide(call("child", "write_file")).action).toBe("deny");
    expect(gov.decide(call("child", "shell")).action).toBe("deny");
    expect(gov.decide(call("child", "read_file")).action).toBe("allow");
  });
});

describe("the format", () => {
  it("decodes a complete layer", () => {
    const layer = {
      profile: "coding",
      allow: ["group:fs", "shell", "mcp__github__*"],
      deny: ["group:mcp:untrusted"],
      approval: "risk",
      tools: { shell: { approval: "risk" }, write_file: { approval: "always" } },
      workspace: { denyPatterns: [".env*", "**/*.pem"] },
      limits: { maxOutputBytes: 65536, maxOutputLines: 2000 },
      redaction: { keys: ["DEPLOY_TOKEN"] },
      writes: "live",
      sandbox: { mode: "bwrap", network: false },
      risk: { threshold: "high" },
    };
    const r = decodePolicyLayer(layer);
    expect(Either.isRight(r)).toBe(true);
  });

  it.each([
    [{ alow: ["x"] }, "", '; did you mean "allow"?'],
    [{ tools: { shell: { aproval: "risk" } } }, "tools.shell", 'did you mean "approval"?'],
    [{ workspace: { denyPattern: [] } }, "workspace", 'did you mean "denyPatterns"?'],
    [{ profile: "coder" }, "profile", 'expected "minimal", "readonly", "coding" or "full"'],
    [{ approval: "sometimes" }, "approval", 'expected "never", "always" or "risk"'],
    [{ limits: { maxOutputBytes: -1 } }, "limits.maxOutputBytes", "expected a positive integer"],
    [{ zzzzzz: 1 }, "", 'known keys: "profile", "allow"'],
  ])("%j is rejected at %s: %s", (value, path, message) => {
    const issues = policyLayerIssues(value);
    expect(issues.length).toBeGreaterThan(0);
    const issue = issues.find((i) => i.path.startsWith(path) && i.message.includes(message));
    expect(issue, JSON.stringify(issues)).toBeDefined();
  });

  it("an unknown key with nothing close gets no suggestion", () => {
    expect(policyLayerIssues({ zzzzzz: 1 })[0]?.message).not.toContain("did you mean");
  });

  it("the error names the source", () => {
    const r = decodePolicyLayer({ deny: "shell" }, "policy in /x/config.json");
    expect(Either.isLeft(r) && r.left.message).toContain("policy in /x/config.json.deny");
  });

  it("exports a JSON Schema", () => {
    const schema = JSON.stringify(policyLayerJsonSchema());
    for (const key of [
      "profile",
      "allow",
      "deny",
      "approval",
      "tools",
      "denyPatterns",
      "maxOutputBytes",
      "redaction",
      "sandbox",
    ])
      expect(schema).toContain(`"${key}"`);
  });
});

describe("resolvePolicy", () => {
  it("limits take the smallest, keys the union, writes stub wins, sandbox bwrap and network off win", () => {
    const p = resolvePolicy(
      layers(
        {
          limits: { maxOutputBytes: 1000 },
          redaction: { keys: ["A"] },
          sandbox: { mode: "off", network: true },
        },
        {
          limits: { maxOutputBytes: 500, maxOutputLines: 10 },
          redaction: { keys: ["B", "A"] },
          writes: "stub",
          sandbox: { mode: "bwrap", network: false },
        },
      ),
    );
    expect(p.limits).toEqual({ maxOutputBytes: 500, maxOutputLines: 10 });
    expect(p.redactionKeys).toEqual(["A", "B"]);
    expect(p.writes).toBe("stub");
    expect(p.sandbox).toEqual({ mode: "bwrap", network: false });
  });
});

describe("explain", () => {
  it("names the layers, the verdict, the deciding layer and rule, the effects and the risk", () => {
    const policy = resolvePolicy(
      layers(["global", { profile: "coding" }], ["project", { deny: ["group:mcp"] }]),
    );
    const text = explain(
      policy,
      { name: "shell", args: { command: "rm -rf /" }, tool: tool("shell") },
      {
        assessRisk: () => ({ level: "high", category: "destructive", reasons: ["rm -rf"] }),
      },
    );
    expect(text).toContain("tool: shell");
    expect(text).toContain("effects: exec");
    expect(text).toContain("  global: ");
    expect(text).toContain("  profile:coding (global): ");
    expect(text).toContain("  project: ");
    expect(text).toContain("verdict: ask");
    expect(text).toContain('decided by: profile:coding (global) — tools["group:exec"].approval = "risk"');
    expect(text).toContain("risk: high (destructive) — rm -rf");
  });
});
