// A hash router: `#/agents/hello` → the route whose pattern is `/agents/:name`, with
// `{ name: "hello" }`. Hash routes keep every console URL on the one page the daemon serves at
// `/`, so a reload or a shared link never asks the daemon for a path it does not have.
import { useEffect, useState } from "preact/hooks";

export type Params = Readonly<Record<string, string>>;

export function currentPath(): string {
  const hash = location.hash.replace(/^#/, "");
  return hash.startsWith("/") ? hash : "/";
}

/** The path of the current hash, re-rendering on navigation. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    addEventListener("hashchange", update);
    return () => removeEventListener("hashchange", update);
  }, []);
  return path;
}

/** `match("/runs/:id", "/runs/r1")` → `{ id: "r1" }`; undefined when it does not match. */
export function match(pattern: string, path: string): Params | undefined {
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("?", 1)[0]!.split("/").filter(Boolean);
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w.startsWith(":")) params[w.slice(1)] = decodeURIComponent(got[i]!);
    else if (w !== got[i]) return undefined;
  }
  return params;
}

/** `href("/runs/:id", { id })` → `#/runs/<id>`. */
export function href(pattern: string, params: Params = {}): string {
  return `#${pattern.replace(/:(\w+)/g, (_m, k: string) => encodeURIComponent(params[k] ?? ""))}`;
}

export function navigate(pattern: string, params: Params = {}): void {
  location.hash = href(pattern, params).slice(1);
}
