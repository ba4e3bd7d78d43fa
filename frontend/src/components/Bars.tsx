import { formatAmount, formatPercent, percent, resourceLabel } from "../lib/format";
import type { ScoreCell, ScoreMode } from "../lib/nodes";
import { pluginColor } from "../lib/colors";

/** Requested against allocatable, e.g. "2.5 / 8 (31%)"; over 100% is hatched and says so. */
export function UsageBar({ used, total, resource }: { used: number; total: number | undefined; resource: string }) {
  const p = total ? percent(used, total) : null;
  const width = p === null ? 0 : Math.min(100, p);
  const cls = p !== null && p > 100 ? "over" : p !== null && p >= 85 ? "high" : "";
  const text = `${formatAmount(resource, used)} / ${total === undefined ? "–" : formatAmount(resource, total)}`;
  const label = `${resourceLabel(resource)}: ${text} requested (${formatPercent(p)})${p !== null && p > 100 ? ", over allocatable" : ""}`;
  return (
    <div className="usage" title={label}>
      <div className="track" role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(p ?? 0)}>
        <div className={`fill ${cls}`} style={{ width: `${width}%` }} />
      </div>
      <span className="label">
        {formatPercent(p)}
        {p !== null && p > 100 ? " ⚠" : ""}
      </span>
      <span className="label" style={{ gridColumn: "1 / 3" }}>
        {text}
      </span>
    </div>
  );
}

export function ProgressBar({ value, label }: { value: number; label: string }) {
  const pct = Math.max(0, Math.min(1, value)) * 100;
  return (
    <div className="progress" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(pct)}>
      <div style={{ width: `${pct}%` }} />
    </div>
  );
}

/** The number a score cell shows in a mode. */
export function scoreValue(cell: ScoreCell | null | undefined, mode: ScoreMode): number | null {
  return cell ? cell[mode] : null;
}

/** The bar's full width: 100 (MaxNodeScore) normalized, 100 × weight weighted, the largest raw value seen raw. */
export function scoreScale(mode: ScoreMode, weight: number, rawMax: number): number {
  if (mode === "normalized") return 100;
  if (mode === "weighted") return 100 * Math.max(1, weight);
  return Math.max(1, rawMax);
}

export function ScoreBar({
  cell,
  mode,
  plugin,
  weight,
  rawMax,
  color,
}: {
  cell: ScoreCell | null | undefined;
  mode: ScoreMode;
  plugin: string;
  weight: number;
  rawMax: number;
  color: string;
}) {
  const v = scoreValue(cell, mode);
  if (v === null) {
    return (
      <div className="scorebar none" aria-label={`${plugin}: no score`}>
        –
      </div>
    );
  }
  const scale = scoreScale(mode, weight, rawMax);
  const width = Math.max(0, Math.min(100, (Math.abs(v) / scale) * 100));
  const title = cell
    ? `${plugin}: raw ${cell.raw}, normalized ${cell.normalized}, weight ${weight}, weighted ${cell.weighted}`
    : plugin;
  return (
    // two elements: the track is the bar's ::before, the value its own text (a table shows hundreds of these)
    <div className="scorebar" title={title} aria-label={`${plugin} ${mode} ${v}`} data-mode={mode}>
      <div className="fill" style={{ width: `${width}%`, background: color, borderRadius: width >= 100 ? 2 : undefined }} data-testid="score-fill" />
      {v}
    </div>
  );
}

/** Weighted scores stacked: each plugin's share of the node's total. */
export function StackedScore({
  scores,
  plugins,
  max,
}: {
  scores: Record<string, ScoreCell> | null;
  plugins: string[];
  max: number;
}) {
  if (!scores) return <div className="stacked" aria-hidden="true" />;
  return (
    <div className="stacked" aria-hidden="true">
      {plugins.map((p, k) => {
        const w = scores[p]?.weighted ?? 0;
        if (w <= 0 || max <= 0) return null;
        return <span key={p} style={{ width: `${(w / max) * 100}%`, background: pluginColor(k) }} title={`${p}: ${w}`} />;
      })}
    </div>
  );
}
