import { Box, Text } from "ink";
import React from "react";
import type { Line, Seg } from "../markdown.ts";
import { palette } from "../theme.ts";
import { wrapLines } from "../wrap.ts";

export const h = React.createElement;

function segEl(s: Seg, key: number): React.ReactElement {
  return h(
    Text,
    {
      key,
      ...(s.bold ? { bold: true } : {}),
      ...(s.italic ? { italic: true } : {}),
      ...(s.underline ? { underline: true } : {}),
      ...(s.strikethrough ? { strikethrough: true } : {}),
      ...(s.dim && !palette().noDim ? { dimColor: true } : {}),
      ...(s.color ? { color: s.color } : {}),
      ...(s.bg ? { backgroundColor: s.bg } : {}),
    },
    s.text,
  );
}

/** One styled line (wraps at the box width). */
export function LineView(props: {
  readonly line: Line;
  readonly wrap?: "wrap" | "truncate-end";
}): React.ReactElement {
  const { line } = props;
  // an empty line (a blank line of a code block too) still takes its row
  if (line.every((seg) => seg.text === "")) return h(Text, null, " ");
  return h(Text, { wrap: props.wrap ?? "wrap" }, ...line.map(segEl));
}

/**
 * Styled lines. With `width` (the columns the lines have), they are wrapped here with their
 * hanging indents (wrap.ts) and each row is drawn as is; without it, ink wraps them.
 */
export function Lines(props: {
  readonly lines: readonly Line[];
  readonly wrap?: "wrap" | "truncate-end";
  readonly width?: number;
}): React.ReactElement {
  if (props.width !== undefined) {
    const rows = wrapLines(props.lines, props.width);
    return h(
      Box,
      { flexDirection: "column" },
      ...rows.map((line, i) => h(LineView, { key: i, line, wrap: "truncate-end" })),
    );
  }
  return h(
    Box,
    { flexDirection: "column" },
    ...props.lines.map((line, i) =>
      h(LineView, { key: i, line, ...(props.wrap ? { wrap: props.wrap } : {}) }),
    ),
  );
}

export const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export { fmtDuration, truncate } from "../format.ts";
