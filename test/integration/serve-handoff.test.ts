// `lash serve` and compaction strategy "handoff": a run whose turn hands off names the
// successor, a run posted to the session that handed off runs in the successor, and the
// sessions show the link both ways (a real daemon child process, the mock wire server).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMPACTION_SYSTEM, HANDOFF_PREFIX } from "@lash/core";
import type { RecordedRequest } from "@lash/providers/testing";
import { describe, expect, it } from "vitest";
import { chatMessages, textOf } from "./cli-support.ts";
import { api, serveTests } from "./serve-support.ts";

const t = serveTests();

const isSummariser = (r: RecordedRequest) =>
  chatMessages(r.body).some((m) => m.role === "system" && textOf(m.content) === COMPACTION_SYSTEM);

/** The user's config: the handoff strategy and a small window (next to what the sandbox wrote). */
function handoffConfig(home: string) {
  const configFile = join(home, "config.json");
  const config = existsSync(configFile) ? (JSON.parse(readFileSync(configFile, "utf8")) as object) : {};
  mkdirSync(home, { recursive: true });
  writeFileSync(
    configFile,
    JSON.stringify({ ...config, contextWindow: 8000, compaction: { strategy: "handoff" } }),
  );
}

describe("lash serve follows a handoff", () => {
  it("a run whose turn hands off names the successor; the next run posted to the old session runs there", async () => {
    const sb = await t.sandbox();
    handoffConfig(sb.home);
    let answers = 0;
    sb.server.respondWith((r) =>
      isSummariser(r)
        ? { text: "SUMMARY OF THE WORK: goals, decisions, TODO ship." }
        : { text: `ok ${++answers}` },
    );
    const daemon = await t.daemon(sb);
    const url = daemon.url;
    const id = (await api(url, "POST", "/v1/sessions", {})).body.id as string;
    const first = `first: ${"an early detail of the work ".repeat(900)}`;
    const run1 = await api(url, "POST", `/v1/sessions/${id}/turns?wait=true`, { text: first });
    expect(run1.body.state, JSON.stringify(run1.body)).toBe("completed");
    expect(run1.body.handoff).toBeUndefined();
    expect(sb.server.requests.filter(isSummariser)).toHaveLength(0);

    // the history no longer fits: the turn compacts, hands off, and finishes in the successor
    const run2 = await api(url, "POST", `/v1/sessions/${id}/turns?wait=true`, {
      text: `second: ${"more of the work ".repeat(60)}`,
    });
    expect(run2.body.state, JSON.stringify(run2.body)).toBe("completed");
    expect(run2.body.sessionId).toBe(id);
    const link = run2.body.handoff as { from: string; to: string };
    expect(link.from).toBe(id);
    const successor = link.to;
    expect(successor).not.toBe(id);
    expect(sb.server.requests.filter(isSummariser).length).toBeGreaterThanOrEqual(1);

    // the link both ways on GET /v1/sessions/:id
    expect((await api(url, "GET", `/v1/sessions/${id}`)).body.handoff).toEqual({ to: successor });
    expect((await api(url, "GET", `/v1/sessions/${successor}`)).body.handoff).toEqual({ from: id });

    // a run posted to the old session runs in the successor, and says so
    const before = sb.server.requests.length;
    const run3 = await api(url, "POST", `/v1/sessions/${id}/turns?wait=true`, { text: "third, after it" });
    expect(run3.body.state, JSON.stringify(run3.body)).toBe("completed");
    expect(run3.body.sessionId).toBe(successor);
    expect(run3.body.handoff).toEqual({ from: id, to: successor });
    const sent = sb.server.requests.slice(before);
    expect(sent).toHaveLength(1);
    const body = JSON.stringify(sent[0]!.body);
    expect(body).toContain(JSON.stringify(HANDOFF_PREFIX(id)).slice(1, -1));
    expect(body).toContain("SUMMARY OF THE WORK");
    expect(body).toContain("third, after it");
    expect(body).not.toContain("an early detail of the work");
    // its record and events are the successor's; the old session's graph did not grow
    const runsOfSuccessor = (await api(url, "GET", `/v1/sessions/${successor}/runs`)).body.runs as {
      id: string;
    }[];
    expect(runsOfSuccessor.map((r) => r.id)).toEqual([run3.body.id]);
    const events = (await api(url, "GET", `/v1/runs/${run3.body.id as string}`)).body;
    expect(events.lastSeq).toBeGreaterThan(0);
    const oldMessages = (await api(url, "GET", `/v1/sessions/${id}/messages`)).body.messages as unknown[];
    expect(JSON.stringify(oldMessages)).not.toContain("third, after it");
    const newMessages = (await api(url, "GET", `/v1/sessions/${successor}/messages`)).body
      .messages as unknown[];
    expect(JSON.stringify(newMessages)).toContain("third, after it");
  });
});
