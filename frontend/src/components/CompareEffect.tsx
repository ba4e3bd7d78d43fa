import { useState, type ReactNode } from "react";
import { api, fetchAll } from "../api/client";
import type { CycleDetail, CycleSummary, Replay, SnapshotNode } from "../api/types";
import { useLoader } from "../api/useApi";
import { BUCKETS, clusterEffect, type ClusterEffect } from "../lib/clusterEffect";
import { formatAmount, resourceLabel } from "../lib/format";
import { loadTimeline } from "../lib/timeline";
import { ErrorView, Loading } from "./Feedback";

const A_COLOR = "#0072B2";
const B_COLOR = "#E69F00";

/** Two series as grouped bars, one group per label: A blue, B orange, the counts written above. */
function PairBars({ labels, a, b, title, unit }: { labels: string[]; a: number[]; b: number[]; title: string; unit: string }) {
  const groupW = Math.max(34, Math.min(64, Math.floor(560 / Math.max(1, labels.length))));
  const h = 120;
  const top = 16;
  const max = Math.max(1, ...a, ...b);
  const barW = Math.floor((groupW - 8) / 2);
  const width = labels.length * groupW + 10;
  // a count of a few among thousands (a node or two of 5000) still draws a bar, 3 px high, under its number
  const y = (v: number) => top + h - (v > 0 ? Math.max(3, (v / max) * h) : 0);
  return (
    <figure style={{ margin: 0 }}>
      <figcaption className="small" style={{ marginBottom: 4 }}>
        {title}
      </figcaption>
      <svg width={width} height={top + h + 34} role="img" aria-label={`${title}: ${labels.map((l, k) => `${l} A ${a[k]} B ${b[k]}`).join(", ")}`}>
        {labels.map((l, k) => {
          const x = 5 + k * groupW;
          return (
            <g key={l} data-bucket={l}>
              <rect x={x} y={y(a[k])} width={barW} height={top + h - y(a[k])} fill={A_COLOR} />
              <rect x={x + barW + 2} y={y(b[k])} width={barW} height={top + h - y(b[k])} fill={B_COLOR} />
              {a[k] ? (
                <text x={x + barW / 2} y={y(a[k]) - 2} fontSize={9} textAnchor="middle">
                  {a[k]}
                </text>
              ) : null}
              {b[k] ? (
                <text x={x + barW + 2 + barW / 2} y={y(b[k]) - 2} fontSize={9} textAnchor="middle">
                  {b[k]}
                </text>
              ) : null}
              <text x={x + groupW / 2 - 4} y={top + h + 12} fontSize={10} textAnchor="middle">
                {l}
              </text>
            </g>
          );
        })}
        <text x={5} y={top + h + 28} fontSize={10} fill="#5b6573">
          {unit}
        </text>
      </svg>
    </figure>
  );
}

/** The effect an operator changes a configuration for, A against B, over the whole replay. */
export function ClusterEffectPanel({ a, b, newlyUnschedulable }: { a: Replay; b: Replay; newlyUnschedulable: number }) {
  const data = useLoader<{ a: ClusterEffect; b: ClusterEffect }>(`effect-${a.id}-${b.id}`, async (signal) => {
    const [nodes, ta, tb] = await Promise.all([
      fetchAll<SnapshotNode>(`/api/v1/snapshots/${a.snapshot}/nodes/`, { signal }),
      loadTimeline(a.id, a.snapshot, signal),
      loadTimeline(b.id, b.snapshot, signal),
    ]);
    return { a: clusterEffect(nodes, ta.cycles), b: clusterEffect(nodes, tb.cycles) };
  });
  if (data.error) return <ErrorView error={data.error} title="Could not compute the effect on the cluster" onRetry={data.reload} />;
  if (!data.data) return <Loading label="Computing the effect on the cluster…" />;
  const { a: ea, b: eb } = data.data;
  const deciles = Array.from({ length: BUCKETS }, (_, k) => `${k * 10}%`);
  const zones = [...new Set([...Object.keys(ea.placedPerZone), ...Object.keys(eb.placedPerZone)])].sort();
  return (
    <section className="panel" aria-labelledby="effect-title">
      <h2 id="effect-title">Effect on the cluster</h2>
      <p className="small">
        <span style={{ color: A_COLOR }}>■</span> A · <span style={{ color: B_COLOR }}>■</span> B, at the end of each replay.
      </p>
      <table className="data" aria-label="Cluster effect" style={{ maxWidth: 680 }}>
        <thead>
          <tr>
            <th />
            <th className="num">A</th>
            <th className="num">B</th>
          </tr>
        </thead>
        <tbody>
          <tr data-row="nodes-used">
            <td>Nodes running pods</td>
            <td className="num">{ea.nodesUsed}</td>
            <td className="num">{eb.nodesUsed}</td>
          </tr>
          {ea.resources.map((r, k) => (
            <tr key={r.resource} data-row={`stranded-${r.resource}`}>
              <td title="Free capacity on nodes that are neither empty nor full: what packing leaves unusable for large pods">
                {resourceLabel(r.resource)} stranded on partly used nodes
              </td>
              <td className="num">
                {formatAmount(r.resource, r.stranded)} of {formatAmount(r.resource, r.free)} free
              </td>
              <td className="num">
                {formatAmount(r.resource, eb.resources[k].stranded)} of {formatAmount(r.resource, eb.resources[k].free)} free
              </td>
            </tr>
          ))}
          <tr data-row="newly-unschedulable">
            <td>Pods newly unschedulable in B</td>
            <td className="num">–</td>
            <td className="num">{newlyUnschedulable}</td>
          </tr>
        </tbody>
      </table>
      <div className="row" style={{ alignItems: "flex-start", gap: 24, marginTop: 10, flexWrap: "wrap" }}>
        {ea.resources.map((r, k) => (
          <PairBars
            key={r.resource}
            title={`Nodes by ${resourceLabel(r.resource)} utilization`}
            labels={deciles}
            a={r.histogram}
            b={eb.resources[k].histogram}
            unit="nodes per utilization decile"
          />
        ))}
        {zones.length ? (
          <PairBars
            title="Pods placed per zone"
            labels={zones}
            a={zones.map((z) => ea.placedPerZone[z] ?? 0)}
            b={zones.map((z) => eb.placedPerZone[z] ?? 0)}
            unit="pods the replay placed"
          />
        ) : null}
      </div>
    </section>
  );
}

interface WhyMovedData {
  plugins: string[];
  weights: { a: Record<string, number>; b: Record<string, number> };
  /** [replay][node] -> plugin -> weighted score, and the totals */
  scores: Record<"a" | "b", Record<string, { scores: Record<string, number>; total: number | null } | null>>;
}

async function nodeScores(replay: string, pod: string, nodes: string[], signal: AbortSignal) {
  const cycles = await api.get<{ results: CycleSummary[] }>(`/api/v1/replays/${replay}/cycles/?pod=${encodeURIComponent(pod)}&page_size=50`, { signal });
  const cyc = cycles.results.find((c) => c.result === "Scheduled") ?? cycles.results[0];
  if (!cyc) return null;
  const out: Record<string, { scores: Record<string, number>; total: number | null } | null> = {};
  let detail: CycleDetail | null = null;
  for (const n of nodes) {
    detail = await api.get<CycleDetail>(`/api/v1/replays/${replay}/cycles/${cyc.seq}/?search=${encodeURIComponent(n)}&page_size=200`, { signal });
    const row = detail.nodes.results.find((x) => x.name === n);
    const scores: Record<string, number> = {};
    for (const [p, s] of Object.entries(row?.scores ?? {})) if (!("skipped" in s)) scores[p] = s.weighted;
    out[n] = row && row.total !== undefined && row.total !== null ? { scores, total: row.total } : null;
  }
  return { detail, out };
}

/** Per score plugin, both configurations' weighted scores for the node the pod left and the one it went to. */
export function WhyMoved({ a, b, pod, from, to }: { a: string; b: string; pod: string; from: string; to: string }) {
  const data = useLoader<WhyMovedData | null>(`why-${a}-${b}-${pod}`, async (signal) => {
    const [sa, sb] = await Promise.all([nodeScores(a, pod, [from, to], signal), nodeScores(b, pod, [from, to], signal)]);
    if (!sa || !sb || !sa.detail || !sb.detail) return null;
    const plugins = [...new Set([...sa.detail.scorePlugins, ...sb.detail.scorePlugins])];
    return {
      plugins,
      weights: { a: sa.detail.scoreWeights, b: sb.detail.scoreWeights },
      scores: { a: sa.out, b: sb.out },
    };
  });
  if (data.error) return <p className="small warn-box">Could not load the scores: {data.error.message}</p>;
  if (data.data === undefined) return <Loading label="Loading both configurations' scores…" />;
  if (data.data === null) return <p className="small muted">No scored cycle of this pod in one of the replays.</p>;
  const d = data.data;
  const cell = (side: "a" | "b", node: string, plugin: string) => d.scores[side][node]?.scores[plugin];
  const total = (side: "a" | "b", node: string) => d.scores[side][node]?.total ?? null;
  const lead = (side: "a" | "b") => {
    const f = total(side, from);
    const t = total(side, to);
    return f === null || t === null ? null : f - t;
  };
  const la = lead("a");
  const lb = lead("b");
  const changed = d.plugins
    .map((p) => [p, ((cell("b", to, p) ?? 0) - (cell("b", from, p) ?? 0)) - ((cell("a", to, p) ?? 0) - (cell("a", from, p) ?? 0))] as const)
    .sort((x, y) => y[1] - x[1]);
  return (
    <div className="stack" style={{ gap: 4 }} data-testid="why-moved">
      <p className="small" style={{ margin: 0 }}>
        {la !== null ? `In A, ${from} led ${to} by ${la}` : `In A, ${to} was not scored`}
        {lb !== null ? `; in B, ${to} led ${from} by ${-lb}` : ""}
        {changed.length && changed[0][1] > 0 ? `. ${changed[0][0]} moved it most (+${changed[0][1]} for ${to}).` : "."}
      </p>
      <table className="data small" aria-label={`Scores of ${pod} on ${from} and ${to}, in A and in B`}>
        <thead>
          <tr>
            <th>Score plugin</th>
            <th className="num">A weight</th>
            <th className="num">A: {from}</th>
            <th className="num">A: {to}</th>
            <th className="num">B weight</th>
            <th className="num">B: {from}</th>
            <th className="num">B: {to}</th>
          </tr>
        </thead>
        <tbody>
          {d.plugins.map((p) => (
            <tr key={p} data-plugin={p}>
              <td>{p}</td>
              <td className="num">{d.weights.a[p] ?? "–"}</td>
              <td className="num">{cell("a", from, p) ?? "–"}</td>
              <td className="num">{cell("a", to, p) ?? "–"}</td>
              <td className="num">{d.weights.b[p] ?? "–"}</td>
              <td className="num">{cell("b", from, p) ?? "–"}</td>
              <td className="num">{cell("b", to, p) ?? "–"}</td>
            </tr>
          ))}
          <tr data-plugin="total">
            <th>Total</th>
            <th />
            <th className="num">{total("a", from) ?? "–"}</th>
            <th className="num">{total("a", to) ?? "–"}</th>
            <th />
            <th className="num">{total("b", from) ?? "–"}</th>
            <th className="num">{total("b", to) ?? "–"}</th>
          </tr>
        </tbody>
      </table>
    </div>
  );
}

/** A moved pod's row with its "why?" on demand. */
export function MovedRow({ a, b, p, podLink }: { a: string; b: string; p: { pod: string; from: string; to: string; fromTotal: number | null; toTotal: number | null }; podLink: ReactNode }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <tr data-pod={p.pod}>
        <td>{podLink}</td>
        <td>
          {p.from} <span className="muted">({p.fromTotal ?? "–"})</span>
        </td>
        <td>
          → {p.to} <span className="muted">({p.toTotal ?? "–"})</span>
        </td>
        <td>
          <button type="button" className="small" aria-expanded={open} onClick={() => setOpen(!open)} aria-label={`Why did ${p.pod} move?`}>
            {open ? "Hide" : "Why?"}
          </button>
        </td>
      </tr>
      {open ? (
        <tr>
          <td colSpan={4}>
            <WhyMoved a={a} b={b} pod={p.pod} from={p.from} to={p.to} />
          </td>
        </tr>
      ) : null}
    </>
  );
}
