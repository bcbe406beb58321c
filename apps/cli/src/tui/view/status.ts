// The one-row status bar: model · mode · context · cost · cwd (branch).
import { homedir } from "node:os";
import { Box, Text } from "ink";
import type React from "react";
import type { TuiState } from "../controller.ts";
import { fmtCost, fmtTokens } from "../format.ts";
import { h } from "./text.ts";

export function shortPath(p: string, home = homedir()): string {
  return home && (p === home || p.startsWith(`${home}/`)) ? `~${p.slice(home.length)}` : p;
}

export function contextLabel(
  tokens: number | undefined,
  window: number | undefined,
  estimated = false,
): string {
  if (tokens === undefined) return window ? `ctx — / ${fmtTokens(window)}` : "ctx —";
  const t = `${estimated ? "~" : ""}${fmtTokens(tokens)}`;
  if (!window) return `ctx ${t}`;
  const pct = Math.round((100 * tokens) / window);
  return `ctx ${t} / ${fmtTokens(window)} (${pct}%)`;
}

export function StatusBar(props: { readonly state: TuiState; readonly width: number }): React.ReactElement {
  const s = props.state;
  const pct = s.contextTokens !== undefined && s.contextWindow ? s.contextTokens / s.contextWindow : 0;
  const ctxColor = pct >= 0.9 ? "red" : pct >= 0.7 ? "yellow" : undefined;
  const place = `${shortPath(s.cwd)}${s.gitBranch ? ` (${s.gitBranch})` : ""}`;
  const left: React.ReactNode[] = [
    h(Text, { key: "m", color: "magenta" }, s.model),
    h(Text, { key: "d", dimColor: true }, ` · ${s.mode}`),
    h(
      Text,
      { key: "c", dimColor: !ctxColor, ...(ctxColor ? { color: ctxColor } : {}) },
      ` · ${contextLabel(s.contextTokens, s.contextWindow, s.contextEstimated === true)}`,
    ),
    h(Text, { key: "$", dimColor: true }, ` · ${fmtCost(s.costUsd)}`),
  ];
  if (s.expanded) left.push(h(Text, { key: "x", dimColor: true }, " · expanded"));
  return h(
    Box,
    // the frame's width (ink's, right after a resize), not props.width
    { flexDirection: "row", justifyContent: "space-between" },
    h(Box, { flexShrink: 1 }, h(Text, { wrap: "truncate-end" }, ...left)),
    h(Box, { flexShrink: 2, marginLeft: 1 }, h(Text, { dimColor: true, wrap: "truncate-start" }, place)),
  );
}
