// The completion menu under the prompt (`/` commands, `@` files) and the Ctrl+R
// history-search line.
import { Box, Text } from "ink";
import type React from "react";
import { MENU_ROWS, type Menu } from "../assist.ts";
import { h, truncate } from "./text.ts";

export function MenuView(props: {
  readonly menu: Menu;
  readonly index: number;
  readonly width: number;
}): React.ReactElement {
  const { menu, index, width } = props;
  const start = Math.max(0, Math.min(index - MENU_ROWS + 1, menu.entries.length - MENU_ROWS));
  const shown = menu.entries.slice(Math.max(0, start), Math.max(0, start) + MENU_ROWS);
  const labelW = Math.min(
    Math.max(...shown.map((e) => e.label.length)) + 2,
    Math.max(12, Math.floor(width * (menu.kind === "file" ? 0.9 : 0.45))),
  );
  return h(
    Box,
    { flexDirection: "column", paddingLeft: 2 },
    ...shown.map((e, i) => {
      const selected = Math.max(0, start) + i === index;
      return h(
        Text,
        { key: e.insert, wrap: "truncate-end" },
        h(
          Text,
          { color: selected ? "cyan" : undefined, bold: selected, inverse: false },
          `${selected ? "❯ " : "  "}${truncate(e.label, labelW).padEnd(labelW)}`,
        ),
        e.detail ? h(Text, { dimColor: true }, truncate(e.detail, Math.max(0, width - labelW - 6))) : null,
      );
    }),
    h(
      Text,
      { dimColor: true, wrap: "truncate-end" },
      `  ${menu.entries.length > MENU_ROWS ? `${menu.entries.length} matches · ` : ""}↑/↓ choose · Tab complete · Esc close`,
    ),
  );
}

export function SearchView(props: {
  readonly query: string;
  readonly match: string | undefined;
  readonly width: number;
}): React.ReactElement {
  const { query, match } = props;
  const shown = (match ?? "").replace(/\s+/g, " ");
  return h(
    Box,
    {
      flexDirection: "column",
      borderStyle: "round",
      borderColor: "magenta",
      borderLeft: false,
      borderRight: false,
      width: props.width,
    },
    h(
      Text,
      { wrap: "truncate-end" },
      h(Text, { color: "magenta" }, "reverse search: "),
      h(Text, { bold: true }, query),
      h(Text, { inverse: true }, " "),
      h(
        Text,
        { dimColor: !match },
        `  ${match === undefined ? (query ? "(no match)" : "type to search your prompts") : shown}`,
      ),
    ),
    h(Text, { dimColor: true, wrap: "truncate-end" }, "Ctrl+R older · Enter use it · Esc cancel"),
  );
}

/** `!command` outputs waiting for the next prompt. */
export function AttachedView(props: {
  readonly attached: readonly string[];
  readonly width: number;
}): React.ReactElement | null {
  if (props.attached.length === 0) return null;
  return h(
    Box,
    { flexDirection: "column" },
    ...props.attached.map((a, i) =>
      h(
        Text,
        { key: i, wrap: "truncate-end" },
        h(Text, { color: "magenta" }, "⊕ "),
        h(Text, null, truncate(a, props.width - 40)),
        h(Text, { dimColor: true }, " goes with your next prompt · Ctrl+X drops it"),
      ),
    ),
  );
}
