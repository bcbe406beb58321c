// The agents the daemon serves (`GET /v1/agents`), each linking to a chat with it.
import type { AgentInfo } from "@lash/client";
import { useEffect, useState } from "preact/hooks";
import { describeError } from "../connection.ts";
import { useClient } from "../context.ts";
import type { PageProps } from "../page.ts";
import { href } from "../router.ts";

export function AgentsPage(_props: PageProps) {
  const lash = useClient();
  const [agents, setAgents] = useState<readonly AgentInfo[] | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  useEffect(() => {
    lash.agents.list().then(setAgents, (e: unknown) => setProblem(describeError(e)));
  }, [lash]);
  if (problem !== undefined)
    return (
      <p role="alert" class="error">
        The agents could not be listed: {problem}
      </p>
    );
  if (agents === undefined) return <p class="empty">Loading the agents…</p>;
  if (agents.length === 0)
    return (
      <p class="empty" data-testid="agents-empty">
        No agents yet. Write one under <code>agents/</code> (see <code>lash init</code>), run{" "}
        <code>lash build</code>, and restart <code>lash serve</code>.
      </p>
    );
  return (
    <ul class="agents" aria-label="Agents">
      {agents.map((a) => (
        <li key={a.name} class="agent">
          <h2>
            <a href={href("/agents/:name", { name: a.name })}>{a.name}</a>
          </h2>
          <p>{a.description}</p>
          <p class="meta">
            {a.mode} · {a.model ?? "the daemon's model"} ·{" "}
            {a.access === "execute" ? "you may run it" : "read only"}
          </p>
        </li>
      ))}
    </ul>
  );
}
