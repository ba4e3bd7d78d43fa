import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useCallback, useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { pluginColor, shortPluginName } from "../lib/colors";
import {
  applyQuery,
  type LabelIndex,
  rejectingPlugins,
  SCORE_MODES,
  type NodeRow,
  type ScoreMode,
  type SortKey,
  type TableQuery,
} from "../lib/nodes";
import { VerdictBadge } from "./Badges";
import { ScoreBar, StackedScore } from "./Bars";
import "./cycle.css";

export interface NodeTableProps {
  rows: NodeRow[];
  scorePlugins: string[];
  weights: Record<string, number>;
  skipped?: string[];
  query: TableQuery;
  onQueryChange: (q: TableQuery) => void;
  /** The node chosen by the user (in the URL). */
  selected: string | null;
  onSelect: (name: string) => void;
  winner?: string | null;
  tied?: string[];
  /** Streamed cycles carry scores for the top-K nodes only. */
  partialScores?: boolean;
  height?: number | string;
  /** A node to mark with `label` (e.g. the node a live cluster chose). */
  mark?: { node: string; label: string } | null;
  /** The nodes' labels, for the search ("zone-b", "pool=gpu"); names only without them. */
  labels?: LabelIndex;
}

/** The pinned columns' widths (px): rank (up to five digits), node, verdict on the left, the total on the right. */
const PIN = { rank: 52, node: 180, verdict: 168, total: 132 };
const PIN_LEFT = { rank: 0, node: PIN.rank, verdict: PIN.rank + PIN.node };

const ROW_HEIGHT = 30;
const MODE_TEXT: Record<ScoreMode, string> = { raw: "Raw", normalized: "Normalized", weighted: "Weighted" };

interface NodeTableRowProps {
  row: NodeRow;
  index: number;
  top: number;
  rowId: string;
  columns: string;
  active: boolean;
  selected: boolean;
  winner: boolean;
  tied: boolean;
  markLabel: string | null;
  scorePlugins: string[];
  weights: Record<string, number>;
  mode: ScoreMode;
  rawMax: Record<string, number>;
  totalMax: number;
  partialScores: boolean;
  onRowClick: (index: number, name: string) => void;
}

/** One row of the grid; re-rendered only when what it shows changes. */
const NodeTableRow = memo(function NodeTableRow(p: NodeTableRowProps) {
  const { row: r, scorePlugins, weights } = p;
  const scored = scorePlugins.length > 0;
  const cls = ["vrow", p.active ? "active" : "", p.selected ? "selected" : "", p.winner ? "winner" : "", p.markLabel !== null ? "marked" : ""].join(" ");
  const reasons = r.reasons.join("; ");
  return (
    <div
      id={p.rowId}
      role="row"
      aria-rowindex={p.index + 1}
      aria-selected={p.selected}
      className={cls}
      style={{ top: p.top, height: ROW_HEIGHT, gridTemplateColumns: p.columns }}
      onClick={() => p.onRowClick(p.index, r.name)}
      data-node={r.name}
    >
      <div role="gridcell" className="cell num pin-l" style={{ left: PIN_LEFT.rank }}>
        {r.rank}
      </div>
      <div role="gridcell" className="cell pin-l" style={{ left: PIN_LEFT.node }} title={r.name}>
        {p.winner ? (
          <span className="marker win" title="selected: the pod was placed here">
            <span aria-hidden="true">★</span>
            <span className="sr-only">selected</span>
          </span>
        ) : p.tied ? (
          <span className="marker tie" title="tied for the best total score">
            <span aria-hidden="true">=</span>
            <span className="sr-only">tied</span>
          </span>
        ) : null}
        {p.markLabel !== null ? (
          <span className="marker mark" title={p.markLabel}>
            <span aria-hidden="true">◆</span>
            <span className="sr-only">{p.markLabel}</span>
          </span>
        ) : null}
        {r.name}
      </div>
      <div role="gridcell" className="cell pin-l pin-edge" style={{ left: PIN_LEFT.verdict }}>
        <VerdictBadge row={r} />
      </div>
      <div role="gridcell" className="cell reason" title={reasons}>
        {reasons}
      </div>
      {scorePlugins.map((plugin, k) => (
        <div role="gridcell" className="cell" key={plugin}>
          {r.verdict === "passed" ? (
            <ScoreBar
              cell={r.scores?.[plugin]}
              mode={p.mode}
              plugin={plugin}
              weight={weights[plugin] ?? 1}
              rawMax={p.rawMax[plugin] ?? 0}
              color={pluginColor(k)}
            />
          ) : null}
        </div>
      ))}
      {scored ? (
        <div role="gridcell" className="cell pin-r" style={{ display: "flex", gap: 6, alignItems: "center" }}>
          {r.total !== null ? (
            <>
              <StackedScore scores={r.scores} plugins={scorePlugins} max={p.totalMax} />
              <span className="num" style={{ minWidth: 32 }}>
                {r.total}
              </span>
            </>
          ) : r.verdict === "passed" ? (
            <span className="muted small">{p.partialScores ? "not streamed" : "–"}</span>
          ) : null}
        </div>
      ) : null}
    </div>
  );
});

export function NodeTable(props: NodeTableProps) {
  const { rows, scorePlugins, weights, query, onQueryChange, selected, onSelect, winner, tied = [] } = props;
  const { labels } = props;
  const shown = useMemo(() => applyQuery(rows, query, labels), [rows, query, labels]);
  const plugins = useMemo(() => rejectingPlugins(rows), [rows]);
  // the bars' scales: one pass over the scored rows (a streamed cycle scores its top K only)
  const { rawMax, totalMax } = useMemo(() => {
    const raw: Record<string, number> = {};
    for (const p of scorePlugins) raw[p] = 0;
    let total = 0;
    for (const r of rows) {
      if (r.total !== null && r.total > total) total = r.total;
      const s = r.scores;
      if (!s) continue;
      for (const p of scorePlugins) {
        const v = Math.abs(s[p]?.raw ?? 0);
        if (v > raw[p]) raw[p] = v;
      }
    }
    return { rawMax: raw, totalMax: total };
  }, [rows, scorePlugins]);
  const tiedSet = useMemo(() => new Set(tied), [tied]);
  const gridId = useId();
  const bodyRef = useRef<HTMLDivElement>(null);
  const headRef = useRef<HTMLDivElement>(null);
  const [active, setActive] = useState(0);
  // the rows' click handler stays the same function, so that rows whose content did not change are not re-rendered
  const onSelectRef = useRef(onSelect);
  onSelectRef.current = onSelect;
  const onRowClick = useCallback((index: number, name: string) => {
    setActive(index);
    onSelectRef.current(name);
    bodyRef.current?.focus({ preventScroll: true });
  }, []);

  // keep the active row on the selected node when it is in view, else clamp it
  useEffect(() => {
    const k = selected ? shown.findIndex((r) => r.name === selected) : -1;
    if (k >= 0) setActive(k);
    else setActive((a) => Math.min(a, Math.max(0, shown.length - 1)));
  }, [shown, selected]);

  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => bodyRef.current,
    estimateSize: () => ROW_HEIGHT,
    // rows are cheap to add while scrolling; every row rendered costs time when a new cycle arrives
    overscan: 4,
    initialRect: { width: 1000, height: 480 },
  });

  const scored = scorePlugins.length > 0;
  // Rank, node and verdict are pinned on the left and the total on the right: they stay in view while
  // the reason and the per-plugin scores scroll between them.
  const REASON_MIN = 260;
  const PLUGIN_MIN = 88;
  const columns = [
    `${PIN.rank}px`,
    `${PIN.node}px`,
    `${PIN.verdict}px`,
    scored ? `minmax(${REASON_MIN}px, 2fr)` : `minmax(${REASON_MIN}px, 1fr)`,
    ...scorePlugins.map(() => `minmax(${PLUGIN_MIN}px, 1fr)`),
    ...(scored ? [`${PIN.total}px`] : []),
  ].join(" ");
  const minWidth = PIN.rank + PIN.node + PIN.verdict + REASON_MIN + scorePlugins.length * PLUGIN_MIN + (scored ? PIN.total : 0);

  const setSort = (key: SortKey) => {
    onQueryChange({ ...query, sort: key, desc: query.sort === key ? !query.desc : false });
  };
  const ariaSort = (key: SortKey): "ascending" | "descending" | "none" =>
    query.sort === key ? (query.desc ? "descending" : "ascending") : "none";

  const move = (to: number) => {
    if (!shown.length) return;
    const k = Math.max(0, Math.min(shown.length - 1, to));
    setActive(k);
    virtualizer.scrollToIndex(k, { align: "auto" });
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((bodyRef.current?.clientHeight ?? 300) / ROW_HEIGHT) - 1);
    switch (e.key) {
      case "ArrowDown":
        move(active + 1);
        break;
      case "ArrowUp":
        move(active - 1);
        break;
      case "PageDown":
        move(active + page);
        break;
      case "PageUp":
        move(active - page);
        break;
      case "Home":
        move(0);
        break;
      case "End":
        move(shown.length - 1);
        break;
      case "Enter":
      case " ":
        if (shown[active]) onSelect(shown[active].name);
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  const header = (key: SortKey, label: string, cls = "", title?: string, swatch?: string, pin?: { cls: string; left?: number }) => (
    <div role="columnheader" aria-sort={ariaSort(key)} className={`cell${pin ? ` ${pin.cls}` : ""}`} style={pin?.left !== undefined ? { left: pin.left } : undefined} key={key}>
      <button
        type="button"
        className={cls}
        data-sorted={query.sort === key}
        onClick={() => setSort(key)}
        title={title ?? `Sort by ${label}`}
        aria-label={title ?? `Sort by ${label}`}
      >
        {swatch ? <span className="swatch" style={{ background: swatch, display: "inline-block", width: 8, height: 8, borderRadius: 2, marginRight: 4 }} aria-hidden="true" /> : null}
        {label}
        {query.sort === key ? <span aria-hidden="true">{query.desc ? " ▼" : " ▲"}</span> : null}
      </button>
    </div>
  );

  const activeRow = shown[active];
  return (
    <div className="node-table">
      <div className="toolbar" role="group" aria-label="Node table filters">
        <input
          type="search"
          placeholder={labels ? "Name or label: zone-b, pool=gpu" : "Search nodes…"}
          aria-label={labels ? "Search nodes by name or label" : "Search nodes by name"}
          title="Every word must be in the node's name or one of its labels (key=value)"
          value={query.search}
          onChange={(e) => onQueryChange({ ...query, search: e.target.value })}
          style={{ width: 250 }}
        />
        <select
          aria-label="Filter by verdict"
          value={query.verdict}
          onChange={(e) => onQueryChange({ ...query, verdict: e.target.value as TableQuery["verdict"] })}
        >
          <option value="">All verdicts</option>
          <option value="passed">Passed</option>
          <option value="failed">Rejected</option>
          <option value="not-evaluated">Not evaluated</option>
        </select>
        <select
          aria-label="Filter by rejecting plugin"
          value={query.plugin}
          onChange={(e) => onQueryChange({ ...query, plugin: e.target.value })}
          disabled={!plugins.length && !query.plugin}
        >
          <option value="">Any rejecting plugin</option>
          {plugins.map(([p, n]) => (
            <option key={p} value={p}>
              {p || "(PreFilter)"} ({n})
            </option>
          ))}
          {query.plugin && !plugins.some(([p]) => p === query.plugin) ? <option value={query.plugin}>{query.plugin} (0)</option> : null}
        </select>
        {scored ? (
          <div className="segmented" role="group" aria-label="Score mode">
            {SCORE_MODES.map((m) => (
              <button key={m} type="button" aria-pressed={query.mode === m} onClick={() => onQueryChange({ ...query, mode: m })}>
                {MODE_TEXT[m]}
              </button>
            ))}
          </div>
        ) : null}
        <span className="spacer" />
        <span className="small muted" aria-live="polite">
          {shown.length === rows.length
            ? `${rows.length.toLocaleString()} nodes`
            : `${shown.length.toLocaleString()} of ${rows.length.toLocaleString()} nodes`}
        </span>
      </div>
      {scored ? (
        <div className="legend small" style={{ marginBottom: 6 }} aria-label="Score plugins and weights">
          {scorePlugins.map((p, k) => (
            <span key={p} title={`column "${shortPluginName(p)}": the ${p} score plugin, weight ${weights[p] ?? 1}`}>
              <span className="swatch" style={{ background: pluginColor(k) }} />
              {shortPluginName(p) !== p ? (
                <>
                  <strong>{shortPluginName(p)}</strong> {p}
                </>
              ) : (
                <strong>{p}</strong>
              )}{" "}
              ×{weights[p] ?? 1}
            </span>
          ))}
          {props.skipped?.length ? <span className="muted">skipped at PreScore: {props.skipped.join(", ")}</span> : null}
          {props.partialScores ? <span className="muted">scores streamed for the top-ranked nodes only</span> : null}
        </div>
      ) : null}
      <div className="vgrid" style={{ height: props.height ?? 420 }}>
        <div
          ref={headRef}
          className="vhead-wrap"
          onScroll={(e) => {
            // the header scrolls too when one of its buttons gets the focus (Tab): the rows follow it
            if (bodyRef.current && bodyRef.current.scrollLeft !== e.currentTarget.scrollLeft) bodyRef.current.scrollLeft = e.currentTarget.scrollLeft;
          }}
        >
          <div className="vhead" role="row" style={{ gridTemplateColumns: columns, minWidth }}>
            {header("rank", "#", "num", "Sort by rank (best first)", undefined, { cls: "pin-l", left: PIN_LEFT.rank })}
            {header("name", "Node", "", undefined, undefined, { cls: "pin-l", left: PIN_LEFT.node })}
            {header("verdict", "Verdict", "", undefined, undefined, { cls: "pin-l pin-edge", left: PIN_LEFT.verdict })}
            <div role="columnheader" className="cell">
              Reason
            </div>
            {scorePlugins.map((p, k) =>
              header(
                `score:${p}`,
                shortPluginName(p),
                "num",
                `Sort by ${p} (${MODE_TEXT[query.mode].toLowerCase()} score, best first)`,
                pluginColor(k),
              ),
            )}
            {scored ? header("total", "Total", "num", "Sort by total score (best first)", undefined, { cls: "pin-r" }) : null}
          </div>
        </div>
        <div
          ref={bodyRef}
          className="vbody"
          role="grid"
          aria-label="Nodes of this cycle"
          aria-rowcount={shown.length}
          aria-activedescendant={activeRow ? `${gridId}-r${active}` : undefined}
          tabIndex={0}
          onKeyDown={onKeyDown}
          onScroll={(e) => {
            if (headRef.current) headRef.current.scrollLeft = e.currentTarget.scrollLeft;
          }}
        >
          {shown.length === 0 ? (
            <div className="empty">No node matches these filters.</div>
          ) : (
            <div style={{ height: virtualizer.getTotalSize(), position: "relative", minWidth }}>
              {virtualizer.getVirtualItems().map((v) => {
                const r = shown[v.index];
                return (
                  <NodeTableRow
                    // rows are keyed by their slot: a new cycle updates the rows on screen in place
                    key={v.index}
                    row={r}
                    index={v.index}
                    top={v.start}
                    rowId={`${gridId}-r${v.index}`}
                    columns={columns}
                    active={v.index === active}
                    selected={r.name === selected}
                    winner={r.name === winner}
                    tied={tiedSet.has(r.name)}
                    markLabel={props.mark && r.name === props.mark.node ? props.mark.label : null}
                    scorePlugins={scorePlugins}
                    weights={weights}
                    mode={query.mode}
                    rawMax={rawMax}
                    totalMax={totalMax}
                    partialScores={!!props.partialScores}
                    onRowClick={onRowClick}
                  />
                );
              })}
            </div>
          )}
        </div>
      </div>
      <VerdictLegend />
      <p className="small muted" style={{ margin: "4px 0 0" }}>
        Keyboard: focus the table, ↑/↓ (PageUp/PageDown, Home/End) to move, Enter or Space to open a node.
      </p>
    </div>
  );
}

/** What the verdict badges mean (kube-scheduler's filter status codes). */
export function VerdictLegend() {
  return (
    <ul className="verdict-legend small" aria-label="Verdicts">
      <li>
        <VerdictBadge row={{ verdict: "passed", code: "Success", plugin: "" }} /> passed every filter
      </li>
      <li>
        <VerdictBadge row={{ verdict: "failed", code: "Unschedulable", plugin: "Plugin" }} /> <strong>Unschedulable</strong>: rejected by that
        plugin; preemption may free room
      </li>
      <li>
        <VerdictBadge row={{ verdict: "failed", code: "UnschedulableAndUnresolvable", plugin: "Plugin" }} />{" "}
        <strong>UnschedulableAndUnresolvable</strong>: rejected; preempting pods cannot help
      </li>
      <li>
        <VerdictBadge row={{ verdict: "not-evaluated", code: "", plugin: "" }} /> not judged: node sampling had found enough feasible nodes
      </li>
    </ul>
  );
}
