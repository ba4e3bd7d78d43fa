import { memo, useState } from "react";
import { Link } from "react-router-dom";
import { AGREEMENTS, liveCyclePath, mainExplanation, outcomeText, type Decision, type DecisionFilter } from "../api/live";
import { formatDate } from "../lib/format";
import { ResultBadge } from "./Badges";
import { AgreementBadge, CodeChip } from "./LiveBadges";

const PAGE = 200;

function time(iso: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
}

const DecisionRow = memo(function DecisionRow({ d, clusterId, streamed }: { d: Decision; clusterId: string; streamed: boolean }) {
  const differs = d.agreement !== "match" && d.actual.node !== d.replay.node;
  const why = mainExplanation(d);
  return (
    <tr data-seq={d.seq} data-agreement={d.agreement} data-source={streamed ? "stream" : "rest"} className={`decision ${d.agreement}${streamed ? " streamed" : ""}`}>
      <td className="num" title={streamed ? "arrived while this page was open" : undefined}>
        <Link to={liveCyclePath(clusterId, d.seq)} aria-label={`Cycle ${d.seq}: ${d.pod}, ${d.agreement}${streamed ? ", new" : ""}`}>
          {d.seq}
        </Link>
      </td>
      <td className="pod-cell">
        <div className="mono ellipsis" title={d.pod}>
          {d.pod}
        </div>
        <div className="small muted nowrap" title={d.observed ? formatDate(d.observed) : undefined}>
          {d.trigger}
          {d.triggerSource && d.triggerSource !== "pod" ? ` (${d.triggerSource})` : ""} · {time(d.observed)}
        </div>
      </td>
      <td className="node-cell" data-side="cluster">
        {d.actual.node ? (
          <span className={`mono${differs ? " differs" : ""}`}>{d.actual.node}</span>
        ) : (
          <ResultBadge result={d.actual.result || "Unknown"} />
        )}
      </td>
      <td className="node-cell" data-side="replay">
        {d.replay.node ? (
          <span className={`mono${differs ? " differs" : ""}`}>{d.replay.node}</span>
        ) : d.replay.result ? (
          <ResultBadge result={d.replay.result} />
        ) : (
          <span className="muted">{outcomeText(d.replay.result, d.replay.node)}</span>
        )}
      </td>
      <td>
        <div className="row" style={{ gap: 4 }}>
          <AgreementBadge agreement={d.agreement} />
          {d.divergence ? <CodeChip code={d.divergence} /> : null}
        </div>
        {!d.exact || d.gap ? (
          <div className="small muted">
            {!d.exact ? "not exact" : ""}
            {!d.exact && d.gap ? " · " : ""}
            {d.gap ? "after a gap" : ""}
          </div>
        ) : null}
      </td>
      <td className="why small" title={why}>
        <div className="clamp">{why}</div>
      </td>
    </tr>
  );
});

export interface DecisionListProps {
  clusterId: string;
  decisions: Decision[];
  /** Seqs above this came over the websocket while the page was open. */
  streamedAfter: number;
  filter: DecisionFilter;
  onFilterChange: (f: DecisionFilter) => void;
  namespaces: string[];
  codes: string[];
  /** Older decisions from the API: loading them, whether more remain. */
  olderLoading: boolean;
  hasOlder: boolean;
  onLoadOlder: () => void;
  total: number | null;
}

export function DecisionList(props: DecisionListProps) {
  const { decisions, filter, onFilterChange } = props;
  const [limit, setLimit] = useState(PAGE);
  const shown = decisions.slice(0, limit);
  const set = (patch: Partial<DecisionFilter>) => onFilterChange({ ...filter, ...patch });
  const filtered = !!(filter.agreement || filter.namespace || filter.divergence || filter.search);
  return (
    <div className="decisions">
      <div className="toolbar" role="group" aria-label="Filter the decisions">
        <select aria-label="Filter by agreement" value={filter.agreement} onChange={(e) => set({ agreement: e.target.value })}>
          <option value="">Any agreement</option>
          {AGREEMENTS.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <select aria-label="Filter by explanation" value={filter.divergence} onChange={(e) => set({ divergence: e.target.value })}>
          <option value="">Any explanation</option>
          {props.codes.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
        <select aria-label="Filter by namespace" value={filter.namespace} onChange={(e) => set({ namespace: e.target.value })}>
          <option value="">All namespaces</option>
          {props.namespaces.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
        <input
          type="search"
          placeholder="Search pods or nodes…"
          aria-label="Search the decisions by pod or node"
          value={filter.search}
          onChange={(e) => set({ search: e.target.value })}
          style={{ width: 180 }}
        />
        {filtered ? (
          <button type="button" className="small" onClick={() => onFilterChange({ agreement: "", namespace: "", divergence: "", search: "" })}>
            Clear
          </button>
        ) : null}
        <span className="spacer" />
        <span className="small muted" aria-live="polite">
          {decisions.length.toLocaleString()} shown
          {props.total !== null ? ` of ${props.total.toLocaleString()}${filtered && !filter.search ? " matching" : ""}` : ""}
        </span>
      </div>
      <div className="table-wrap decisions-wrap">
        <table className="data decisions-table" aria-label="Decisions, newest first">
          <colgroup>
            <col style={{ width: 44 }} />
            <col />
            <col style={{ width: "16%" }} />
            <col style={{ width: "16%" }} />
            <col style={{ width: 112 }} />
            <col style={{ width: "28%" }} />
          </colgroup>
          <thead>
            <tr>
              <th className="num">#</th>
              <th>Pod</th>
              <th>Cluster chose</th>
              <th>Replay chose</th>
              <th>Agreement</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((d) => (
              <DecisionRow key={d.seq} d={d} clusterId={props.clusterId} streamed={d.seq > props.streamedAfter} />
            ))}
          </tbody>
        </table>
        {decisions.length === 0 && !props.olderLoading ? (
          <div className="empty">{filtered ? "No decision matches these filters." : "No decision yet: they appear here as the cluster makes them."}</div>
        ) : null}
      </div>
      <div className="row" style={{ marginTop: 8 }}>
        {decisions.length > limit ? (
          <button type="button" className="small" onClick={() => setLimit((l) => l + PAGE)}>
            Show {Math.min(PAGE, decisions.length - limit)} more
          </button>
        ) : props.hasOlder ? (
          <button type="button" className="small" onClick={props.onLoadOlder} disabled={props.olderLoading}>
            {props.olderLoading ? "Loading…" : "Load older decisions"}
          </button>
        ) : decisions.length ? (
          <span className="small muted">{props.olderLoading ? "Loading…" : "That is every decision."}</span>
        ) : null}
        {filter.search ? <span className="small muted">The search looks through the decisions loaded on this page.</span> : null}
      </div>
    </div>
  );
}
