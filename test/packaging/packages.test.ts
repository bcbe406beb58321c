// Acceptance 1 of issue 15: lash outside its own repository. Build every library package,
// `pnpm pack` it, install the tarballs into a temp project with plain npm (no workspace
// links, no overrides, no loader), type-check and compile examples/host-promise and
// examples/host-effect with their plain tsconfig, and run both on Node 22 and Node 24
// against the mock wire server: a turn with a custom tool, the session resumed in a
// second process, a fork. One install serves both examples and both Node versions.
//
// It needs the npm registry (for the packages' third-party dependencies) and takes a
// few minutes the first time (npm's cache makes later runs faster).
import { execFile, execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  type MockLlmServer,
  type MockReply,
  type RecordedRequest,
  startMockServer,
} from "@lash/providers/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeBinary, node22, node24 } from "../support/node-versions.ts";
import { buildPackages } from "./build.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const EXAMPLES = ["host-promise", "host-effect"] as const;
const SETUP_TIMEOUT = 20 * 60_000;

const libraryDirs = readdirSync(join(root, "packages"))
  .filter((d) => existsSync(join(root, "packages", d, "package.json")))
  // a private package (the web console, bundled into the CLI) is not published
  .filter((d) => JSON.parse(readFileSync(join(root, "packages", d, "package.json"), "utf8")).private !== true)
  .sort();

const work = mkdtempSync(join(tmpdir(), "lash-packaging-"));
const tarballs = join(work, "tarballs");
const project = join(work, "host");

interface PackedManifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies?: Record<string, string>;
  readonly exports: Record<string, { types: string; import: string }>;
  readonly files: string[];
  readonly sideEffects: unknown;
  readonly engines: { node: string };
}
const packed = new Map<string, { file: string; manifest: PackedManifest; entries: string[] }>();
let server: MockLlmServer;
let nodes: NodeBinary[] = [];

/** Text of an Anthropic Messages content value. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b: { type?: string; text?: string }) => (b.type === "text" ? (b.text ?? "") : ""))
    .join("");
}

/** The model the examples talk to: its answers depend only on the request, so runs can share it. */
function reply(request: RecordedRequest): MockReply {
  const messages =
    (request.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
  const last = messages.at(-1);
  const history = JSON.stringify(messages);
  if (!last) return { text: "no messages" };
  if (JSON.stringify(last.content).includes('"tool_result"')) return { text: "2 + 3 = 5" };
  const text = contentText(last.content);
  if (text.includes("on the fork"))
    return {
      text: `fork sees ${messages.length} messages; earlier question ${history.includes("What did I ask you before?") ? "present" : "missing"}`,
    };
  if (text.includes("What did I ask you before?"))
    return {
      text: history.includes("What is 2 + 3?") ? "You asked: What is 2 + 3?" : "You asked nothing before.",
    };
  if (text.includes("What is 2 + 3?")) return { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] };
  return { text: `unexpected request: ${text}` };
}

beforeAll(async () => {
  // 1. Build every package to dist/ (incremental: quick when it is current).
  await buildPackages();

  // 2. Pack them as they would be published (publishConfig applied, workspace:^ rewritten).
  mkdirSync(tarballs, { recursive: true });
  for (const dir of libraryDirs) {
    const { stdout: out } = await run("pnpm", ["pack", "--pack-destination", tarballs], {
      cwd: join(root, "packages", dir),
    });
    const file = out.trim().split("\n").at(-1)!.trim();
    expect(file.endsWith(".tgz"), `pnpm pack printed ${out}`).toBe(true);
    const entries = (await run("tar", ["tzf", file])).stdout.trim().split("\n");
    const manifest = JSON.parse((await run("tar", ["xzOf", file, "package/package.json"])).stdout);
    packed.set(manifest.name, { file, manifest, entries });
  }

  // 3. One host project: the tarballs plus what the examples need from the registry. Plain npm.
  mkdirSync(project, { recursive: true });
  const dependencies: Record<string, string> = {
    effect: "3.22.4",
    typescript: "5.9.3",
    "@types/node": "24.19.2",
  };
  for (const [name, { file }] of packed) dependencies[name] = `file:${file}`;
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify({ name: "lash-packaging-host", private: true, type: "module", dependencies }, null, 2)}\n`,
  );
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: project,
    env: { ...process.env, npm_config_update_notifier: "false" },
    maxBuffer: 64 * 1024 * 1024,
  });

  // 4. The examples, copied as a user would have them, compiled with their own plain tsconfig.
  for (const example of EXAMPLES) {
    const dest = join(project, example);
    for (const f of ["package.json", "tsconfig.json", "src"])
      cpSync(join(root, "examples", example, f), join(dest, f), { recursive: true });
    await run(process.execPath, [join(project, "node_modules", "typescript", "bin", "tsc"), "-p", dest], {
      cwd: dest,
    }).catch((e: { stdout?: string }) => {
      throw new Error(`tsc -p examples/${example} failed:\n${e.stdout ?? e}`);
    });
  }

  server = await startMockServer({ responder: reply });
  nodes = [node22(), node24()];
}, SETUP_TIMEOUT);

afterAll(async () => {
  await server?.close();
  await rm(work, { recursive: true, force: true });
}, 120_000);

describe("the packed packages", () => {
  it("every library package is packed, publish-shaped", () => {
    expect([...packed.keys()].sort()).toEqual(
      libraryDirs
        .map((d) => JSON.parse(readFileSync(join(root, "packages", d, "package.json"), "utf8")).name)
        .sort(),
    );
    for (const [name, { manifest, entries }] of packed) {
      const text = JSON.stringify(manifest);
      expect(text, name).not.toContain("workspace:");
      expect(text, name).not.toContain("./src/index.ts");
      for (const [dep, range] of Object.entries(manifest.dependencies ?? {}))
        if (dep.startsWith("@lash/")) expect(range, `${name} → ${dep}`).toBe(`^${manifest.version}`);
      expect(manifest.engines.node, name).toBe(">=22.12");
      expect(manifest.exports["."], name).toEqual({
        types: "./dist/index.d.ts",
        import: "./dist/index.js",
        default: "./dist/index.js",
      });
      for (const [sub, target] of Object.entries(manifest.exports)) {
        expect(entries, `${name} ${sub}`).toContain(`package/${target.types.slice(2)}`);
        expect(entries, `${name} ${sub}`).toContain(`package/${target.import.slice(2)}`);
      }
      // no test suites, no build info; sources ship only for the source and declaration maps
      expect(
        entries.filter((e) => /\/test\/|\.test\.|tsbuildinfo/.test(e)),
        name,
      ).toEqual([]);
      expect(
        entries.some((e) => e.endsWith(".d.ts.map")),
        name,
      ).toBe(true);
      expect(
        entries.some((e) => e.startsWith("package/src/")),
        name,
      ).toBe(true);
    }
    expect(packed.get("@lash/providers")!.manifest.exports).toHaveProperty("./testing");
    expect(packed.get("@lash/core")!.manifest.dependencies).toMatchObject({ "better-sqlite3": "13.2.0" });
  });

  it("npm resolved the @lash/* dependencies to the tarballs and installed one better-sqlite3, 13.2.0", () => {
    for (const name of packed.keys()) {
      const installed = JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8"));
      expect(installed.version, name).toBe("0.1.0");
      expect(existsSync(join(project, "node_modules", name, "dist", "index.js")), name).toBe(true);
      // nothing nested: every @lash/* edge was satisfied by the tarball installed at the top
      expect(existsSync(join(project, "node_modules", name, "node_modules", "@lash")), name).toBe(false);
    }
    const versions = execFileSync(
      "find",
      [join(project, "node_modules"), "-path", "*/better-sqlite3/package.json"],
      {
        encoding: "utf8",
      },
    )
      .trim()
      .split("\n")
      .map((p) => JSON.parse(readFileSync(p, "utf8")).version);
    expect(versions).toEqual(["13.2.0"]);
  });
});

interface Line {
  readonly example: string;
  readonly node: string;
  readonly step: string;
  readonly sessionId: string;
  readonly [key: string]: unknown;
}

async function runExample(example: string, node: NodeBinary, db: string, args: string[]): Promise<Line[]> {
  const env = {
    PATH: `${node.binDir}:/usr/bin:/bin`,
    HOME: work,
    LASH_DB: db,
    ANTHROPIC_API_KEY: "packaging-test-key",
    ANTHROPIC_BASE_URL: server.url,
  };
  const dir = join(project, example);
  const { stdout } = await run(node.node, [join(dir, "dist", "main.js"), ...args], { cwd: dir, env }).catch(
    (e: { stdout?: string; stderr?: string }) => {
      throw new Error(
        `${example} ${args.join(" ")} on Node ${node.version} failed:\n${e.stderr}\n${e.stdout}`,
      );
    },
  );
  return stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
}

describe("the examples, installed from the tarballs", () => {
  for (const example of EXAMPLES) {
    for (const major of ["22", "24"]) {
      it(`${example} on Node ${major}: a turn with a tool, resume in a second process, fork`, async () => {
        const node = nodes.find((n) => n.version.startsWith(`${major}.`))!;
        expect(node, `Node ${major}`).toBeDefined();
        const db = join(work, `${example}-node${major}.db`);

        const [turn] = await runExample(example, node, db, ["first"]);
        expect(turn).toMatchObject({
          example,
          node: node.version,
          step: "turn",
          text: "2 + 3 = 5",
          outcome: "finished",
          tools: ['add → [{"type":"text","text":"5"}]'],
        });

        const [resume, fork] = await runExample(example, node, db, ["second", turn!.sessionId]);
        // the second process read the first's session from the SQLite file and sent its history
        expect(resume).toMatchObject({
          node: node.version,
          step: "resume",
          sessionId: turn!.sessionId,
          messagesBefore: 4,
          text: "You asked: What is 2 + 3?",
          outcome: "finished",
        });
        expect(fork).toMatchObject({
          step: "fork",
          parent: turn!.sessionId,
          text: "fork sees 7 messages; earlier question present",
          outcome: "finished",
          forkMessages: 8,
          originalMessages: 6,
        });
        expect(fork!.sessionId).not.toBe(turn!.sessionId);
      });
    }
  }
});
