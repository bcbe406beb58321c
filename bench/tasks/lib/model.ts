// `--model`: `mock:<script>` (the suite's scripted model on the mock wire server,
// offline) or `provider/model` (a real provider through @lash/providers; keys
// from the environment).

import { createProvider, type ProviderHandle } from "@lash/providers";
import {
  type MockLlmServer,
  type MockReply,
  type RecordedRequest,
  startMockServer,
} from "@lash/providers/testing";
import type { ModelInfo } from "@lash/sansio";
import type { MockScript, Task } from "./types.ts";
import { chatMessages, messageText } from "./util.ts";

export interface ResolvedModels {
  readonly model: string;
  readonly judgeModel: string;
  readonly provider: (model: string) => ProviderHandle;
  readonly catalog: readonly ModelInfo[];
  /** The mock server when a mock model is used (started here unless one was given). */
  readonly server?: MockLlmServer;
  close(): Promise<void>;
}

const normalize = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, " ")
    .trim();

const JUDGE =
  /(?:Correct Answer|Rubric|Reference answer|Explanation):\s*([\s\S]*?)\n\n(?:Model Response|Model response):\s*([\s\S]*)\n\n[^\n]*Answer yes or no only\.?\s*$/;

/**
 * The offline judge: "yes" when the model response contains the reference
 * answer (normalized), or, for an unanswerable question, when it declines.
 * Real runs use a real judge model with the official prompt instead.
 */
export function mockJudge(prompt: string): MockReply {
  const m = JUDGE.exec(prompt);
  let yes = false;
  if (m) {
    const reference = normalize(m[1] ?? "");
    const response = normalize(m[2] ?? "");
    yes = /unanswerable/i.test(prompt)
      ? /(don t know|not mentioned|never mentioned|no information|not enough|cannot answer)/.test(response)
      : reference !== "" && response.includes(reference);
  }
  return { text: yes ? "yes" : "no", usage: { input: Math.ceil(prompt.length / 4), output: 1 } };
}

export const isJudgeRequest = (req: RecordedRequest): boolean =>
  /Answer yes or no only\.?\s*$/.test(messageText(chatMessages(req).at(-1)));

export async function resolveModels(options: {
  readonly model: string;
  readonly judgeModel?: string;
  readonly tasks: readonly Task[];
  readonly mockScripts: Readonly<Record<string, MockScript>>;
  readonly server?: MockLlmServer;
}): Promise<ResolvedModels> {
  const handles = new Map<string, ProviderHandle>();
  let server: MockLlmServer | undefined;
  let ownServer = false;
  const names = [options.model, options.judgeModel ?? options.model];
  const resolved: string[] = [];
  const scripts = new Map<string, (req: RecordedRequest) => MockReply>();
  for (const name of names) {
    if (name.startsWith("mock:")) {
      const script = name.slice("mock:".length) || "oracle";
      const make = options.mockScripts[script];
      if (!make)
        throw new Error(
          `unknown mock script "${script}" for this suite (known: ${Object.keys(options.mockScripts).join(", ")})`,
        );
      if (!server) {
        server = options.server ?? (await startMockServer());
        ownServer = options.server === undefined;
      }
      const id = `openai-compatible/mock-${script}`;
      if (!handles.has(id)) {
        scripts.set(`mock-${script}`, make(options.tasks));
        handles.set(
          id,
          createProvider(id, { baseUrl: server.baseUrl("openai-chat"), apiKey: "mock", retry: false }),
        );
      }
      resolved.push(id);
    } else {
      if (!/^[a-z-]+\/.+/.test(name))
        throw new Error(
          `--model must be mock:<script> or provider/model (e.g. anthropic/claude-sonnet-4-5), got "${name}"`,
        );
      if (!handles.has(name)) handles.set(name, createProvider(name)); // throws ProviderConfigError naming the missing key
      resolved.push(name);
    }
  }
  // One server serves every mock model: judge prompts get the offline judge,
  // everything else the script named by the request's model.
  server?.respondWith((req) => {
    if (isJudgeRequest(req)) return mockJudge(messageText(chatMessages(req).at(-1)));
    const respond = scripts.get(req.model ?? "");
    return respond
      ? respond(req)
      : { error: { status: 400, message: `no mock script for model ${req.model}` } };
  });
  return {
    model: resolved[0]!,
    judgeModel: resolved[1]!,
    provider: (model) => {
      const h = handles.get(model);
      if (!h) throw new Error(`no provider for ${model}`);
      return h;
    },
    // Mock models get a nominal price ($1 / $2 per million input / output tokens) so that
    // offline runs exercise the cost accounting; real models are priced by the catalog.
    catalog: [...handles.entries()].map(([id, h]) =>
      id.startsWith("openai-compatible/mock-") ? { ...h.info, pricing: { input: 1, output: 2 } } : h.info,
    ),
    ...(server ? { server } : {}),
    close: async () => {
      if (server && ownServer) await server.close();
    },
  };
}
