import { useCallback, useEffect, useMemo, useState } from "react";
import { Link } from "react-router-dom";
import { ApiError, api, fetchAll } from "../api/client";
import type { CycleDetail, CycleNode, CyclePod, SnapshotNode } from "../api/types";
import { useApi, useLoader } from "../api/useApi";
import { ResultBadge } from "../components/Badges";
import { ErrorView, Loading } from "../components/Feedback";
import { NodeDrawer } from "../components/NodeDrawer";
import { NodeTable } from "../components/NodeTable";
import { PodSpecSummary } from "../components/PodSpec";
import { StageTimeline } from "../components/StageTimeline";
import { modelFromLive, modelFromRest, type CycleModel } from "../lib/cycleModel";
import { labelIndex, rejectingPlugins, type LabelIndex, type TableQuery } from "../lib/nodes";
import type { LiveCycle } from "../stream/liveState";

const NODE_PAGE = 1000;

export async function loadCycle(replayId: string, seq: number, signal?: AbortSignal): Promise<CycleModel> {
  const { first, nodes } = await loadCyclePages<CycleDetail>(`/api/v1/replays/${replayId}/cycles/${seq}/`, signal);
  return modelFromRest(first, nodes);
}

/** A cycle page (a replay's, or a live cluster's with its `live` block) with every node, page by page. */
export async function loadCyclePages<T extends CycleDetail>(base: string, signal?: AbortSignal): Promise<{ first: T; nodes: CycleNode[] }> {
  const first = await api.get<T>(`${base}?page_size=${NODE_PAGE}&page=1`, { signal });
  const nodes: CycleNode[] = [...first.nodes.results];
  const pages = Math.ceil(first.nodes.count / NODE_PAGE);
  const rest = [];
  for (let p = 2; p <= pages; p++) rest.push(p);
  const more = await Promise.all(rest.map((p) => api.get<CycleDetail>(`${base}?page_size=${NODE_PAGE}&page=${p}`, { signal })));
  for (const m of more) nodes.push(...m.nodes.results);
  return { first, nodes };
}

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

export function podPath(replayId: string, pod: string): string {
  const [ns, ...rest] = pod.split("/");
  return `/replays/${replayId}/pods/${encodeURIComponent(ns)}/${encodeURIComponent(rest.join("/"))}`;
}

function Outcome({ m, explainPath }: { m: CycleModel; explainPath: ExplainPath }) {
  const candidates = m.postFilter?.candidates ?? [];
  return (
    <div className="stack">
      {m.result === "Scheduled" || m.result === "Waiting" ? (
        <p style={{ margin: 0 }}>
          {m.result === "Waiting" ? "Held at Permit on " : "Placed on "}
          <strong>{m.selectedNode}</strong>
          {m.winnerTotal !== null ? ` with a total score of ${m.winnerTotal}` : " (the only feasible node: scoring was not needed)"}
          {m.tiedCount > 1 ? (
            <span className="muted">
              {" "}
              · tied with {m.tiedCount - 1} other node{m.tiedCount > 2 ? "s" : ""} ({m.tiedNodes.filter((t) => t !== m.selectedNode).slice(0, 5).join(", ")}
              {m.tiedCount > 6 ? ", …" : ""}): the first in snapshot order wins
            </span>
          ) : null}
        </p>
      ) : null}
      {m.message && m.result !== "Scheduled" ? (
        <div>
          <div className="small muted">{m.result === "Unschedulable" ? "kube-scheduler's message" : "Message"}</div>
          <div className="message">{m.message}</div>
        </div>
      ) : null}
      {m.error ? (
        <div>
          <div className="small muted">Error</div>
          <div className="message">{m.error}</div>
        </div>
      ) : null}
      {m.nominatedNode ? (
        <p style={{ margin: 0 }}>
          Preemption nominated <strong>{m.nominatedNode}</strong>
          {m.victims.length ? `, evicting ${m.victims.length} pod${m.victims.length > 1 ? "s" : ""}:` : "."}
        </p>
      ) : null}
      {m.victims.length ? (
        <ul className="small mono" aria-label="Preemption victims" style={{ margin: 0 }}>
          {m.victims.map((v) => (
            <li key={v}>{v}</li>
          ))}
        </ul>
      ) : null}
      {candidates.length > 1 ? (
        <details>
          <summary className="small">{candidates.length} preemption candidates</summary>
          <table className="data">
            <thead>
              <tr>
                <th>Node</th>
                <th>Victims</th>
                <th className="num">PDB violations</th>
              </tr>
            </thead>
            <tbody>
              {candidates.map((c) => (
                <tr key={c.node}>
                  <td>{c.node}</td>
                  <td className="small mono">{c.victims.join(", ")}</td>
                  <td className="num">{c.pdbViolations}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
      {m.result === "Unschedulable" || m.result === "Scheduled" ? (
        <p className="small" style={{ margin: 0 }}>
          <Link to={explainPath(null)}>{m.result === "Unschedulable" ? "What would make it fit?" : "Why here?"}</Link>
        </p>
      ) : null}
    </div>
  );
}

/** Where the Why here? page of this cycle's pod is, comparing with `node` when given. */
type ExplainPath = (node: string | null) => string;

export interface CycleViewProps {
  replayId: string;
  seq: number;
  /** The streamed cycle, when the stream has this one. */
  live: LiveCycle | null;
  names: string[];
  /** Load the full detail over REST (off while a replay streams quickly). */
  fetchDetail: boolean;
  query: TableQuery;
  onQueryChange: (q: TableQuery) => void;
  selectedNode: string | null;
  onSelectNode: (name: string | null) => void;
  animate?: boolean;
  tableHeight?: number | string;
  /** How long the shown cycle must stay before its REST detail is fetched (ms). */
  detailDelay?: number;
  /** A cycle the caller loaded (a live cluster's): shown as is, nothing is fetched. */
  model?: CycleModel | null;
  /** Where Why here? links go (default: the replay's pod page). */
  explainPath?: ExplainPath;
  /** A node to mark in the node table (e.g. the one a live cluster chose). */
  mark?: { node: string; label: string } | null;
  /** The replay's snapshot: its nodes' labels make the node search find labels too. */
  snapshotId?: string | null;
}

/** The labels of a snapshot's nodes, for the node search (loaded once per snapshot). */
export function useNodeLabels(snapshotId: string | null | undefined): LabelIndex | undefined {
  const nodes = useLoader<LabelIndex>(snapshotId ? `labels-${snapshotId}` : null, async (signal) =>
    labelIndex(await fetchAll<SnapshotNode>(`/api/v1/snapshots/${snapshotId}/nodes/`, { signal })),
  );
  return nodes.data;
}

export function CycleView(props: CycleViewProps) {
  const { replayId, seq, live, names, fetchDetail } = props;
  const key = useDebounced(fetchDetail && !props.model ? `${replayId}/${seq}` : null, live ? (props.detailDelay ?? 250) : 0);
  const detail = useLoader<CycleModel>(key, (signal) => loadCycle(replayId, seq, signal));
  const liveModel = useMemo(() => (live && live.seq === seq ? modelFromLive(live, names) : null), [live, seq, names]);
  const restModel = detail.data && detail.data.seq === seq ? detail.data : null;
  const m = props.model ?? restModel ?? liveModel;
  const explainPath: ExplainPath =
    props.explainPath ?? ((node) => `${podPath(replayId, m?.pod ?? "")}${node ? `?node=${encodeURIComponent(node)}` : ""}`);
  const selectedRow = useMemo(() => (m && props.selectedNode ? (m.rows.find((r) => r.name === props.selectedNode) ?? null) : null), [m, props.selectedNode]);
  const labels = useNodeLabels(props.snapshotId);
  const podSpec = useApi<CyclePod>(key && !props.model ? `/api/v1/replays/${replayId}/cycles/${seq}/pod/` : null);
  const filterRejections = useMemo(() => (m ? Object.fromEntries(rejectingPlugins(m.rows)) : {}), [m]);
  const { onSelectNode } = props;
  const closeDetail = useCallback(() => onSelectNode(null), [onSelectNode]);

  if (!m) {
    if (detail.error) {
      const missing = detail.error instanceof ApiError && detail.error.status === 404;
      return <ErrorView error={detail.error} title={`Could not load cycle ${seq}`} onRetry={missing ? undefined : detail.reload} />;
    }
    return <Loading label={`Loading cycle ${seq}…`} />;
  }
  const notFiltered = m.result === "Gated" || m.result === "NotHandled";
  const sampling =
    !notFiltered && m.evaluatedNodes !== null && m.rows.length
      ? `${m.evaluatedNodes.toLocaleString()} of ${m.rows.length.toLocaleString()} nodes evaluated${
          m.nodesToFind !== null && m.nodesToFind < m.rows.length ? ` (sampling: looking for ${m.nodesToFind} feasible, from index ${m.startIndex})` : ""
        }`
      : "";
  return (
    <div className="stack">
      <section className="panel" aria-labelledby="cycle-title">
        <div className="row" style={{ marginBottom: 6 }}>
          <h2 id="cycle-title" style={{ margin: 0 }}>
            Cycle {m.seq}: <span className="mono" style={{ fontSize: 14 }}>{m.pod}</span>
          </h2>
          {m.result ? <ResultBadge result={m.result} /> : <span className="badge orange">streaming…</span>}
          {m.selectedNode ? <span>→ {m.selectedNode}</span> : null}
          <span className="muted small">{m.profile ? `profile ${m.profile}` : ""}</span>
          <span className="muted small">{sampling}</span>
          {detail.loading && restModel === null && liveModel ? <span className="small muted">loading full detail…</span> : null}
        </div>
        <StageTimeline
          stages={m.stages}
          complete={m.complete}
          filter={m.stages.some((s) => s.point === "Filter") ? { passed: m.counts.passed, failed: m.counts.failed } : null}
          cycleKey={m.seq}
          nominatedNode={m.nominatedNode}
          selectedNode={m.selectedNode}
          animate={props.animate ?? m.source === "stream"}
          filterRejections={m.complete ? filterRejections : null}
        />
        <div style={{ marginTop: 8 }}>
          <Outcome m={m} explainPath={explainPath} />
        </div>
        {podSpec.data && podSpec.data.pod === m.pod ? (
          <details className="small" style={{ marginTop: 8 }} open>
            <summary>The pod as the scheduler reads it</summary>
            <PodSpecSummary pod={podSpec.data} />
          </details>
        ) : null}
      </section>
      {m.rows.length && !notFiltered ? (
        <section className="panel" aria-label="Nodes">
          <NodeTable
            rows={m.rows}
            scorePlugins={m.scorePlugins}
            weights={m.weights}
            skipped={m.skipped}
            query={props.query}
            onQueryChange={props.onQueryChange}
            selected={props.selectedNode}
            onSelect={(n) => props.onSelectNode(n === props.selectedNode ? null : n)}
            winner={m.selectedNode}
            tied={m.tiedNodes}
            partialScores={m.partial}
            height={props.tableHeight}
            mark={props.mark}
            labels={labels}
          />
        </section>
      ) : notFiltered ? null : (
        <p className="muted">No node verdicts for this cycle.</p>
      )}
      {selectedRow ? (
        <NodeDrawer
          row={selectedRow}
          model={m}
          explain={m.complete && m.source === "rest" ? explainPath(selectedRow.name) : null}
          inspectUrl={
            !props.model && m.source === "rest" && m.complete
              ? `/api/v1/replays/${replayId}/cycles/${m.seq}/nodes/${encodeURIComponent(selectedRow.name)}/`
              : null
          }
          onClose={closeDetail}
        />
      ) : null}
      {props.selectedNode && !selectedRow && m.rows.length ? (
        <p className="warn-box small">Node {props.selectedNode} is not in this cycle.</p>
      ) : null}
    </div>
  );
}
