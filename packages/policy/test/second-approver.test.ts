// The two-step rule's format and helpers (lash serve reads them): `secondApprover` decodes
// as a risk level, the strictest layer wins, a call without a risk counts as high.
import {
  decodePolicyLayer,
  explain,
  type NamedLayer,
  needsSecondApprover,
  policyLayerIssues,
  resolvePolicy,
  secondApproverThreshold,
} from "@lash/policy";
import { Either } from "effect";
import { describe, expect, it } from "vitest";

const named = (...layers: object[]): NamedLayer[] =>
  layers.map((layer, i) => ({ name: `l${i}`, layer: layer as NamedLayer["layer"] }));

describe("secondApprover", () => {
  it("decodes a risk level and rejects anything else, naming the choices", () => {
    expect(Either.isRight(decodePolicyLayer({ secondApprover: "medium" }))).toBe(true);
    const issues = policyLayerIssues({ secondApprover: "always" });
    expect(issues).toEqual([
      { path: "secondApprover", message: 'expected "low", "medium" or "high", got "always"' },
    ]);
    expect(policyLayerIssues({ secondAprover: "high" })[0]?.message).toContain(
      'did you mean "secondApprover"?',
    );
  });

  it("the strictest (lowest) level of all layers wins; none set = no rule", () => {
    expect(secondApproverThreshold(named({}, { approval: "always" }))).toBeUndefined();
    expect(secondApproverThreshold(named({ secondApprover: "high" }, {}, { secondApprover: "medium" }))).toBe(
      "medium",
    );
    expect(secondApproverThreshold(named({ secondApprover: "low" }, { secondApprover: "high" }))).toBe("low");
    expect(
      resolvePolicy(named({ secondApprover: "high" }, { secondApprover: "medium" })).secondApprover,
    ).toBe("medium");
    expect(resolvePolicy(named({ approval: "always" })).secondApprover).toBeUndefined();
  });

  it.each([
    [undefined, "high", false],
    ["high", "high", true],
    ["high", "medium", false],
    ["high", undefined, true],
    ["medium", "low", false],
    ["medium", "medium", true],
    ["medium", "high", true],
    ["low", "low", true],
  ] as const)("threshold %s, call risk %s → second principal needed: %s", (threshold, risk, needed) => {
    expect(needsSecondApprover(threshold, risk)).toBe(needed);
  });

  it("explain says whether the rule applies to an asked call", () => {
    const policy = resolvePolicy(named({ approval: "always", secondApprover: "high" }));
    expect(explain(policy, { name: "shell", args: { command: "ls" } })).toContain(
      "two-step rule: applies (secondApprover high",
    );
    expect(explain(resolvePolicy(named({ approval: "always" })), { name: "shell" })).not.toContain(
      "two-step",
    );
  });
});
