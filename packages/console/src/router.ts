// A hash router: `#/agents/hello` → the route whose pattern is `/agents/:name`, with
// `{ name: "hello" }`. Hash routes keep every console URL on the one page the daemon serves at
// `/`, so a reload or a shared link never asks the daemon for a path it does not have.
// Plain functions here; the browser side (the current hash, navigation) is in use-path.ts.
export type Params = Readonly<Record<string, string>>;

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
