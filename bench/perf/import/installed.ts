// The published form of @lash/* packages, laid out as `npm install` would: each package's
// built `dist/` (tsc -b, the files its tarball ships) under <dir>/node_modules/@lash/<name>
// with its package.json's publishConfig applied (exports → dist/*.js), and every
// third-party dependency linked flat beside it (hoisted, as npm does). A program run in
// <dir> then imports what a user's `import("@lash/core")` loads, not the workspace's
// TypeScript sources.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  publishConfig?: Record<string, unknown>;
  [key: string]: unknown;
}

const readJson = (file: string): PackageJson => JSON.parse(readFileSync(file, "utf8")) as PackageJson;

/** Builds the named workspace packages (and what they reference), then lays them out in `dir`. */
export function installBuilt(root: string, dir: string, names: readonly string[]): void {
  const packageDir = (name: string) => join(root, "packages", name.replace(/^@lash\//, ""));
  // tsc -b follows the project references: sansio and lashlang are built with core.
  execFileSync(
    process.execPath,
    [
      join(root, "node_modules", "typescript", "bin", "tsc"),
      "-b",
      ...names.map((n) => join(packageDir(n), "tsconfig.build.json")),
    ],
    { cwd: root, stdio: "inherit" },
  );
  const modules = join(dir, "node_modules");
  const done = new Set<string>();
  const install = (name: string): void => {
    if (done.has(name)) return;
    done.add(name);
    const src = packageDir(name);
    const pkg = readJson(join(src, "package.json"));
    const target = join(modules, name);
    mkdirSync(target, { recursive: true });
    if (!existsSync(join(src, "dist", "index.js")))
      throw new Error(`${name} has no dist/index.js after the build: run \`pnpm build\` and see its errors`);
    cpSync(join(src, "dist"), join(target, "dist"), { recursive: true });
    const { publishConfig, devDependencies: _dev, scripts: _scripts, ...rest } = pkg;
    writeFileSync(join(target, "package.json"), JSON.stringify({ ...rest, ...publishConfig }, null, 2));
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      if (dep.startsWith("@lash/")) {
        install(dep);
        continue;
      }
      const link = join(modules, dep);
      if (existsSync(link)) continue;
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(realpathSync(join(src, "node_modules", dep)), link, "dir");
    }
  };
  for (const name of names) install(name);
}
