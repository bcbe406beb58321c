// The current hash route in the browser: as Preact state (re-renders on navigation), and
// navigating to a route.
import { useEffect, useState } from "preact/hooks";
import { href, type Params } from "./router.ts";

/** The path the hash names (`#/runs/r1` → `/runs/r1`; no hash → `/`). */
export function currentPath(): string {
  const hash = location.hash.replace(/^#/, "");
  return hash.startsWith("/") ? hash : "/";
}

/** Go to a route (`navigate("/runs/:id", { id })`). */
export function navigate(pattern: string, params: Params = {}): void {
  location.hash = href(pattern, params).slice(1);
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
