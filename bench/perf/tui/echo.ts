// Keystroke-to-echo in the TUI: from a key reaching stdin to ink having rendered the frame
// that shows it, on a fake 120x40 TTY, for plain typing and with the `@` file menu open
// (the menu ranks every file of the working directory on each key).
//   pnpm exec node bench/perf/tui/echo.ts [--cwd dir] [--keys 200] [--query srctuiapp]
import "./production.ts";
import { EventEmitter } from "node:events";
import { IdGenerator, LashRuntime, LlmProviders, MemoryStore, ModelCatalog } from "@lash/core";
import { ScriptedProvider } from "@lash/providers/testing";
import { Effect, Layer, ManagedRuntime } from "effect";
import type { CliContext } from "../../../apps/cli/src/context.ts";
import { FileIndex } from "../../../apps/cli/src/tui/assist.ts";
import { mountTui, TuiController } from "../../../apps/cli/src/tui/mount.ts";
import { argValue, median, percentile } from "../util.ts";

class FakeTty extends EventEmitter {
  isTTY = true;
  columns = 120;
  rows = 40;
  write(_chunk: string | Uint8Array, cb?: () => void): boolean {
    cb?.();
    return true;
  }
}

class FakeStdin extends EventEmitter {
  isTTY = true;
  private data: string | null = null;
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
  read() {
    const d = this.data;
    this.data = null;
    return d;
  }
  type(s: string) {
    this.data = s;
    this.emit("readable");
  }
}

const cwd = argValue("--cwd") ?? process.cwd();
const keys = Number(argValue("--keys") ?? "200");
const info = {
  id: "test/model",
  contextWindow: 100_000,
  maxOutput: 8000,
  reasoning: false,
  images: false,
  caching: false,
};
const runtime = ManagedRuntime.make(
  LashRuntime.layer({ plugins: [] }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        MemoryStore,
        LlmProviders.single(new ScriptedProvider([])),
        IdGenerator.Live,
        ModelCatalog.fromEntries([info]),
      ),
    ),
  ),
);
const ctx: CliContext = {
  runtime,
  paths: {
    home: "/tmp/lash-echo-home",
    db: "/tmp/lash-echo-home/lash.db",
    config: "/tmp/lash-echo-home/c.json",
  },
  settings: { model: info.id, mode: "standard", cwd, scripted: true },
  modelInfo: () => info,
  knownModels: () => [info.id],
  setModel() {},
  newSession: () =>
    runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.createSession({ model: info.id, cwd }))),
  gitBranch: () => "main",
  pluginStatus: () => ({}),
  exportSession: () => Promise.reject(new Error("n/a")),
  close: () => runtime.dispose(),
};

const controller = new TuiController(ctx, { throttleMs: 0 });
const stdout = new FakeTty();
const stdin = new FakeStdin();
let waiter: (() => void) | undefined;
const frame = () => new Promise<void>((r) => (waiter = r));
const first = frame();
const inst = mountTui(controller, {
  stdout: stdout as unknown as NodeJS.WriteStream,
  stdin: stdin as unknown as NodeJS.ReadStream,
  maxFps: 1000,
  kittyKeyboard: false,
  onRender: () => {
    const w = waiter;
    waiter = undefined;
    w?.();
  },
});
await first;
await controller.start();

async function typeKeys(text: string): Promise<number[]> {
  const out: number[] = [];
  for (const ch of text) {
    const next = frame();
    const t0 = performance.now();
    stdin.type(ch);
    await next;
    out.push(performance.now() - t0);
  }
  return out;
}
const fmt = (xs: number[]) => `median ${median(xs).toFixed(2)} ms · p95 ${percentile(xs, 95).toFixed(2)} ms`;
const files = (await new FileIndex(cwd).load()).length;
const plain = await typeKeys("a".repeat(keys));
stdin.type("\u0015"); // Ctrl+U
await new Promise((r) => setTimeout(r, 50));
const query = argValue("--query") ?? "srctuiapp";
await typeKeys(" @");
// the TUI lists the files on the first `@` (in the background): measure once the menu has them
await new Promise((r) => setTimeout(r, Math.max(1000, files / 5)));
const menu = [0, 0, ...(await typeKeys(query))];
inst.unmount();
// (after unmount: ink patches console while mounted)
process.stdout.write(`plain typing (${keys} keys): ${fmt(plain)}\n`);
process.stdout.write(`@ menu open over ${files} files (${menu.length - 2} keys): ${fmt(menu.slice(2))}\n`);
await runtime.dispose();
process.exit(0);
