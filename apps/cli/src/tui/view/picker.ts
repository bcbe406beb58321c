// A list picker (/resume, /tree, /model): ↑/↓, type to filter, Enter, Esc.
import { Box, Text } from "ink";
import type React from "react";
import type { Picker, PickerOption } from "../controller.ts";
import { h, truncate } from "./text.ts";

export function filterOptions(picker: Picker, filter: string): PickerOption[] {
  const f = filter.toLowerCase();
  return f
    ? picker.options.filter((o) => o.label.toLowerCase().includes(f) || o.value.toLowerCase().includes(f))
    : [...picker.options];
}

export function PickerView(props: {
  readonly picker: Picker;
  readonly options: readonly PickerOption[];
  readonly index: number;
  readonly filter: string;
  readonly width: number;
}): React.ReactElement {
  const { picker, options, index, width } = props;
  const windowSize = 10;
  const start = Math.max(0, Math.min(index - Math.floor(windowSize / 2), options.length - windowSize));
  const shown = options.slice(start, start + windowSize);
  return h(
    Box,
    { flexDirection: "column", borderStyle: "round", borderColor: "cyan", paddingX: 1, marginTop: 1 },
    h(Text, { bold: true, color: "cyan" }, picker.title),
    props.filter ? h(Text, { dimColor: true }, `filter: ${props.filter}`) : null,
    options.length === 0 ? h(Text, { dimColor: true }, "(nothing matches)") : null,
    start > 0 ? h(Text, { dimColor: true }, `  ↑ ${start} more`) : null,
    ...shown.map((o, i) => {
      const selected = start + i === index;
      const pad = o.tree ?? `${"  ".repeat(o.depth ?? 0)}${o.depth ? "└ " : ""}`;
      const label = truncate(`${pad}${o.label}`, Math.max(10, width - 40));
      return h(
        Text,
        { key: o.value, wrap: "truncate-end" },
        h(
          Text,
          { color: selected ? "cyan" : undefined, bold: selected },
          `${selected ? "❯ " : "  "}${label}`,
        ),
        o.current ? h(Text, { color: "green" }, " ●") : null,
        o.detail ? h(Text, { dimColor: true }, `  ${o.detail}`) : null,
      );
    }),
    start + windowSize < options.length
      ? h(Text, { dimColor: true }, `  ↓ ${options.length - start - windowSize} more`)
      : null,
    h(Text, { dimColor: true }, picker.hint),
  );
}
