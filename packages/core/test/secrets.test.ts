import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { Deferred, Effect, Layer, Stream } from "effect";
import {
  envSecrets,
  IdGenerator,
  isSecretEnvName,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  makeRedactor,
  outputBudgetPlugin,
  type Plugin,
  SqliteStore,
  scrubEnv,
  type ToolDefinition,
  ToolFailure,
  type TurnActivity,
} from "../src/index.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

const OPENAI = "sk-proj-test0123456789abcdefXYZ";
const CONFIGURED = "correct-horse-battery-staple";

describe("scrubEnv", () => {
  it("removes credentials by name and by value shape, keeps the rest, passes explicit names", () => {
    const env = {
      PATH: "/usr/bin",
      HOME: "/home/me",
      LANG: "C.UTF-8",
      TERM: "xterm",
      SSH_AUTH_SOCK: "/tmp/agent.sock",
      TOKENIZERS_PARALLELISM: "false",
      ANTHROPIC_API_KEY: "a",
      OPENAI_API_KEY: "b",
      OPENAI_COMPATIBLE_API_KEY: "c",
      GEMINI_API_KEY: "d",
      GOOGLE_API_KEY: "e",
      GITHUB_TOKEN: "f",
      NPM_TOKEN: "g",
      AWS_SECRET_ACCESS_KEY: "h",
      AWS_ACCESS_KEY_ID: "i",
      PGPASSWORD: "j",
      DB_PASSWORD: "k",
      CLIENT_SECRET: "l",
      STRIPE_KEY: "m",
      GOOGLE_APPLICATION_CREDENTIALS: "/k.json",
      MY_LLM: "sk-ant-api03-abcdefghijklmnopqrstuv",
      HOLDS_IT: "z",
    };
    const { env: out, removed } = scrubEnv(env, { secretNames: ["HOLDS_IT"], pass: ["NPM_TOKEN"] });
    expect(Object.keys(out).sort()).toEqual(
      ["HOME", "LANG", "NPM_TOKEN", "PATH", "SSH_AUTH_SOCK", "TERM", "TOKENIZERS_PARALLELISM"].sort(),
    );
    expect(removed).toContain("OPENAI_API_KEY");
    expect(removed).toContain("MY_LLM");
    expect(removed).toContain("HOLDS_IT");
    expect(isSecretEnvName("LASH_HOME")).toBe(false);
    expect(isSecretEnvName("OPENAI_BASE_URL")).toBe(false);
  });

  it("pass never brings back one of the host's credential names", () => {
    const env = { ANTHROPIC_API_KEY: "a", NPM_TOKEN: "g", PATH: "/usr/bin" };
    const { env: out, removed } = scrubEnv(env, {
      secretNames: ["ANTHROPIC_API_KEY"],
      pass: ["ANTHROPIC_API_KEY", "NPM_TOKEN"],
    });
    expect(out).toEqual({ NPM_TOKEN: "g", PATH: "/usr/bin" });
    expect(removed).toEqual(["ANTHROPIC_API_KEY"]);
  });

  it("envSecrets lists secret-looking values of at least 8 characters", () => {
    const found = envSecrets({ OPENAI_API_KEY: OPENAI, SHORT_TOKEN: "abc", PATH: "/usr/bin:/bin:/sbin" });
    expect(found).toEqual([{ name: "OPENAI_API_KEY", value: OPENAI }]);
  });
});

describe("makeRedactor", () => {
  it("replaces every occurrence by name, longest value first, in text and deep values (keys too)", () => {
    const r = makeRedactor([
      { name: "OPENAI_API_KEY", value: OPENAI },
      { name: "PREFIX", value: "sk-proj-test0123" },
      { name: "redaction.keys", value: CONFIGURED },
      { name: "TINY", value: "hunter2" },
    ]);
    expect(r.size).toBe(3); // "hunter2" is shorter than 8: never redacted
    expect(r.text(`a ${OPENAI} b ${OPENAI} c hunter2`)).toBe(
      "a [REDACTED:OPENAI_API_KEY] b [REDACTED:OPENAI_API_KEY] c hunter2",
    );
    expect(r.text("x sk-proj-test0123 y")).toBe("x [REDACTED:PREFIX] y");
    const deep = r.deep({ list: [`pw=${CONFIGURED}`, 3, null], [CONFIGURED]: true, nested: { ok: "fine" } });
    expect(deep).toEqual({
      list: ["pw=[REDACTED:redaction.keys]", 3, null],
      "[REDACTED:redaction.keys]": true,
      nested: { ok: "fine" },
    });
    expect(makeRedactor([]).text(OPENAI)).toBe(OPENAI);
  });
});

const leaky: ToolDefinition = {
  name: "leaky",
  description: "prints secrets",
  inputSchema: { type: "object" },
  execute: (_args, ctx) =>
    Effect.sync(() => {
      ctx.progress({ type: "output", text: `OPENAI_API_KEY=${OPENAI}\n` });
      return {
        content: [{ type: "text", text: `env: OPENAI_API_KEY=${OPENAI}\nfile: ${CONFIGURED}` }],
        value: { stdout: OPENAI },
        details: { stdout: `OPENAI_API_KEY=${OPENAI}` },
      };
    }),
};
const failing: ToolDefinition = {
  name: "failing",
  description: "fails with a secret in its message",
  inputSchema: { type: "object" },
  execute: () =>
    Effect.fail(new ToolFailure({ class: "execution", message: `auth failed for ${CONFIGURED}` })),
};
const tools: Plugin = { name: "test-tools", tools: [leaky, failing] };

describe("makeRedactor keys (policy redaction.keys)", () => {
  const r = makeRedactor([], { keys: ["DEPLOY_TOKEN", "ship_code"] });
  it.each([
    ["DEPLOY_TOKEN=abc", "DEPLOY_TOKEN=[REDACTED:DEPLOY_TOKEN]"],
    ['export DEPLOY_TOKEN="two words"', 'export DEPLOY_TOKEN="[REDACTED:DEPLOY_TOKEN]"'],
    ["deploy_token = 'x1'", "deploy_token = '[REDACTED:deploy_token]'"],
    ['{"ship_code": "S-1", "name": "kept"}', '{"ship_code": "[REDACTED:ship_code]", "name": "kept"}'],
    ['{"SHIP_CODE":"a\\"b"}', '{"SHIP_CODE":"[REDACTED:SHIP_CODE]"}'],
    // a longer name that ends in a key is not that key; an empty value stays empty
    ["MY_DEPLOY_TOKEN=keep", "MY_DEPLOY_TOKEN=keep"],
    ["DEPLOY_TOKEN=\nnext", "DEPLOY_TOKEN=\nnext"],
    // ini/toml style: spaces around `=`
    ["deploy_token = v", "deploy_token = [REDACTED:deploy_token]"],
    ['"ship_code": ""', '"ship_code": ""'],
    ["nothing here", "nothing here"],
  ])("%s → %s", (input, output) => {
    expect(r.text(input)).toBe(output);
  });
  it("values of keys in objects are redacted by deep(); keys alone give a redactor of size 1", () => {
    expect(r.deep({ ship_code: "v", other: "DEPLOY_TOKEN=x", n: 1 })).toEqual({
      ship_code: "[REDACTED:ship_code]",
      other: "DEPLOY_TOKEN=[REDACTED:DEPLOY_TOKEN]",
      n: 1,
    });
    expect(r.size).toBe(1);
    expect(makeRedactor([]).size).toBe(0);
  });
  it("known values and keys together", () => {
    const both = makeRedactor([{ name: "DEPLOY_TOKEN", value: "FAKE-value-123456" }], {
      keys: ["DEPLOY_TOKEN"],
    });
    expect(both.text("DEPLOY_TOKEN=FAKE-value-123456 and FAKE-value-123456")).toBe(
      "DEPLOY_TOKEN=[REDACTED:DEPLOY_TOKEN] and [REDACTED:DEPLOY_TOKEN]",
    );
  });
});

describe("redaction in the dispatch", () => {
  it.live(
    "no secret value reaches the model, the activity stream or the SQLite file (graph and journal)",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "lash-secrets-"));
      const filename = join(dir, "lash.db");
      const provider = scriptedProvider([
        callTools({ id: "a", name: "leaky", args: {} }, { id: "b", name: "failing", args: {} }),
        say("done"),
      ]);
      const redactor = makeRedactor([
        { name: "OPENAI_API_KEY", value: OPENAI },
        { name: "redaction.keys", value: CONFIGURED },
      ]);
      const layer = LashRuntime.layer({
        plugins: [tools, outputBudgetPlugin()],
        dispatch: { redactor },
      }).pipe(
        Layer.provide(
          Layer.mergeAll(
            SqliteStore.layer({ filename }),
            LlmProviders.single(provider),
            IdGenerator.seeded(),
            ModelCatalog.Empty,
          ),
        ),
      );
      const events: TurnActivity[] = [];
      return Effect.gen(function* () {
        const rt = yield* LashRuntime;
        const s = yield* rt.createSession({ model: "m" });
        const r = yield* rt.turn(s.id, { text: "print the secrets" }, { onEvent: (e) => events.push(e) });
        expect(r.outcome.type).toBe("finished");
        const view = JSON.stringify(yield* rt.readView(s.id));
        expect(view).toContain("[REDACTED:OPENAI_API_KEY]");
        expect(view).toContain("[REDACTED:redaction.keys]");
        const sent = JSON.stringify(provider.requests);
        const streamed = JSON.stringify(events);
        expect(streamed).toContain("toolProgress");
        for (const text of [view, sent, streamed]) {
          expect(text).not.toContain(OPENAI);
          expect(text).not.toContain(CONFIGURED);
        }
      }).pipe(
        Effect.provide(layer),
        Effect.scoped,
        Effect.andThen(
          Effect.sync(() => {
            // every file SQLite wrote (database, WAL, shared memory), byte for byte
            for (const f of readdirSync(dir)) {
              const bytes = readFileSync(join(dir, f));
              expect(bytes.includes(OPENAI), f).toBe(false);
              expect(bytes.includes(CONFIGURED), f).toBe(false);
            }
          }),
        ),
        Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))),
      );
    },
  );

  it.live("a tool call cut off by a cancel reports how long it ran, not 0 ms", () => {
    const started = Deferred.unsafeMake<void>(undefined as never);
    const slow: ToolDefinition = {
      name: "slow",
      description: "slow",
      inputSchema: { type: "object" },
      execute: () => Deferred.succeed(started, undefined).pipe(Effect.zipRight(Effect.never)),
    };
    const provider = scriptedProvider([callTools({ id: "s", name: "slow", args: {} }), say("never")]);
    const events: TurnActivity[] = [];
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          const handle = yield* rt.startTurn(s.id, { text: "go" });
          yield* Effect.fork(Stream.runForEach(handle.events, (e) => Effect.sync(() => events.push(e))));
          yield* Deferred.await(started);
          yield* handle.cancel;
          const r = yield* handle.result;
          expect(r.outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
          const done = events.find((e) => e.type === "toolCompleted");
          // the cancel grace (100 ms by default) alone passed between the start and the cut
          expect(done).toMatchObject({ name: "slow", isError: true });
          expect((done as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(100);
        }),
      { plugins: [{ name: "t", tools: [slow] }], dispatch: { cancelGraceMs: 100 } },
    );
  });
});
