// Small inline SVG charts (no chart library, nothing fetched): a horizontal bar chart and a
// line chart. Each is an image with an accessible name and a text table beside it for
// readers who do not see the chart.
const WIDTH = 320;

export interface Bar {
  readonly label: string;
  readonly value: number;
  /** `ok`, `bad` or `muted` (default: the accent colour), a class of pages.css. */
  readonly tone?: "ok" | "bad" | "muted";
}

export function BarChart(props: {
  readonly title: string;
  readonly bars: readonly Bar[];
  readonly format?: (n: number) => string;
}) {
  const { title, bars } = props;
  const format = props.format ?? ((n: number) => String(n));
  const max = Math.max(1, ...bars.map((b) => b.value));
  const row = 22;
  const labelW = 96;
  const height = bars.length * row + 4;
  return (
    <figure class="chart bar-chart">
      <svg
        role="img"
        aria-label={`${title}: ${bars.map((b) => `${b.label} ${format(b.value)}`).join(", ")}`}
        viewBox={`0 0 ${WIDTH} ${height}`}
        width={WIDTH}
        height={height}
      >
        <title>{title}</title>
        {bars.map((b, i) => {
          const w = ((WIDTH - labelW - 70) * b.value) / max;
          const y = i * row + 2;
          return (
            <g key={b.label}>
              <text x={0} y={y + 14} class="chart-label">
                {b.label}
              </text>
              <rect
                x={labelW}
                y={y + 3}
                width={Math.max(b.value > 0 ? 1 : 0, w)}
                height={row - 8}
                class={`bar${b.tone ? ` bar-${b.tone}` : ""}`}
              />
              <text x={labelW + w + 4} y={y + 14} class="chart-value">
                {format(b.value)}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>{title}</figcaption>
    </figure>
  );
}

export interface Point {
  readonly x: number;
  readonly y: number;
  /** A point drawn in the warning colour (e.g. a failed run). */
  readonly bad?: boolean;
}

export function LineChart(props: {
  readonly title: string;
  readonly points: readonly Point[];
  readonly format?: (n: number) => string;
}) {
  const { title, points } = props;
  const format = props.format ?? ((n: number) => String(n));
  const height = 120;
  const pad = 24;
  if (points.length === 0)
    return (
      <figure class="chart line-chart">
        <p class="empty">No data yet.</p>
        <figcaption>{title}</figcaption>
      </figure>
    );
  const maxY = Math.max(1, ...points.map((p) => p.y));
  const xs = points.map((_, i) =>
    points.length === 1 ? WIDTH / 2 : pad + ((WIDTH - 2 * pad) * i) / (points.length - 1),
  );
  const ys = points.map((p) => height - pad - ((height - 2 * pad) * p.y) / maxY);
  const path = xs.map((x, i) => `${i === 0 ? "M" : "L"}${x.toFixed(1)},${ys[i]!.toFixed(1)}`).join(" ");
  return (
    <figure class="chart line-chart">
      <svg
        role="img"
        aria-label={`${title}: ${points.length} points, highest ${format(maxY)}, last ${format(points.at(-1)!.y)}`}
        viewBox={`0 0 ${WIDTH} ${height}`}
        width={WIDTH}
        height={height}
      >
        <title>{title}</title>
        <line x1={pad} y1={height - pad} x2={WIDTH - pad} y2={height - pad} class="axis" />
        <text x={2} y={pad - 6} class="chart-value">
          {format(maxY)}
        </text>
        <path d={path} class="line" />
        {points.map((p, i) => (
          <circle key={i} cx={xs[i]} cy={ys[i]} r={3} class={p.bad ? "dot dot-bad" : "dot"}>
            <title>{format(p.y)}</title>
          </circle>
        ))}
      </svg>
      <figcaption>{title}</figcaption>
    </figure>
  );
}
