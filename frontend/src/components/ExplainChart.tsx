import type { PluginDiff } from "../api/types";

const WINNER = "#0072B2";
const OTHER = "#E69F00";

/** Per score plugin, the weighted score of the winner and of another node, side by side, and the difference. */
export function ExplainChart({
  plugins,
  winner,
  other,
  width = 680,
}: {
  plugins: Record<string, PluginDiff>;
  winner: string;
  other: string;
  width?: number;
}) {
  const entries = Object.entries(plugins);
  const max = Math.max(1, ...entries.flatMap(([, d]) => [d.winner, d.other]));
  const longest = Math.max(10, ...entries.map(([p]) => p.length));
  const labelW = Math.min(280, Math.max(140, Math.round(longest * 6.6) + 16));
  const diffW = 70;
  const barW = width - labelW - diffW - 50;
  const rowH = 34;
  const top = 26;
  const height = top + entries.length * rowH + 8;
  const x = (v: number) => (Math.max(0, v) / max) * barW;
  const summary = entries.map(([p, d]) => `${p}: ${d.winner} vs ${d.other}`).join("; ");
  return (
    <svg
      className="chart"
      width="100%"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={`Weighted scores per plugin, ${winner} against ${other}. ${summary}`}
      style={{ maxWidth: width }}
    >
      <g transform={`translate(${labelW}, 12)`}>
        <rect width={10} height={10} y={-8} fill={WINNER} />
        <text x={14}>{winner} (selected)</text>
        <rect width={10} height={10} y={-8} x={barW / 2 + 10} fill={OTHER} />
        <text x={barW / 2 + 24}>{other}</text>
      </g>
      <text x={width - 8} y={16} textAnchor="end" fontWeight={600}>
        difference
      </text>
      {entries.map(([plugin, d], k) => {
        const y = top + k * rowH;
        const diff = d.difference;
        return (
          <g key={plugin} transform={`translate(0, ${y})`} data-plugin={plugin}>
            <text x={labelW - 8} y={13} textAnchor="end">
              {plugin}
            </text>
            <text x={labelW - 8} y={26} textAnchor="end" fill="#5b6573" style={{ fontSize: 10.5 }}>
              weight {d.weight}
            </text>
            <rect x={labelW} y={2} height={12} width={x(d.winner)} fill={WINNER} data-testid="bar-winner">
              <title>{`${winner}: ${d.winner} (raw ${d.winnerRaw})`}</title>
            </rect>
            <text x={labelW + x(d.winner) + 4} y={12} style={{ fontSize: 10.5 }}>
              {d.winner}
            </text>
            <rect x={labelW} y={16} height={12} width={x(d.other)} fill={OTHER} data-testid="bar-other">
              <title>{`${other}: ${d.other} (raw ${d.otherRaw})`}</title>
            </rect>
            <text x={labelW + x(d.other) + 4} y={26} style={{ fontSize: 10.5 }}>
              {d.other}
            </text>
            <text
              x={width - 8}
              y={20}
              textAnchor="end"
              fontWeight={600}
              fill={diff > 0 ? "#00527f" : diff < 0 ? "#9c3f00" : "#5b6573"}
            >
              {diff > 0 ? `+${diff}` : diff}
            </text>
            <line x1={labelW} x2={labelW} y1={0} y2={rowH} className="axis" />
          </g>
        );
      })}
    </svg>
  );
}
