/**
 * Tool names every provider accepts: `^[a-zA-Z0-9_-]{1,64}$` (OpenAI, Anthropic, Gemini and the
 * Chat Completions servers all fit inside this). MCP tools become `mcp__<server>__<tool>`.
 */
export const MAX_TOOL_NAME = 64;
const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;

/** Replace every character outside `[a-zA-Z0-9_-]` with `_`. */
export function sanitizeNamePart(part: string): string {
  const s = part.replace(/[^a-zA-Z0-9_-]/g, "_");
  return s === "" ? "_" : s;
}

export function isValidToolName(name: string): boolean {
  return NAME_RE.test(name);
}

/** `mcp__<server>__<tool>`, sanitized and cut to 64 characters (collisions are not resolved here). */
export function baseToolName(server: string, tool: string): string {
  return `mcp__${sanitizeNamePart(server)}__${sanitizeNamePart(tool)}`.slice(0, MAX_TOOL_NAME);
}

export interface NameRequest {
  readonly server: string;
  readonly tool: string;
}

/**
 * Names for a set of (server, tool) pairs, unique and valid. Deterministic (independent of the
 * input order): pairs are ordered by server, then names that needed no sanitizing first, then tool
 * (code-unit order); the first of a colliding group keeps the base name and the
 * others get `_2`, `_3`, … (the base is shortened to keep 64 characters). Names already taken by
 * other plugins (`reserved`) count as collisions too. The result is keyed `server\u0000tool`.
 */
export function assignToolNames(
  requests: readonly NameRequest[],
  reserved: Iterable<string> = [],
): Map<string, string> {
  const taken = new Set(reserved);
  const out = new Map<string, string>();
  // Names that need no sanitizing win over sanitized look-alikes (`a_b` keeps its name, `a.b` → `a_b_2`).
  const clean = (r: NameRequest) =>
    sanitizeNamePart(r.tool) === r.tool && baseToolName(r.server, r.tool).endsWith(`__${r.tool}`) ? 0 : 1;
  const sorted = [...requests].sort(
    (a, b) => cmp(a.server, b.server) || clean(a) - clean(b) || cmp(a.tool, b.tool),
  );
  for (const r of sorted) {
    const key = nameKey(r.server, r.tool);
    if (out.has(key)) continue;
    const base = baseToolName(r.server, r.tool);
    let name = base;
    for (let n = 2; taken.has(name); n++) {
      const suffix = `_${n}`;
      name = `${base.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
    }
    taken.add(name);
    out.set(key, name);
  }
  return out;
}

export const nameKey = (server: string, tool: string): string => `${server}\u0000${tool}`;

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A Lashlang identifier (`[A-Za-z_][A-Za-z0-9_]*`) for a server or tool name: `get-sum` → `get_sum`. */
export function lashlangIdent(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_]/g, "_");
  return s === "" ? "_" : /^[0-9]/.test(s) ? `_${s}` : s;
}
