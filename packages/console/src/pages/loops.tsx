// Loops (scheduled agents): each with its schedule, its next and last firing, a trigger
// button (with an optional instruction for that firing), pause / resume, and its recent
// firings with their runs.
import type { LashClientPromise, Loop } from "@lash/client";
import { useState } from "preact/hooks";
import { useClient } from "../context.ts";
import type { PageProps } from "../page.ts";
import { ErrorNote, errorText, fmtTime, href, Status, useLoad } from "./kit.tsx";

const POLL_MS = 2000;

export function scheduleText(schedule: unknown): string {
  if (typeof schedule === "string") return `cron ${schedule}`;
  const s = (schedule ?? {}) as { cron?: string; tz?: string; every?: string };
  if (s.every !== undefined) return `every ${s.every}`;
  if (s.cron !== undefined) return `cron ${s.cron}${s.tz ? ` (${s.tz})` : ""}`;
  return JSON.stringify(schedule);
}

export function LoopsPage(_props: PageProps) {
  const client = useClient();
  const loops = useLoad(() => client.loops.list(), [client], POLL_MS);
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const act = async (what: () => Promise<string>) => {
    setError(undefined);
    try {
      setStatus(await what());
      await loops.reload();
    } catch (e) {
      setError(errorText(e));
    }
  };
  const list = loops.data ?? [];
  return (
    <section class="page loops" aria-label="Loops">
      <ErrorNote error={loops.error ?? error} />
      {status && <Status>{status}</Status>}
      {loops.data && list.length === 0 && (
        <p class="empty">
          No loops: give an agent a <code>schedule</code> and an <code>instruction</code> and run{" "}
          <code>lash build</code>.
        </p>
      )}
      {list.map((loop) => (
        <LoopCard key={loop.name} client={client} loop={loop} act={act} />
      ))}
    </section>
  );
}

function LoopCard(props: {
  readonly client: LashClientPromise;
  readonly loop: Loop;
  readonly act: (what: () => Promise<string>) => Promise<void>;
}) {
  const { client, loop, act } = props;
  const [instruction, setInstruction] = useState("");
  const firings = useLoad(
    () => client.loops.firings(loop.name, { limit: 10 }),
    [client, loop.name, loop.lastFiring?.key, loop.lastFiring?.state],
    POLL_MS,
  );
  const id = `loop-${loop.name}`;
  return (
    <section class="loop card" aria-labelledby={id} data-loop={loop.name}>
      <h2 id={id}>
        {loop.name} {loop.paused && <span class="badge">paused</span>}
      </h2>
      <dl class="loop-facts">
        <dt>Agent</dt>
        <dd>{loop.agent}</dd>
        <dt>Schedule</dt>
        <dd>{scheduleText(loop.schedule)}</dd>
        <dt>Instruction</dt>
        <dd>{loop.instruction}</dd>
        <dt>Next firing</dt>
        <dd data-field="next">{loop.paused ? "— (paused)" : fmtTime(loop.nextFiring)}</dd>
        <dt>Last firing</dt>
        <dd data-field="last">
          {loop.lastFiring ? (
            <>
              {fmtTime(loop.lastFiring.at)} ·{" "}
              <span class={`state state-${loop.lastFiring.state}`}>{loop.lastFiring.state}</span>
              {loop.lastFiring.runId && (
                <>
                  {" "}
                  · <a href={href(`/runs/${loop.lastFiring.runId}`)}>run {loop.lastFiring.runId}</a>
                </>
              )}
            </>
          ) : (
            "none yet"
          )}
        </dd>
      </dl>
      <form
        class="actions"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const f = await client.loops.trigger(
              loop.name,
              instruction.trim() !== "" ? { instruction: instruction.trim() } : {},
            );
            setInstruction("");
            return `Triggered ${loop.name}: firing ${f.key} (${f.state}).`;
          });
        }}
      >
        <label>
          Instruction for this firing of {loop.name} (optional)
          <input
            type="text"
            value={instruction}
            placeholder={loop.instruction}
            onInput={(e) => setInstruction((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" aria-label={`Trigger ${loop.name} now`}>
          Trigger now
        </button>
        {loop.paused ? (
          <button
            type="button"
            aria-label={`Resume ${loop.name}`}
            onClick={() =>
              void act(async () => {
                await client.loops.resume(loop.name);
                return `Resumed ${loop.name}.`;
              })
            }
          >
            Resume
          </button>
        ) : (
          <button
            type="button"
            aria-label={`Pause ${loop.name}`}
            onClick={() =>
              void act(async () => {
                await client.loops.pause(loop.name);
                return `Paused ${loop.name}.`;
              })
            }
          >
            Pause
          </button>
        )}
      </form>
      <h3>Recent firings</h3>
      <ErrorNote error={firings.error} />
      {(firings.data ?? []).length === 0 ? (
        <p class="empty">No firings yet.</p>
      ) : (
        <table class="firings">
          <thead>
            <tr>
              <th scope="col">Scheduled</th>
              <th scope="col">Kind</th>
              <th scope="col">State</th>
              <th scope="col">Attempts</th>
              <th scope="col">Run</th>
            </tr>
          </thead>
          <tbody>
            {(firings.data ?? []).map((f) => (
              <tr key={f.key} data-firing={f.key}>
                <td>{fmtTime(f.scheduledAt)}</td>
                <td>{f.kind}</td>
                <td class={`state state-${f.state}`}>
                  {f.state}
                  {f.error ? `: ${f.error.message}` : ""}
                </td>
                <td>{f.attempts}</td>
                <td>{f.runId ? <a href={href(`/runs/${f.runId}`)}>{f.runId}</a> : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
