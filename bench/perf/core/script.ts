// The scripted model of the core benchmarks: a tool loop of `rounds` `echo` calls, then "done".
import type { LlmEvent, LlmRequest } from "@lash/sansio";

export function loopScript(request: LlmRequest, rounds: number): { events: LlmEvent[] } {
  // count tool messages of the current turn only: the last user text message starts it
  let sinceUser = 0;
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i]!;
    if (m.role === "user" && m.parts.some((p) => p.type === "text")) break;
    if (m.role === "tool") sinceUser++;
  }
  if (sinceUser < rounds) {
    const id = `c${sinceUser}`;
    return {
      events: [
        { type: "toolCallStart", id, name: "echo" },
        { type: "toolCallArgsDelta", id, delta: `{"n":${sinceUser}}` },
        { type: "toolCallEnd", id },
        { type: "usage", usage: { input: 100, output: 10 } },
        { type: "finish", reason: "toolUse" },
      ],
    };
  }
  return {
    events: [
      { type: "textDelta", text: "done" },
      { type: "usage", usage: { input: 100, output: 2 } },
      { type: "finish", reason: "stop" },
    ],
  };
}
