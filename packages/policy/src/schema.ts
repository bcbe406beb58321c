// The policy layer format (issue 17): one shape for config.json's `policy` key, a project's
// `.lash/config.json`, an agent spec's `policy:` and a subagent capability. Effect Schema,
// so it decodes with precise errors and exports as JSON Schema for editors.
import { Either, JSONSchema, ParseResult, Schema } from "effect";

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true });

const expected = <A, I>(schema: Schema.Schema<A, I>, what: string, override = true): Schema.Schema<A, I> =>
  schema.annotations({
    message: (issue) => ({
      message: `expected ${what}, got ${show((issue as { actual?: unknown }).actual)}`,
      override,
    }),
  });

function show(v: unknown): string {
  if (v === undefined) return "nothing";
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Tool names, globs (`mcp__github__*`) and groups (`group:fs`). */
const Patterns = expected(
  Schema.Array(expected(Schema.String.pipe(Schema.minLength(1)), "a tool name, glob or group:…")),
  'an array of tool names, globs or groups (["group:fs", "shell", "mcp__github__*"])',
  false,
);

export const PROFILES = ["minimal", "readonly", "coding", "full"] as const;
export type ProfileName = (typeof PROFILES)[number];

/** `never`: run without asking; `always`: ask every time; `risk`: ask when the risk is at or above the threshold. */
export const ApprovalRule = expected(
  Schema.Literal("never", "always", "risk"),
  '"never", "always" or "risk"',
);
export type ApprovalRule = typeof ApprovalRule.Type;

export const RiskLevel = expected(Schema.Literal("low", "medium", "high"), '"low", "medium" or "high"');
export type RiskLevel = typeof RiskLevel.Type;

const PosInt = expected(Schema.Int.pipe(Schema.positive()), "a positive integer");

export const ToolRule = Schema.Struct({
  approval: opt(ApprovalRule),
}).annotations({ description: "Rules for the tools this key matches (a name, a glob or a group:…)." });
export type ToolRule = typeof ToolRule.Type;

/** One policy layer. Every key is optional; an empty object changes nothing. */
export const PolicyLayer = Schema.Struct({
  /** A named base layer: `minimal`, `readonly`, `coding` or `full`. */
  profile: opt(
    expected(Schema.Literal(...PROFILES), '"minimal", "readonly", "coding" or "full"').annotations({
      description: "A named base layer added under this one (minimal | readonly | coding | full).",
    }),
  ),
  /** Tools this layer allows (names, globs, groups); absent or empty: all. */
  allow: opt(
    Patterns.annotations({ description: "Allowed tools (names, globs, group:…); absent or [] = all." }),
  ),
  /** Tools this layer denies; deny always wins, at every layer. */
  deny: opt(Patterns.annotations({ description: "Denied tools (names, globs, group:…); deny always wins." })),
  /** Approval for tools no `tools` entry covers. */
  approval: opt(ApprovalRule),
  /** Per tool: keys are names, globs or groups. */
  tools: opt(
    expected(
      Schema.Record({ key: Schema.String, value: ToolRule }),
      'an object of tool rules ({ "shell": { "approval": "risk" } })',
      false,
    ),
  ),
  workspace: opt(
    Schema.Struct({
      /** Paths (globs, relative to the workspace) the file tools refuse. */
      denyPatterns: opt(
        expected(Schema.Array(Schema.String), 'an array of globs ([".env*", "**/*.pem"])', false).annotations(
          {
            description:
              "Globs of paths the file tools refuse (a pattern without `/` matches the file name anywhere).",
          },
        ),
      ),
    }),
  ),
  limits: opt(
    Schema.Struct({
      /** Tool output kept for the model, in bytes. */
      maxOutputBytes: opt(PosInt),
      /** Tool output kept for the model, in lines. */
      maxOutputLines: opt(PosInt),
    }),
  ),
  redaction: opt(
    Schema.Struct({
      /** Names (environment variables, keys) whose values are redacted. */
      keys: opt(
        expected(
          Schema.Array(Schema.String.pipe(Schema.minLength(1))),
          'an array of names (["DEPLOY_TOKEN"])',
          false,
        ),
      ),
    }),
  ),
  /** `stub`: write and exec tools do not run and return what they would have done (dry run). */
  writes: opt(expected(Schema.Literal("live", "stub"), '"live" or "stub"')),
  sandbox: opt(
    Schema.Struct({
      mode: opt(expected(Schema.Literal("bwrap", "off"), '"bwrap" or "off"')),
      network: opt(expected(Schema.Boolean, "true or false")),
    }),
  ),
  /** `approval: "risk"` asks when the risk evaluator's level is at or above `threshold` (default `medium`). */
  risk: opt(
    Schema.Struct({
      threshold: opt(RiskLevel),
    }),
  ),
  /**
   * The two-step rule (`lash serve`): an approval of a call at or above this risk (a call
   * without a risk counts as high) must come from a principal other than the one who
   * started the run. The strictest (lowest) level any layer sets wins.
   */
  secondApprover: opt(
    RiskLevel.annotations({
      description:
        "lash serve: calls at or above this risk (low | medium | high; unassessed = high) must be approved by a principal other than the one who started the run.",
    }),
  ),
}).annotations({
  identifier: "PolicyLayer",
  title: "lash policy layer",
  description:
    "One layer of lash's tool policy (config `policy`, a project's config, an agent spec, a subagent capability).",
});
export type PolicyLayer = typeof PolicyLayer.Type;

/** The JSON Schema of a policy layer (for editors and `$schema`). */
export function policyLayerJsonSchema(): object {
  return JSONSchema.make(PolicyLayer);
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number;
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return row[b.length] as number;
}

/** The candidate closest to `word` (case-insensitive), when it is close enough to be a typo. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const d = distance(w, c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  if (best === undefined) return undefined;
  return bestD <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/**
 * The message for an "unexpected key" issue of a Schema decoded with `onExcessProperty: "error"`:
 * `unknown key "alow" (known keys: "profile", "allow", …); did you mean "allow"?`.
 */
export function unknownKeyMessage(key: string, schemaMessage: string): string {
  const known = [...schemaMessage.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
  const hint = didYouMean(key, known);
  return `unknown key "${key}" (known keys: ${known.map((k) => `"${k}"`).join(", ")})${hint ? `; did you mean "${hint}"?` : ""}`;
}

export interface PolicyIssue {
  /** `allow[1]`, `tools.shell.approval`, … (empty: the layer itself). */
  readonly path: string;
  readonly message: string;
}

export class PolicyLayerError extends Schema.TaggedError<PolicyLayerError>()("PolicyLayerError", {
  message: Schema.String,
}) {}

const decodeEither = Schema.decodeUnknownEither(PolicyLayer, { onExcessProperty: "error", errors: "all" });

/** The issues of a value that is not a valid policy layer (empty when it is one). */
export function policyLayerIssues(value: unknown): PolicyIssue[] {
  const result = decodeEither(value);
  if (Either.isRight(result)) return [];
  return formatIssues(result.left);
}

function formatIssues(error: ParseResult.ParseError): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  const seen = new Set<string>();
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path
      .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
      .join("");
    const message =
      issue._tag === "Unexpected"
        ? unknownKeyMessage(String(issue.path.at(-1) ?? ""), issue.message)
        : issue._tag === "Missing"
          ? "is required"
          : issue.message;
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message });
  }
  return out;
}

/**
 * Decode a policy layer; unknown keys are errors with a "did you mean" suggestion.
 * `source` names where it came from in the message (`policy in ~/.lash/config.json`).
 */
export function decodePolicyLayer(
  value: unknown,
  source = "policy",
): Either.Either<PolicyLayer, PolicyLayerError> {
  const result = decodeEither(value);
  if (Either.isRight(result)) return Either.right(result.right);
  const lines = formatIssues(result.left).map(
    (i) => `  ${i.path ? `${source}.${i.path}` : source}: ${i.message}`,
  );
  return Either.left(new PolicyLayerError({ message: `invalid ${source}:\n${lines.join("\n")}` }));
}
