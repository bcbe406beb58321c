// `--rlm-var NAME=JSON|@FILE` and `--rlm-vars-file PATH`: read-only host values projected into
// every Lashlang cell of an RLM session (reference §2.8). Values are JSON, as in the reference:
// `NAME=JSON` parses its value as JSON, `--rlm-vars-file` holds one JSON object of them; the
// lash extension `NAME=@FILE` binds the file's text as a string. `--rlm-var` wins over the file.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { usageError } from "./errors.ts";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkName(name: string, flag: string): void {
  if (name === "")
    throw usageError(`${flag} needs a variable name before "=" (e.g. --rlm-var input='{"path":"src"}')`);
  if (name === "history")
    throw usageError(
      `${flag}: \`history\` is reserved (the RLM history is always bound); choose another name`,
    );
  if (!NAME.test(name))
    throw usageError(
      `${flag}: \`${name}\` is not a Lashlang identifier; use letters, digits and _ (not first a digit)`,
    );
}

function readText(path: string, flag: string, cwd: string): string {
  try {
    return readFileSync(resolve(cwd, path), "utf8");
  } catch (e) {
    throw usageError(`${flag}: cannot read ${path}: ${(e as Error).message}`);
  }
}

/** The projected bindings the flags name (an empty object when none), or a usage error naming the problem and the fix. */
export function resolveRlmVars(
  vars: readonly string[] | undefined,
  file: string | undefined,
  cwd: string,
): { [name: string]: unknown } {
  const out: { [name: string]: unknown } = {};
  if (file !== undefined) {
    const text = readText(file, `--rlm-vars-file ${file}`, cwd);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw usageError(
        `--rlm-vars-file ${file}: invalid JSON (${(e as Error).message}); the file must hold one JSON object of name: value`,
      );
    }
    if (value === null || typeof value !== "object" || Array.isArray(value))
      throw usageError(`--rlm-vars-file ${file} must contain a top-level JSON object (name: value)`);
    for (const [name, v] of Object.entries(value)) {
      checkName(name, `--rlm-vars-file ${file}`);
      out[name] = v;
    }
  }
  for (const raw of vars ?? []) {
    const eq = raw.indexOf("=");
    if (eq < 0)
      throw usageError(
        `invalid --rlm-var value \`${raw}\`: expected NAME=JSON or NAME=@FILE (e.g. --rlm-var limit=10)`,
      );
    const name = raw.slice(0, eq).trim();
    checkName(name, "--rlm-var");
    const value = raw.slice(eq + 1);
    if (value.startsWith("@")) {
      out[name] = readText(value.slice(1), `--rlm-var ${name}=@…`, cwd);
      continue;
    }
    try {
      out[name] = JSON.parse(value.trim());
    } catch (e) {
      throw usageError(
        `invalid JSON for --rlm-var ${name}=...: ${(e as Error).message}; quote a string as JSON (--rlm-var ${name}='"text"') or read a file with ${name}=@path`,
      );
    }
  }
  return out;
}
