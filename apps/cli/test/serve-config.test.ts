// The `serve` config key: per-principal policy layers for `lash serve`, decoded with the
// policy schema of @lash/policy, with the same did-you-mean errors as the rest of the config.
import { describe, expect, it } from "vitest";
import { validateConfig } from "../src/config.ts";
import { CliError } from "../src/errors.ts";
import { serveStateFile } from "../src/paths.ts";

const usage = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    return (e as Error).message;
  }
  throw new Error("expected a usage error");
};

describe("serve.principals", () => {
  it("decodes a policy layer per principal", () => {
    const c = validateConfig(
      { serve: { principals: { alice: { policy: { deny: ["shell"], secondApprover: "high" } }, bob: {} } } },
      "c.json",
    );
    expect(c.serve?.principals?.alice?.policy).toEqual({ deny: ["shell"], secondApprover: "high" });
    expect(c.serve?.principals?.bob).toEqual({});
  });

  it.each([
    [{ serve: { principal: {} } }, 'serve.principal: unknown key "principal"', 'did you mean "principals"?'],
    [{ serve: { principals: { alice: { polcy: {} } } } }, "serve.principals.alice", 'did you mean "policy"?'],
    [
      { serve: { principals: { alice: { policy: { alow: ["x"] } } } } },
      "alice.policy",
      'did you mean "allow"?',
    ],
    [
      { serve: { principals: { alice: { policy: { secondApprover: "always" } } } } },
      "alice.policy.secondApprover",
      'expected "low", "medium" or "high", got "always"',
    ],
    [{ serve: { principals: [] } }, "serve.principals", "expected an object of principals"],
  ])("%j is refused at %s: %s", (value, where, what) => {
    const message = usage(() => validateConfig(value, "c.json"));
    expect(message).toContain("invalid config in c.json");
    expect(message).toContain(where);
    expect(message).toContain(what);
  });

  it("a token in config is refused, naming the command that makes one", () => {
    const message = usage(() =>
      validateConfig({ serve: { principals: { alice: { token: "x" } } } }, "c.json"),
    );
    expect(message).toContain('unknown key "token": bearer tokens are never in config');
    expect(message).toContain("lash serve token create --principal <name>");
  });

  it("the daemon's state file defaults to $LASH_HOME/serve.db", () => {
    expect(serveStateFile("/h/.lash")).toBe("/h/.lash/serve.db");
  });
});
