// The `lash` process: how long `lash --version` takes, and how long `lash -p` takes from spawn to its first
// model request (taken at the mock wire server when the request arrives) and to its exit — for three ways of
// starting it:
//   - bundled: the published bin (apps/cli/bin/lash.js → apps/cli/dist, built here first by scripts/bundle.ts),
//     what `npm install -g lash` runs;
//   - pnpm lash: the README's command in the repository (pnpm, then scripts/lash.ts, then the TypeScript source);
//   - source: `node apps/cli/src/main.ts` (Node strips the types; no pnpm).
// Each with Node's module compile cache warm (a private cache directory, filled by the warm-up run) and
// disabled (NODE_DISABLE_COMPILE_CACHE=1, i.e. what a first run pays). CPU time is the child's user + system
// time (bash's `time`, getrusage of the waited-for process tree: pnpm's own node process included).
// Every run is checked: `--version` prints the right version, and each `-p` run reaches the mock server with
// its prompt exactly once and prints the model's answer. Goal (issue 15): `lash --version` ≤ 150 ms wall
// (median) for the bundled CLI.
//
// pnpm exec node bench/perf/cli/run.ts [--json out.json] [--runs N]
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type RecordedRequest, startMockServer } from "../../../packages/providers/src/testing/index.ts";
import { argValue, markdownTable, median, percentile, report } from "../util.ts";

const RUNS = Number(argValue("--runs") ?? 11);
const loadBefore = loadavg()[0] ?? 0;
const GOAL_VERSION_MS = 150;
const root = join(import.meta.dirname, "..", "..", "..");
const cliDir = join(root, "apps", "cli");
const VERSION = (JSON.parse(readFileSync(join(cliDir, "package.json"), "utf8")) as { version: string })
  .version;
const dir = mkdtempSync(join(tmpdir(), "lash-bench-cli-"));
const timesFile = join(dir, "times");
const ANSWER = "bench answer";
const PROMPT = "bench prompt";

// the bundle as it would be published
const bundleLog = execFileSync(process.execPath, [join(cliDir, "scripts", "bundle.ts")], {
  cwd: cliDir,
  encoding: "utf8",
});
process.stdout.write(bundleLog);

let firstRequestAt = 0;
const seen: RecordedRequest[] = [];
const server = await startMockServer({
  responder: (req) => {
    firstRequestAt ||= performance.now();
    seen.push(req);
    return { text: ANSWER, usage: { input: 10, output: 2 } };
  },
});

const baseEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: dir,
  LASH_HOME: join(dir, "home"),
  LASH_MODEL: "openai-compatible/bench",
  OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
  NODE_COMPILE_CACHE: join(dir, "compile-cache"),
};
const noCache: NodeJS.ProcessEnv = { ...baseEnv, NODE_DISABLE_COMPILE_CACHE: "1" };
delete noCache.NODE_COMPILE_CACHE;

interface Contender {
  readonly name: string;
  readonly cmd: readonly string[];
  readonly cwd: string;
}
const contenders: Contender[] = [
  { name: "bundled (bin/lash.js → dist)", cmd: [process.execPath, join(cliDir, "bin", "lash.js")], cwd: dir },
  { name: "pnpm lash", cmd: ["pnpm", "lash"], cwd: root },
  { name: "node apps/cli/src/main.ts", cmd: [process.execPath, join(cliDir, "src", "main.ts")], cwd: dir },
];

interface Timing {
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly firstRequestMs?: number;
}

/** One spawn under bash's `time` (child CPU to the millisecond); checks the run's output. */
function once(cmd: readonly string[], env: NodeJS.ProcessEnv, cwd: string, kind: Kind): Promise<Timing> {
  firstRequestAt = 0;
  seen.length = 0;
  rmSync(timesFile, { force: true });
  const script = 'TIMEFORMAT="%3U %3S %3R"; f="$1"; shift; { time "$@" 2>&3; } 3>&2 2>"$f"';
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script, "bash", timesFile, ...cmd], {
      env,
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const fail = (why: string) =>
        reject(new Error(`${cmd.join(" ")} (${kind}): ${why}\nstdout: ${stdout}\nstderr: ${stderr}`));
      if (code !== 0) return fail(`exited ${code}`);
      const [user, sys, real] = readFileSync(timesFile, "utf8").trim().split(/\s+/).map(Number);
      if (user === undefined || sys === undefined || real === undefined) return fail("no timing");
      if (kind === "floor") return resolve({ cpuMs: (user + sys) * 1000, wallMs: real * 1000 });
      if (kind === "version") {
        if (!stdout.includes(`lash ${VERSION} (node ${process.versions.node})\n`))
          return fail(`--version did not print lash ${VERSION}`);
        if (seen.length !== 0) return fail("--version sent a model request");
        return resolve({ cpuMs: (user + sys) * 1000, wallMs: real * 1000 });
      }
      if (seen.length !== 1) return fail(`expected exactly 1 model request, saw ${seen.length}`);
      if (!JSON.stringify(seen[0]?.body).includes(PROMPT))
        return fail("the request did not carry the prompt");
      if (!stdout.includes(`${ANSWER}\n`)) return fail("the answer was not printed");
      resolve({ cpuMs: (user + sys) * 1000, wallMs: real * 1000, firstRequestMs: firstRequestAt - t0 });
    });
  });
}

type Kind = "floor" | "version" | "print";
const argsOf = (kind: Kind): readonly string[] =>
  kind === "floor" ? [] : kind === "version" ? ["--version"] : ["-p", PROMPT, "--cwd", dir];

async function measure(c: Contender, kind: Kind, env: NodeJS.ProcessEnv): Promise<Timing[]> {
  const cmd = [...c.cmd, ...argsOf(kind)];
  await once(cmd, env, c.cwd, kind); // warm-up: fills the compile cache, creates the database; checked too
  const out: Timing[] = [];
  for (let i = 0; i < RUNS; i++) out.push(await once(cmd, env, c.cwd, kind));
  return out;
}

interface Row {
  readonly contender: string;
  readonly what: string;
  readonly compileCache: "warm" | "off";
  readonly goal?: string;
  readonly met?: boolean;
  readonly cpuMs: number;
  readonly firstRequestMs?: number;
  readonly wallMs: number;
  readonly wallP90Ms: number;
  readonly runs: number;
}
const rows: Row[] = [];
const fmt = (x: number | undefined) => (x === undefined ? "—" : x.toFixed(0));

try {
  // floor: a bare Node start
  {
    const xs = await measure(
      { name: "node -e 0", cmd: [process.execPath, "-e", "0"], cwd: dir },
      "floor",
      baseEnv,
    );
    rows.push({
      contender: "node -e 0 (floor)",
      what: "exit",
      compileCache: "warm",
      cpuMs: median(xs.map((t) => t.cpuMs)),
      wallMs: median(xs.map((t) => t.wallMs)),
      wallP90Ms: percentile(
        xs.map((t) => t.wallMs),
        90,
      ),
      runs: xs.length,
    });
  }
  for (const c of contenders)
    for (const kind of ["version", "print"] as const)
      for (const cache of ["warm", "off"] as const) {
        const xs = await measure(c, kind, cache === "warm" ? baseEnv : noCache);
        const wall = median(xs.map((t) => t.wallMs));
        const isGoal = kind === "version" && c === contenders[0];
        const row: Row = {
          contender: c.name,
          what: kind === "version" ? "lash --version" : "lash -p",
          compileCache: cache,
          ...(kind === "version"
            ? { goal: `≤ ${GOAL_VERSION_MS} ms wall`, met: wall <= GOAL_VERSION_MS }
            : {}),
          cpuMs: median(xs.map((t) => t.cpuMs)),
          ...(kind === "print"
            ? { firstRequestMs: median(xs.map((t) => t.firstRequestMs ?? Number.NaN)) }
            : {}),
          wallMs: wall,
          wallP90Ms: percentile(
            xs.map((t) => t.wallMs),
            90,
          ),
          runs: xs.length,
        };
        rows.push(row);
        process.stdout.write(
          `${c.name} · ${row.what} · cache ${cache}: cpu ${fmt(row.cpuMs)} ms, wall ${fmt(wall)} ms` +
            `${row.firstRequestMs !== undefined ? `, first request ${fmt(row.firstRequestMs)} ms` : ""}` +
            `${isGoal ? (row.met ? " (goal met)" : " (GOAL NOT MET)") : ""}\n`,
        );
      }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

const bundled = rows.find(
  (r) => r.contender === contenders[0]?.name && r.what === "lash --version" && r.compileCache === "warm",
);
const loadAfter = loadavg()[0] ?? 0;
report({
  name: "cli",
  title:
    "CLI start-up: `lash --version` and `lash -p` to the first model request — bundled vs `pnpm lash` vs source",
  table: markdownTable(
    [
      "how lash is started",
      "what",
      "compile cache",
      "goal",
      "met",
      "CPU ms",
      "wall ms to first request",
      "wall ms to exit",
      "p90 wall ms to exit",
      "runs",
    ],
    rows.map((r) => [
      r.contender,
      r.what,
      r.compileCache,
      r.goal ?? "— (none set)",
      r.met === undefined ? "—" : r.met ? "yes" : "no",
      fmt(r.cpuMs),
      fmt(r.firstRequestMs),
      fmt(r.wallMs),
      fmt(r.wallP90Ms),
      r.runs,
    ]),
  ),
  results: {
    goalVersionMs: GOAL_VERSION_MS,
    goalMet: bundled?.met ?? false,
    loadAverage: [loadBefore, loadAfter],
    rows,
  },
  goals: `Goal (issue 15): \`lash --version\` ≤ ${GOAL_VERSION_MS} ms wall (median) for the bundled CLI — ${bundled ? `${bundled.wallMs.toFixed(0)} ms, ${bundled.met ? "met" : "missed"}` : "not measured"}; the other \`--version\` rows are held to the same figure for comparison. No goal is set for \`lash -p\`: reported.`,
  notes: [
    `Medians over ${RUNS} runs after one checked warm-up run, spawned one at a time with the benchmark's Node (${process.versions.node}). CPU ms: user + system time of the whole process tree (for \`pnpm lash\`, pnpm's own Node process too), to exit. Wall to first request: spawn → the request's arrival at the mock wire server (includes ~2 ms of the bash wrapper that measures CPU); wall to exit: bash's own \`time\`.`,
    "The goal (issue 15) is for the bundled CLI, the one `npm install -g` installs; the other rows show what the same command costs when lash runs from the repository. `lash -p` opens `$LASH_HOME/lash.db` (created by the warm-up run) and answers from the mock server (no tool calls).",
    "Compile cache 'off' is NODE_DISABLE_COMPILE_CACHE=1: what a first run pays before Node has cached the compiled code.",
    `1-minute load average ${loadBefore.toFixed(1)} at the start, ${loadAfter.toFixed(1)} at the end: wall times inflate with load, CPU times much less.`,
  ],
});
