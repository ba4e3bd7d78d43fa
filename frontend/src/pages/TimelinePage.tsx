import { useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { fetchAll } from "../api/client";
import type { PluginLatency, Replay, SnapshotNode } from "../api/types";
import { useApi, useLoader } from "../api/useApi";
import { ResultBadge } from "../components/Badges";
import { UsageBar } from "../components/Bars";
import { ErrorView, Loading } from "../components/Feedback";
import { Heatmap } from "../components/Heatmap";
import { GROUP_BY, groupOf, orderNodes, type GroupBy } from "../lib/nodeGroups";
import { heatGradientCss } from "../lib/colors";
import { formatAmount, formatMicros, formatPercent, plural, resourceLabel } from "../lib/format";
import type { CellRange } from "../lib/heatmap";
import { allocationMatrix, loadLatency, loadTimeline, requestedAt, resourcesOf, type TimelineData } from "../lib/timeline";

const RESULT_COLORS: Record<string, string> = {
  Scheduled: "#0072B2",
  Waiting: "#E69F00",
  Unschedulable: "#D55E00",
  Error: "#A3437F",
};

function useWidth(ref: React.RefObject<HTMLElement>, fallback: number): number {
  const [w, setW] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => setW(Math.max(320, Math.floor(el.clientWidth)));
    update();
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return w;
}

const STRIP_H = 36;
const MARKS_H = 7; // the row above the marks: preemptions and retries

/**
 * The scheduling queue as a strip: one mark per cycle, coloured (and counted in the legend) by result;
 * above it, a black tick where a cycle's preemption evicted pods and a grey one where a pod was tried
 * again (a preemptor's retry); a Permit wait is its own colour, and the binding that ended it a short mark.
 */
function QueueStrip({
  data,
  width,
  cursor,
  onPick,
  from = 0,
  to,
}: {
  data: TimelineData;
  width: number;
  cursor: number;
  onPick: (c: number) => void;
  /** The span of cycles shown (slot `from` to slot `to`; slot 0 is before the first cycle), as the heatmap's columns. */
  from?: number;
  to?: number;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const total = data.cycles.length;
  const last = Math.max(from, to ?? total);
  useEffect(() => {
    const c = canvas.current;
    const ctx = c?.getContext?.("2d");
    if (!c || !ctx) return;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(STRIP_H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, STRIP_H);
    // slot 0 is "before the first cycle", as in the heatmap below, so that the columns line up
    const w = width / (last - from + 1);
    const mw = Math.max(1, w - (w > 3 ? 1 : 0));
    data.cycles.forEach((cy, k) => {
      if (k + 1 < from || k + 1 > last) return;
      const x = (k + 1 - from) * w;
      ctx.fillStyle = RESULT_COLORS[cy.result] ?? "#9aa3af";
      const h = cy.kind === "Binding" ? 8 : cy.result === "Scheduled" ? 14 : 24;
      ctx.fillRect(x, STRIP_H - h, mw, h);
      if (cy.evictions?.length) {
        ctx.fillStyle = "#000";
        ctx.fillRect(x, 0, mw, MARKS_H - 2);
      } else if ((cy.attempt ?? 1) > 1) {
        ctx.fillStyle = "#8a94a3";
        ctx.fillRect(x, 1, mw, MARKS_H - 4);
      }
    });
    if (cursor >= from && cursor <= last) {
      ctx.fillStyle = "#000";
      ctx.fillRect((cursor - from + 0.5) * w - 1, 0, 2, STRIP_H);
    }
  }, [data, width, cursor, from, last]);
  const counts = useMemo(() => {
    const m = new Map<string, number>();
    for (const c of data.cycles) if (c.kind !== "Binding") m.set(c.result, (m.get(c.result) ?? 0) + 1);
    return [...m.entries()];
  }, [data]);
  const events = useMemo(() => {
    let preemptions = 0;
    let evicted = 0;
    let retries = 0;
    let bindings = 0;
    for (const c of data.cycles) {
      if (c.evictions?.length) {
        preemptions += 1;
        evicted += c.evictions.length;
      }
      if ((c.attempt ?? 1) > 1) retries += 1;
      if (c.kind === "Binding") bindings += 1;
    }
    return { preemptions, evicted, retries, bindings };
  }, [data]);
  const label =
    `Scheduling queue: ${counts.map(([r, n]) => `${n} ${r}`).join(", ")}; ` +
    `${plural(events.preemptions, "preemption")} evicting ${plural(events.evicted, "pod")}, ` +
    `${plural(events.retries, "retry", "retries")}, ${plural(events.bindings, "Permit wait")} ended`;
  return (
    <div>
      <canvas
        ref={canvas}
        style={{ width, height: STRIP_H, display: "block", cursor: "pointer" }}
        role="img"
        aria-label={label}
        data-preemptions={events.preemptions}
        data-retries={events.retries}
        onClick={(e) => {
          const rect = e.currentTarget.getBoundingClientRect();
          onPick(Math.max(from, Math.min(last, from + Math.floor(((e.clientX - rect.left) / rect.width) * (last - from + 1)))));
        }}
      />
      <div className="legend" style={{ marginTop: 4 }}>
        {counts.map(([r, n]) => (
          <span key={r}>
            <span className="swatch" style={{ background: RESULT_COLORS[r] ?? "#9aa3af", height: r === "Scheduled" ? 6 : 10 }} />
            {r} {n}
          </span>
        ))}
        <span className="muted">(tall marks: not placed)</span>
        {events.bindings ? <span>short marks: {plural(events.bindings, "Permit wait")} ended</span> : null}
        {events.preemptions ? (
          <span>
            <span className="swatch" style={{ background: "#000", height: 5 }} />
            preemptions {events.preemptions} ({plural(events.evicted, "pod")} evicted)
          </span>
        ) : null}
        {events.retries ? (
          <span>
            <span className="swatch" style={{ background: "#8a94a3", height: 3 }} />
            retries {events.retries}
          </span>
        ) : null}
      </div>
    </div>
  );
}

function LatencyChart({ plugins, width }: { plugins: PluginLatency[]; width: number }) {
  const rows = [...plugins].sort((a, b) => b.totalMicros - a.totalMicros).slice(0, 24);
  const max = Math.max(1, ...rows.map((r) => Math.max(r.meanMicros, r.p95Micros ?? 0)));
  const longest = Math.max(12, ...rows.map((r) => r.plugin.length + r.point.length + 3));
  const labelW = Math.min(340, Math.round(longest * 6.4) + 12);
  const barW = Math.max(120, width - labelW - 170);
  const rowH = 20;
  const height = rows.length * rowH + 24;
  const x = (v: number) => (v / max) * barW;
  return (
    <svg width={width} height={height} className="chart" role="img" aria-label="Per-plugin latency: mean and 95th percentile per call">
      <text x={labelW} y={12} fill="#5b6573">
        mean per call (bar), p95 (tick) · total time
      </text>
      {rows.map((r, k) => {
        const y = 20 + k * rowH;
        return (
          <g key={`${r.point}/${r.plugin}`} transform={`translate(0, ${y})`}>
            <text x={labelW - 8} y={12} textAnchor="end">
              {r.plugin} <tspan fill="#5b6573">({r.point})</tspan>
            </text>
            <rect x={labelW} y={3} width={Math.max(1, x(r.meanMicros))} height={11} fill="#56B4E9">
              <title>{`${r.point} ${r.plugin}: ${r.calls} calls, mean ${formatMicros(r.meanMicros)}${r.p95Micros ? `, p95 ${formatMicros(r.p95Micros)}` : ""}${r.maxMicros ? `, max ${formatMicros(r.maxMicros)}` : ""}`}</title>
            </rect>
            {r.p95Micros ? <rect x={labelW + x(r.p95Micros) - 1} y={1} width={2} height={15} fill="#14213d" /> : null}
            <text x={labelW + barW + 10} y={12}>
              {formatMicros(r.meanMicros)} · {formatMicros(r.totalMicros)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export function TimelinePage() {
  const { id = "" } = useParams();
  const [sp, setSp] = useSearchParams();
  const replay = useApi<Replay>(`/api/v1/replays/${id}/`);
  const r = replay.data;
  const nodes = useLoader<SnapshotNode[]>(r ? `tl-nodes-${r.snapshot}` : null, (signal) =>
    fetchAll<SnapshotNode>(`/api/v1/snapshots/${r?.snapshot}/nodes/`, { signal }),
  );
  const timeline = useLoader<TimelineData>(r ? `tl-${id}-${r.attempt}-${r.cycles_done}` : null, (signal) =>
    loadTimeline(id, r?.snapshot ?? "", signal),
  );
  const cycleCount = timeline.data?.cycles.length ?? 0;
  const latency = useLoader(timeline.data ? `lat-${id}-${cycleCount}` : null, (signal) => loadLatency(id, cycleCount, signal));
  const box = useRef<HTMLDivElement>(null);
  const width = useWidth(box, 900);
  const heatW = Math.max(300, width - 24);
  const resource = sp.get("resource") ?? "cpu";
  const cursor = Math.max(0, Math.min(cycleCount, Number.parseInt(sp.get("cycle") ?? String(cycleCount), 10) || 0));
  const setParam = (k: string, v: string) => {
    const next = new URLSearchParams(sp);
    next.set(k, v);
    setSp(next, { replace: true });
  };
  const [playing, setPlaying] = useState(false);
  useEffect(() => {
    if (!playing) return;
    const t = setInterval(() => {
      const cur = Number.parseInt(new URLSearchParams(window.location.search).get("cycle") ?? "0", 10) || 0;
      if (cur >= cycleCount) {
        setPlaying(false);
        return;
      }
      const next = new URLSearchParams(window.location.search);
      next.set("cycle", String(cur + 1));
      setSp(next, { replace: true });
    }, 400);
    return () => clearInterval(t);
  }, [playing, cycleCount, setSp]);

  const resources = useMemo(() => (nodes.data && timeline.data ? resourcesOf(nodes.data, timeline.data.cycles) : ["cpu", "memory", "pods"]), [nodes.data, timeline.data]);
  // at scale: nodes grouped (zone, instance type, pool) or sorted by utilisation, and a vertical zoom
  const groupBy = (GROUP_BY.some((g) => g.value === sp.get("group")) ? sp.get("group") : "snapshot") as GroupBy;
  const zoom = [1, 2, 4, 8].includes(Number(sp.get("zoom"))) ? Number(sp.get("zoom")) : 1;
  const maxRows = 210 * zoom;
  const relative = sp.get("scale") === "relative";
  const ordered = useMemo(() => {
    if (!nodes.data || !timeline.data) return null;
    let util: Float64Array | undefined;
    if (groupBy === "utilization") {
      const used = requestedAt(nodes.data, timeline.data.cycles, resource, timeline.data.cycles.length ? timeline.data.cycles[timeline.data.cycles.length - 1].seq : 0);
      util = Float64Array.from(nodes.data, (n, i) => ((n.allocatable[resource] ?? 0) > 0 ? used[i] / (n.allocatable[resource] ?? 1) : Number.NaN));
    }
    return orderNodes(nodes.data, groupBy, util);
  }, [nodes.data, timeline.data, groupBy, resource]);
  // a drag over the map zooms to its nodes and cycles: the map is made again for them alone, at full detail
  const [span, setSpan] = useState<{ nodes: [number, number]; cycles: [number, number] } | null>(null);
  // a new order of the nodes starts from the whole map (new cycles of a running replay keep the zoom)
  useEffect(() => setSpan(null), [nodes.data, groupBy, resource]);
  const view = useMemo(() => {
    if (!ordered) return null;
    const [a, b] = span?.nodes ?? [0, ordered.nodes.length];
    const groups = ordered.groups
      .map((g) => ({ ...g, start: Math.max(g.start, a) - a, count: Math.min(g.start + g.count, b) - Math.max(g.start, a) }))
      .filter((g) => g.count > 0);
    return { nodes: ordered.nodes.slice(a, b), groups, offset: a };
  }, [ordered, span]);
  const grouped = groupBy !== "snapshot" && groupBy !== "utilization" && !!view && view.groups.length > 1;
  const labelsW = 120;
  const matrix = useMemo(
    () =>
      view && timeline.data
        ? allocationMatrix(
            view.nodes,
            timeline.data.cycles,
            resource,
            Math.floor((heatW - labelsW) / 2),
            maxRows,
            groupBy === "snapshot" || groupBy === "utilization" ? undefined : view.groups,
            span ? { from: span.cycles[0], to: span.cycles[1] } : undefined,
          )
        : null,
    [view, timeline.data, resource, heatW, maxRows, groupBy, span],
  );
  const rowH = matrix ? Math.max(2, Math.min(16, Math.floor((420 * zoom) / matrix.rows))) : 8;
  const spanTo = matrix ? matrix.colCycle[matrix.colCycle.length - 1] : cycleCount;
  const spanFrom = span ? Math.min(span.cycles[0], spanTo) : 0;
  const zoomTo = (cells: CellRange) => {
    if (!matrix || !view) return;
    const first = matrix.rowNodes[cells.rows[0]];
    const lastRow = matrix.rowNodes[cells.rows[1] - 1];
    if (!first?.length || !lastRow?.length) return;
    const a = view.offset + first[0];
    const b = view.offset + lastRow[lastRow.length - 1] + 1;
    const from = cells.cols[0] === 0 ? spanFrom : matrix.colCycle[cells.cols[0] - 1] + 1;
    const to = matrix.colCycle[cells.cols[1] - 1];
    setSpan({ nodes: [a, b], cycles: [Math.min(from, to), to] });
  };
  // relative: the busiest cell of the map is the top of the colour scale (low utilisation stays readable)
  const peak = useMemo(() => {
    if (!matrix) return 1;
    let m = 0;
    for (const v of matrix.values) if (!Number.isNaN(v) && v > m) m = v;
    return m;
  }, [matrix]);
  const shown = useMemo(() => {
    if (!matrix || !relative || peak <= 0 || peak >= 1) return matrix?.values ?? new Float32Array();
    return matrix.values.map((v) => (Number.isNaN(v) ? v : v / peak));
  }, [matrix, relative, peak]);
  const showLabels = rowH >= 11 || grouped;
  const heatH = matrix ? matrix.rows * rowH : 200;
  const cursorCol = useMemo(() => {
    if (!matrix || cursor < spanFrom || cursor > spanTo) return null;
    const k = matrix.colCycle.findIndex((c) => c >= cursor);
    return k < 0 ? matrix.cols - 1 : k;
  }, [matrix, cursor, spanFrom, spanTo]);
  const atCursor = useMemo(() => {
    if (!nodes.data || !timeline.data) return [];
    const used = requestedAt(nodes.data, timeline.data.cycles, resource, cursor);
    return nodes.data
      .map((n, i) => ({ n, used: used[i], alloc: n.allocatable[resource] ?? 0 }))
      .sort((a, b) => (b.alloc ? b.used / b.alloc : 0) - (a.alloc ? a.used / a.alloc : 0))
      .slice(0, 10);
  }, [nodes.data, timeline.data, resource, cursor]);
  const current = timeline.data?.cycles.find((c) => c.seq === cursor) ?? null;

  if (replay.error) return <ErrorView error={replay.error} title="Could not load the replay" onRetry={replay.reload} />;
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <div className="crumbs">
            <Link to="/replays">Replays</Link> / <Link to={`/replays/${id}`}>{r?.name || id.slice(0, 8)}</Link> /
          </div>
          <h1>Cluster over time</h1>
          <p className="muted small">
            Requested {resourceLabel(resource).toLowerCase()} on every node as the replay places pods, cycle by cycle (columns), from the
            snapshot as uploaded (left) to the end of the replay (right).
          </p>
        </div>
      </div>
      <section className="panel" ref={box} aria-labelledby="heat-title">
        <div className="row" style={{ marginBottom: 8 }}>
          <h2 id="heat-title" style={{ margin: 0 }}>
            Allocation
          </h2>
          <div className="segmented" role="group" aria-label="Resource">
            {resources.map((res) => (
              <button key={res} type="button" aria-pressed={res === resource} onClick={() => setParam("resource", res)}>
                {resourceLabel(res)}
              </button>
            ))}
          </div>
          <span className="spacer" style={{ flex: 1 }} />
          <div className="segmented" role="group" aria-label="Colour scale">
            <button type="button" aria-pressed={!relative} onClick={() => setParam("scale", "absolute")}>
              0–100%
            </button>
            <button type="button" aria-pressed={relative} onClick={() => setParam("scale", "relative")} title="Scale colours to the busiest cell">
              Fit to busiest
            </button>
          </div>
          <label className="row small" style={{ gap: 4 }}>
            Rows
            <select value={groupBy} onChange={(e) => setParam("group", e.target.value)} aria-label="Group or sort the nodes">
              {GROUP_BY.map((g) => (
                <option key={g.value} value={g.value}>
                  {g.value === "utilization" ? "sorted by utilization" : g.value === "snapshot" ? "in snapshot order" : `grouped by ${g.label.toLowerCase()}`}
                </option>
              ))}
            </select>
          </label>
          <label className="row small" style={{ gap: 4 }}>
            Zoom
            <select value={zoom} onChange={(e) => setParam("zoom", e.target.value)} aria-label="Vertical zoom">
              {[1, 2, 4, 8].map((z) => (
                <option key={z} value={z}>
                  ×{z}
                </option>
              ))}
            </select>
          </label>
          {/* the colour scale and its ends wrap together on narrow screens */}
          <span className="row" style={{ gap: 8, flexWrap: "nowrap" }}>
            <span className="small muted">0%</span>
            <span className="colorscale" style={{ background: heatGradientCss() }} aria-hidden="true" />
            <span className="small muted">{relative && peak > 0 && peak < 1 ? formatPercent(peak * 100) : "100%"}</span>
            <span className="badge vermillion-strong" title="requested above allocatable">&gt;100%</span>
            <span className="badge outline">none allocatable</span>
          </span>
        </div>
        {nodes.error ? <ErrorView error={nodes.error} onRetry={nodes.reload} /> : null}
        {timeline.error ? <ErrorView error={timeline.error} onRetry={timeline.reload} /> : null}
        {!matrix || !timeline.data ? (
          !nodes.error && !timeline.error ? <Loading label="Loading the replay's timeline…" /> : null
        ) : (
          <>
            {timeline.data.source === "derived" ? (
              <p className="small muted">Built from the replay&apos;s cycles and the snapshot&apos;s pod requests.</p>
            ) : null}
            <div style={{ marginLeft: showLabels ? labelsW : 0 }}>
              <QueueStrip
                data={timeline.data}
                width={heatW - (showLabels ? labelsW : 0)}
                cursor={cursor}
                from={spanFrom}
                to={spanTo}
                onPick={(c) => setParam("cycle", String(c))}
              />
            </div>
            <div style={{ height: 6 }} />
            <div style={{ display: "flex", maxHeight: zoom > 1 ? 640 : undefined, overflowY: zoom > 1 ? "auto" : undefined }} data-testid="heatmap-scroll">
            {showLabels && grouped && view ? (
              <div style={{ width: labelsW, flex: "none", position: "relative", height: heatH }} aria-label="Node groups" role="list">
                {view.groups.map((g, k) => (
                  <div
                    key={g.label}
                    role="listitem"
                    className="ellipsis small"
                    title={`${g.label}: ${g.count} node${g.count === 1 ? "" : "s"}`}
                    data-group={g.label}
                    style={{ position: "absolute", top: matrix.groupRows[k] * rowH, right: 0, left: 0, paddingRight: 6, textAlign: "right", lineHeight: "14px" }}
                  >
                    {g.label} <span className="muted">({g.count})</span>
                  </div>
                ))}
              </div>
            ) : showLabels ? (
              <div aria-hidden="true" style={{ width: labelsW, flex: "none", paddingTop: 1 }}>
                {matrix.rowNodes.map((ns, k) => (
                  <div key={k} className="ellipsis" style={{ height: rowH, lineHeight: `${rowH}px`, fontSize: Math.min(11.5, rowH - 1), paddingRight: 6, textAlign: "right" }}>
                    {view?.nodes[ns[0]]?.name}
                  </div>
                ))}
              </div>
            ) : null}
            <Heatmap
              values={shown}
              rows={matrix.rows}
              cols={matrix.cols}
              width={heatW - (showLabels ? labelsW : 0)}
              height={heatH}
              cursor={cursorCol}
              separators={grouped ? matrix.groupRows : undefined}
              label={`${resourceLabel(resource)} allocation of ${nodes.data?.length} nodes over ${cycleCount} cycles`}
              onPickColumn={(col) => setParam("cycle", String(matrix.colCycle[col]))}
              colLabel={(col) => String(matrix.colCycle[col] ?? "")}
              onZoom={zoomTo}
              onResetZoom={() => setSpan(null)}
              describe={(row, col, v) => {
                const ns = matrix.rowNodes[row].map((i) => view?.nodes[i]?.name ?? "");
                const first = view?.nodes[matrix.rowNodes[row][0]];
                const group = groupBy !== "snapshot" && groupBy !== "utilization" && first ? `${groupOf(first, groupBy)} · ` : "";
                const who = group + (ns.length === 1 ? ns[0] : `${ns[0]} … ${ns[ns.length - 1]} (${ns.length} nodes, busiest)`);
                const c = matrix.colCycle[col];
                const real = matrix.values[row * matrix.cols + col];
                void v;
                return `${who} · after cycle ${c}: ${Number.isNaN(real) ? "none allocatable" : formatPercent(real * 100)}`;
              }}
            />
            </div>
            <div className="heatmap-zoom small" data-testid="heatmap-zoom" data-zoomed={span ? "true" : "false"} style={{ marginTop: 4 }}>
              {span && view ? (
                <>
                  <span>
                    Zoomed to {view.nodes.length === 1 ? `node ${view.nodes[0].name}` : `nodes ${span.nodes[0] + 1}–${span.nodes[1]} of ${ordered?.nodes.length}`},{" "}
                    {spanFrom === spanTo ? `after cycle ${spanFrom}` : `cycles ${spanFrom}–${spanTo}`}
                  </span>
                  <button type="button" onClick={() => setSpan(null)}>
                    Show all
                  </button>
                </>
              ) : (
                <span className="muted">Drag over the map to zoom to its nodes and cycles (or + on the cell read with the arrow keys); double-click or - to show all again.</span>
              )}
            </div>
            <div className="playback" style={{ marginTop: 8 }} role="group" aria-label="Cycle cursor">
              <button type="button" onClick={() => setPlaying((p) => !p)} aria-label={playing ? "Pause" : "Play the cursor through the cycles"}>
                {playing ? "‖ Pause" : "▶ Play"}
              </button>
              <input
                type="range"
                min={0}
                max={cycleCount}
                value={cursor}
                onChange={(e) => setParam("cycle", e.target.value)}
                aria-label="Cycle"
                aria-valuetext={cursor === 0 ? "before the first cycle" : `after cycle ${cursor}`}
              />
              <span className="small nowrap">{cursor === 0 ? "before the first cycle" : `after cycle ${cursor} of ${cycleCount}`}</span>
            </div>
          </>
        )}
      </section>
      {matrix && timeline.data ? (
        <div className="grid-2">
          <section className="panel" aria-labelledby="cur-title">
            <h2 id="cur-title">{cursor === 0 ? "Before the replay" : `Cycle ${cursor}`}</h2>
            {current ? (
              <p>
                <Link className="mono" to={`/replays/${id}/cycles/${current.seq}`}>
                  {current.pod}
                </Link>{" "}
                <ResultBadge result={current.result} /> {current.node ? `→ ${current.node}` : ""}{" "}
                <span className="small muted">
                  {Object.entries(current.requests)
                    .map(([k, v]) => `${k} ${formatAmount(k, v)}`)
                    .join(", ")}
                </span>
              </p>
            ) : null}
            <h3>Busiest nodes ({resourceLabel(resource).toLowerCase()})</h3>
            <table className="data">
              <tbody>
                {atCursor.map(({ n, used, alloc }) => (
                  <tr key={n.name}>
                    <td className="small">{n.name}</td>
                    <td style={{ width: "55%" }}>
                      <UsageBar used={used} total={alloc || undefined} resource={resource} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section className="panel" aria-labelledby="lat-title">
            <h2 id="lat-title">Per-plugin latency</h2>
            <p className="small muted" data-testid="latency-note">
              Time spent in SchedViz&apos;s own engine (Python) on this server, per plugin call: it says which plugins cost the replay most,
              not how fast kube-scheduler (Go) runs them. The replay&apos;s first cycle, which builds the indexes plugins fill on first use,
              is left out.
            </p>
            {latency.error ? (
              <ErrorView error={latency.error} onRetry={latency.reload} />
            ) : !latency.data ? (
              <Loading label="Loading latency…" />
            ) : latency.data.plugins.length === 0 ? (
              <p className="muted">No plugin timings recorded.</p>
            ) : (
              <>
                {latency.data.source === "sampled" ? (
                  <p className="small muted">Estimated from the stage timings of {latency.data.sampledCycles} cycles.</p>
                ) : null}
                <div style={{ overflowX: "auto" }}>
                  <LatencyChart plugins={latency.data.plugins} width={Math.max(520, Math.floor(width / 2) - 40)} />
                </div>
              </>
            )}
          </section>
        </div>
      ) : null}
    </div>
  );
}
