// The prompt box: the editor's text with a block cursor, or a placeholder.
import { Box, Text } from "ink";
import type React from "react";
import type { Editor } from "../editor.ts";
import { h } from "./text.ts";

/** The empty prompt's placeholder: idle, and while a turn runs. */
export const PLACEHOLDER = [
  "ask anything · /help for commands · shift+enter or \\ for a new line",
  "type to queue a message for the next turn · esc to cancel",
] as const;

const PASTE = /\[pasted (?:\d+ lines|\d+ chars) #\d+\]/g;

function styled(line: string, key: string): React.ReactNode[] {
  // collapsed pastes are shown in a distinct colour
  const out: React.ReactNode[] = [];
  let last = 0;
  PASTE.lastIndex = 0;
  for (let m = PASTE.exec(line); m !== null; m = PASTE.exec(line)) {
    if (m.index > last) out.push(line.slice(last, m.index));
    out.push(h(Text, { key: `${key}p${m.index}`, color: "magenta" }, m[0]));
    last = m.index + m[0].length;
  }
  if (last < line.length) out.push(line.slice(last));
  return out;
}

export function InputBox(props: {
  readonly editor: Editor;
  readonly running: boolean;
  readonly width: number;
  readonly focused: boolean;
}): React.ReactElement {
  const { editor } = props;
  const lines = editor.text.split("\n");
  const { line: cl, col } = editor.position();
  // the prompt mark sits in its own column, so a wrapped line continues indented under the text
  const row = (i: number, ...text: React.ReactNode[]) =>
    h(
      Box,
      { key: i, flexDirection: "row" },
      h(Box, { flexShrink: 0, width: 2 }, h(Text, { color: "cyan", bold: true }, i === 0 ? "› " : "  ")),
      h(Box, { flexShrink: 1, flexGrow: 1 }, h(Text, { wrap: "wrap" }, ...text)),
    );
  const rows = lines.map((l, i) => {
    if (i !== cl || !props.focused) return row(i, ...(l ? styled(l, `l${i}`) : [" "]));
    const before = l.slice(0, col);
    const at = l.slice(col, col + 1) || " ";
    const after = l.slice(col + 1);
    return row(i, ...styled(before, `b${i}`), h(Text, { inverse: true }, at), ...styled(after, `a${i}`));
  });
  const empty = editor.isEmpty;
  return h(
    Box,
    {
      flexDirection: "column",
      borderStyle: "round",
      borderColor: props.running ? "gray" : "cyan",
      borderLeft: false,
      borderRight: false,
      // the frame's width, not a number: ink lays out a resized terminal before React renders again
    },
    empty
      ? h(
          Text,
          { wrap: "truncate-end" },
          h(Text, { color: "cyan", bold: true }, "› "),
          props.focused ? h(Text, { inverse: true }, " ") : null,
          h(Text, { dimColor: true }, " ", PLACEHOLDER[props.running ? 1 : 0]),
        )
      : h(Box, { flexDirection: "column" }, ...rows),
  );
}
