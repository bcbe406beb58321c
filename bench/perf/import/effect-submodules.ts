// Codemod (issue 16): rewrite imports from the `effect` barrel into imports of its submodules,
// so that importing @lash/core loads only the Effect modules it uses instead of all ~180 public
// ones (bench/perf/import's reference rows measure the difference).
//
//   import { Effect, type Scope, Schema as S } from "effect";
// becomes
//   import * as Effect from "effect/Effect";
//   import type * as Scope from "effect/Scope";
//   import * as S from "effect/Schema";
//
// Idempotent; re-run it after a merge brings new barrel imports:
//   node bench/perf/import/effect-submodules.ts packages/core/src packages/sansio/src packages/providers/src
// Only namespace names (capitalised, each a module of `effect`) are rewritten; a file that imports
// anything else from the barrel is reported and left as it is.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const BARREL = /^import\s+(type\s+)?\{([^}]*)\}\s+from\s+"effect";[ \t]*$/gm;

function rewrite(file: string): "changed" | "unchanged" | string {
  const text = readFileSync(file, "utf8");
  let problem: string | undefined;
  const out = text.replace(BARREL, (whole, typeOnly: string | undefined, names: string) => {
    const lines: string[] = [];
    for (const raw of names.split(",")) {
      const spec = raw.trim();
      if (!spec) continue;
      const m = /^(type\s+)?([A-Za-z]+)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(spec);
      if (!m || !/^[A-Z]/.test(m[2]!)) {
        problem = `${file}: cannot rewrite "${spec}" (not a module of effect)`;
        return whole;
      }
      const isType = Boolean(typeOnly || m[1]);
      lines.push(`import ${isType ? "type " : ""}* as ${m[3] ?? m[2]} from "effect/${m[2]}";`);
    }
    return lines.join("\n");
  });
  if (problem) return problem;
  if (out === text) return "unchanged";
  writeFileSync(file, out);
  return "changed";
}

function walk(dir: string, files: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, files);
    else if (path.endsWith(".ts") && !path.endsWith(".d.ts")) files.push(path);
  }
  return files;
}

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  process.stderr.write(
    "usage: node bench/perf/import/effect-submodules.ts <dir>... (e.g. packages/core/src)\n",
  );
  process.exit(2);
}
let changed = 0;
let failed = 0;
for (const file of dirs.flatMap((d) => walk(d))) {
  const r = rewrite(file);
  if (r === "changed") changed++;
  else if (r !== "unchanged") {
    failed++;
    process.stderr.write(`${r}\n`);
  }
}
process.stdout.write(`${changed} file(s) rewritten${failed ? `, ${failed} left (see above)` : ""}\n`);
process.exit(failed ? 1 : 0);
