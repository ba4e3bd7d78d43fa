import { useEffect, useState } from "react";
import { Link } from "react-router-dom";
import type { CycleNodeInspection } from "../api/types";
import { useApi } from "../api/useApi";
import type { CycleModel } from "../lib/cycleModel";
import type { NodeRow } from "../lib/nodes";
import { formatBytes } from "../lib/format";
import {
  amountText,
  requirementMatches,
  requirementText,
  resourceLines,
  taintText,
  termMatches,
  termText,
  tolerationText,
  untoleratedTaints,
} from "../lib/podspec";
import { CodeBadge, VerdictBadge } from "./Badges";
import "./cycle.css";

export interface NodeDrawerProps {
  row: NodeRow;
  model: CycleModel;
  /** Why here? for this node; null: no link. */
  explain: string | null;
  /** The inspection endpoint of this node at this cycle; null: not available (a live cluster's cycle). */
  inspectUrl: string | null;
  onClose: () => void;
}

/** An amount in the resource's one unit, the unit in the row's heading: cores, bytes (binary), counts. */
function tableAmount(resource: string, value: number): string {
  if (resource === "cpu") return String(Math.round(value) / 1000);
  if (resource === "memory" || resource === "ephemeral-storage" || resource.startsWith("hugepages-")) return formatBytes(value);
  return String(value);
}

function resourceHeading(resource: string): string {
  if (resource === "cpu") return "CPU (cores)";
  return resource;
}

function Resources({ data, row }: { data: CycleNodeInspection; row: NodeRow }) {
  const lines = resourceLines(data.pod.requests, data.node);
  return (
    <table className="data" aria-label="Resources: the pod's requests against the node">
      <thead>
        <tr>
          <th>Resource</th>
          <th className="num">Pod asks</th>
          <th className="num">Free</th>
          <th className="num">Requested</th>
          <th className="num">Allocatable</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((l) => (
          <tr key={l.resource} className={l.short ? "short" : undefined} data-resource={l.resource} data-short={l.short}>
            <td>
              {resourceHeading(l.resource)}
              {l.short ? <span className="sr-only"> (short)</span> : null}
            </td>
            <td className="num">{l.request ? tableAmount(l.resource, l.request) : "–"}</td>
            <td className="num">{tableAmount(l.resource, l.free)}</td>
            <td className="num">{tableAmount(l.resource, l.requested)}</td>
            <td className="num">{tableAmount(l.resource, l.allocatable)}</td>
          </tr>
        ))}
      </tbody>
      {row.verdict === "failed" && lines.some((l) => l.short) ? (
        <caption className="small" style={{ captionSide: "bottom", textAlign: "left" }}>
          {lines
            .filter((l) => l.short)
            .map((l) => `needs ${amountText(l.resource, l.request)}, ${amountText(l.resource, Math.max(0, l.free))} free`)
            .join("; ")}
        </caption>
      ) : null}
    </table>
  );
}

function Placement({ data }: { data: CycleNodeInspection }) {
  const { pod, node } = data;
  const selector = Object.entries(pod.nodeSelector);
  const terms = pod.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const untolerated = untoleratedTaints(node.taints, pod.tolerations);
  return (
    <>
      {selector.length || terms.length ? (
        <>
          <h3>Node selector and required affinity</h3>
          <ul className="checklist small" aria-label="Node selector and affinity against the node's labels">
            {selector.map(([k, v]) => {
              const ok = node.labels[k] === v;
              return (
                <li key={`sel-${k}`} data-ok={ok}>
                  <span className={ok ? "ok" : "no"}>{ok ? "✓" : "✕"}</span> nodeSelector <code>{`${k}=${v}`}</code>
                  {ok ? "" : node.labels[k] !== undefined ? `: the node has ${k}=${node.labels[k]}` : ": the node has no such label"}
                </li>
              );
            })}
            {terms.map((t, i) => {
              const ok = termMatches(node.labels, node.name, t);
              return (
                <li key={`term-${i}`} data-ok={ok}>
                  <span className={ok ? "ok" : "no"}>{ok ? "✓" : "✕"}</span> affinity term {terms.length > 1 ? i + 1 : ""} <code>{termText(t)}</code>
                  {ok ? null : (
                    <ul className="small">
                      {(t.matchExpressions ?? [])
                        .filter((e) => !requirementMatches(node.labels, e))
                        .map((e) => (
                          <li key={e.key + e.operator}>
                            fails <code>{requirementText(e)}</code>: the node has{" "}
                            {node.labels[e.key] !== undefined ? <code>{`${e.key}=${node.labels[e.key]}`}</code> : `no ${e.key} label`}
                          </li>
                        ))}
                    </ul>
                  )}
                </li>
              );
            })}
          </ul>
          {terms.length > 1 ? <p className="small muted">The terms are ORed: one matching term is enough.</p> : null}
        </>
      ) : null}
      <h3>Taints</h3>
      {node.taints.length ? (
        <ul className="checklist small" aria-label="The node's taints against the pod's tolerations">
          {node.taints.map((t) => {
            const bad = untolerated.includes(t);
            return (
              <li key={taintText(t)} data-ok={!bad}>
                <span className={bad ? "no" : "ok"}>{bad ? "✕" : "✓"}</span> <code>{taintText(t)}</code>{" "}
                {bad ? "not tolerated by the pod" : t.effect === "PreferNoSchedule" ? "(preference only: scored, not filtered)" : "tolerated"}
              </li>
            );
          })}
        </ul>
      ) : (
        <p className="small muted" style={{ margin: 0 }}>
          none
        </p>
      )}
      {node.unschedulable ? <p className="small no">The node is cordoned (spec.unschedulable).</p> : null}
      {pod.tolerations.length ? (
        <p className="small muted" style={{ margin: "2px 0 0" }}>
          The pod tolerates: {pod.tolerations.map(tolerationText).join(", ")}
        </p>
      ) : null}
    </>
  );
}

function AllFilters({ data }: { data: CycleNodeInspection }) {
  const { preFilter, filters, note } = data.allFilters;
  return (
    <div className="beyond" role="region" aria-label="Every filter on this node">
      <p className="small" style={{ margin: "0 0 4px" }}>
        <strong>Beyond what kube-scheduler ran:</strong> {note}.
      </p>
      {preFilter && preFilter.code !== "Success" ? (
        <p className="small" style={{ margin: "0 0 4px" }}>
          PreFilter: <CodeBadge code={preFilter.code} /> {preFilter.plugin ?? ""} {preFilter.reasons.join("; ")}
        </p>
      ) : null}
      {preFilter?.excludedBy?.length ? (
        <p className="small" style={{ margin: "0 0 4px" }}>
          PreFilter ({preFilter.excludedBy.join(", ")}) left this node out: the scheduler ran no filter on it.
        </p>
      ) : null}
      <table className="data small">
        <thead>
          <tr>
            <th>Filter plugin, in profile order</th>
            <th>Verdict if it ran</th>
          </tr>
        </thead>
        <tbody>
          {filters.map((f) => (
            <tr key={f.plugin} data-plugin={f.plugin} data-ran={f.ranByScheduler} className={f.ranByScheduler ? undefined : "not-run"}>
              <td>
                {f.plugin}
                {f.ranByScheduler ? null : <div className="small muted">not run by kube-scheduler</div>}
              </td>
              <td>
                {f.code ? <CodeBadge code={f.code} /> : <span className="muted">not run</span>}
                {f.reasons.length ? <div className="small">{f.reasons.join("; ")}</div> : null}
                {f.diagnosis?.length ? <div className="small muted">{f.diagnosis.join("; ")}</div> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What the rejecting plugin finds wrong with the node, with its numbers (a spread constraint's skew,
 * the term that fails, the taint not tolerated). Resources have their own table below. */
function Diagnosis({ data, row }: { data: CycleNodeInspection; row: NodeRow }) {
  if (row.verdict !== "failed" || !row.plugin || row.plugin === "NodeResourcesFit") return null;
  const found = data.allFilters.filters.find((f) => f.plugin === row.plugin);
  if (!found?.diagnosis?.length) return null;
  return (
    <ul className="small" data-testid="diagnosis" aria-label={`What ${row.plugin} finds wrong with this node`} style={{ margin: "4px 0" }}>
      {found.diagnosis.map((d) => (
        <li key={d}>{d}</li>
      ))}
    </ul>
  );
}

function Scores({ row, model }: { row: NodeRow; model: CycleModel }) {
  if (!row.scores) {
    return row.verdict === "passed" && model.partial ? (
      <p className="muted small">Scores of this node were not streamed (top-ranked nodes only); they load when the cycle is shown in full.</p>
    ) : null;
  }
  return (
    <table className="data" style={{ marginTop: 8 }}>
      <caption className="sr-only">Scores of {row.name}</caption>
      <thead>
        <tr>
          <th>Score plugin</th>
          <th className="num">Raw</th>
          <th className="num">Normalized</th>
          <th className="num">Weight</th>
          <th className="num">Weighted</th>
        </tr>
      </thead>
      <tbody>
        {model.scorePlugins.map((p) => {
          const s = row.scores?.[p];
          return (
            <tr key={p}>
              <td>{p}</td>
              <td className="num">{s?.raw ?? "–"}</td>
              <td className="num">{s?.normalized ?? "–"}</td>
              <td className="num">{model.weights[p] ?? 1}</td>
              <td className="num">{s?.weighted ?? "–"}</td>
            </tr>
          );
        })}
        <tr>
          <th colSpan={4}>Total</th>
          <th className="num">{row.total ?? "–"}</th>
        </tr>
      </tbody>
    </table>
  );
}

/** One node of the cycle in a side panel: the verdict, the numbers behind it, its scores, every filter on demand. */
export function NodeDrawer({ row, model, explain, inspectUrl, onClose }: NodeDrawerProps) {
  const isWinner = row.name === model.selectedNode;
  const facts = useApi<CycleNodeInspection>(inspectUrl);
  const [everyFilter, setEveryFilter] = useState(false);
  useEffect(() => setEveryFilter(false), [row.name]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onClose();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [onClose]);
  const data = facts.data && facts.data.node.name === row.name ? facts.data : null;
  return (
    <aside className="node-drawer" aria-labelledby="node-detail-title" data-testid="node-drawer">
      <div className="row" style={{ alignItems: "flex-start" }}>
        <h2 id="node-detail-title">{row.name}</h2>
        <span className="spacer" style={{ flex: 1 }} />
        <button type="button" className="small" onClick={onClose} aria-label="Close node details" title="Close (Esc)">
          Close
        </button>
      </div>
      <div className="row small" style={{ marginTop: 6 }}>
        <VerdictBadge row={row} />
        <span className="muted">rank {row.rank}</span>
        {row.total !== null ? <span>total {row.total}</span> : null}
        {isWinner ? <span className="badge blue">selected</span> : null}
      </div>
      {row.verdict === "failed" ? (
        <p style={{ marginTop: 8 }} data-testid="rejection">
          Rejected by <strong>{row.plugin || "a PreFilter plugin"}</strong> ({row.code}): {row.reasons.join("; ") || "no reason given"}
        </p>
      ) : row.verdict === "not-evaluated" ? (
        <p style={{ marginTop: 8 }} className="muted">
          Not evaluated: the scheduler&apos;s node sampling had found enough feasible nodes before reaching this node.
        </p>
      ) : null}
      {explain ? (
        <p className="small" style={{ margin: "4px 0" }}>
          <Link to={explain}>{isWinner ? "Why here?" : row.verdict === "failed" ? "What would make it fit here?" : "Compare with the winner"}</Link>
        </p>
      ) : null}
      {inspectUrl ? (
        data ? (
          <>
            <Diagnosis data={data} row={row} />
            <h3>Resources when the cycle ran</h3>
            <Resources data={data} row={row} />
            <Placement data={data} />
            <h3>Every filter</h3>
            {everyFilter ? (
              <AllFilters data={data} />
            ) : (
              <button type="button" className="small" onClick={() => setEveryFilter(true)}>
                Show which filters would reject this node if every filter ran
              </button>
            )}
          </>
        ) : facts.error ? (
          <p className="small warn-box">Could not load the node&apos;s numbers: {facts.error.message}</p>
        ) : (
          <p className="small muted">Loading the node as the cycle found it…</p>
        )
      ) : null}
      {row.scores || row.verdict === "passed" ? <h3>Scores</h3> : null}
      <Scores row={row} model={model} />
    </aside>
  );
}
