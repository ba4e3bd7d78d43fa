import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import { Link, useLocation, useNavigate, useParams } from "react-router-dom";
import { api, ApiError, fetchAll } from "../api/client";
import type { Configuration, Page, PodState, Replay, Snapshot, SnapshotNode, SnapshotPod } from "../api/types";
import { useApi, useLoader } from "../api/useApi";
import { StatusBadge } from "../components/Badges";
import { ProgressBar, UsageBar } from "../components/Bars";
import { Async, Empty, ErrorView, Loading } from "../components/Feedback";
import { UploadProblems } from "../components/Problems";
import { UploadProgressView } from "../components/UploadProgress";
import { formatAmount, formatDate, formatSize, plural, resourceLabel } from "../lib/format";
import { type SnapshotState, failureError, followSnapshot, isReading } from "../lib/uploads";

const BASE = ["cpu", "memory", "pods"];
const STANDARD = new Set(["cpu", "memory", "pods", "ephemeral-storage"]);

function extendedResources(nodes: SnapshotNode[]): string[] {
  const set = new Set<string>();
  for (const n of nodes) for (const r of Object.keys(n.allocatable)) if (!STANDARD.has(r) && !r.startsWith("hugepages-")) set.add(r);
  return [...set].sort();
}

function taintText(t: { key: string; value?: string; effect: string }): string {
  return t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`;
}

function NodesTable({ nodes }: { nodes: SnapshotNode[] }) {
  const [search, setSearch] = useState("");
  const [zone, setZone] = useState("");
  const zones = useMemo(() => [...new Set(nodes.map((n) => n.zone || "(no zone)"))].sort(), [nodes]);
  const ext = useMemo(() => extendedResources(nodes), [nodes]);
  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    return nodes.filter(
      (n) =>
        (!zone || (n.zone || "(no zone)") === zone) &&
        (!q ||
          n.name.toLowerCase().includes(q) ||
          Object.entries(n.labels).some(([k, v]) => `${k}=${v}`.toLowerCase().includes(q)) ||
          n.taints.some((t) => taintText(t).toLowerCase().includes(q))),
    );
  }, [nodes, search, zone]);
  const body = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({
    count: shown.length,
    getScrollElement: () => body.current,
    estimateSize: () => 46,
    overscan: 8,
    initialRect: { width: 1000, height: 400 },
  });
  const cols = `minmax(140px, 1.2fr) 110px repeat(${3 + ext.length}, minmax(120px, 1fr)) minmax(160px, 1.4fr)`;
  return (
    <div>
      <div className="toolbar">
        <input
          type="search"
          aria-label="Search nodes by name, label or taint"
          placeholder="Search name, label, taint…"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
          style={{ width: 240 }}
        />
        <select aria-label="Filter by zone" value={zone} onChange={(e) => setZone(e.target.value)}>
          <option value="">All zones</option>
          {zones.map((z) => (
            <option key={z}>{z}</option>
          ))}
        </select>
        <span className="spacer" />
        <span className="small muted">
          {shown.length === nodes.length ? plural(nodes.length, "node") : `${shown.length} of ${plural(nodes.length, "node")}`} ·
          bars: requested / allocatable
        </span>
      </div>
      <div className="vgrid" style={{ height: Math.min(480, 34 + shown.length * 46 + 4) }}>
        <div className="vhead-wrap">
        <div className="vhead" role="row" style={{ gridTemplateColumns: cols }}>
          <div role="columnheader">Node</div>
          <div role="columnheader">Zone</div>
          {[...BASE, ...ext].map((r) => (
            <div role="columnheader" key={r}>
              {resourceLabel(r)}
            </div>
          ))}
          <div role="columnheader">Taints</div>
        </div>
        </div>
        <div ref={body} className="vbody" role="grid" aria-label="Nodes" aria-rowcount={shown.length} tabIndex={0}>
          {shown.length === 0 ? (
            <Empty>No node matches.</Empty>
          ) : (
            <div style={{ height: v.getTotalSize(), position: "relative" }}>
              {v.getVirtualItems().map((it) => {
                const n = shown[it.index];
                return (
                  <div
                    key={n.name}
                    role="row"
                    aria-rowindex={it.index + 1}
                    className="vrow"
                    style={{ top: it.start, height: 46, gridTemplateColumns: cols, cursor: "default" }}
                  >
                    <div role="gridcell" className="cell" title={n.name}>
                      {n.name}
                      {n.unschedulable ? (
                        <span className="badge vermillion" style={{ marginLeft: 6 }} title="spec.unschedulable: cordoned">
                          cordoned
                        </span>
                      ) : null}
                    </div>
                    <div role="gridcell" className="cell small">
                      {n.zone || <span className="muted">–</span>}
                    </div>
                    {[...BASE, ...ext].map((r) => (
                      <div role="gridcell" className="cell" key={r}>
                        {n.allocatable[r] !== undefined || (n.requested[r] ?? 0) > 0 ? (
                          <UsageBar used={n.requested[r] ?? 0} total={n.allocatable[r]} resource={r} />
                        ) : (
                          <span className="muted small">–</span>
                        )}
                      </div>
                    ))}
                    <div role="gridcell" className="cell small" title={n.taints.map(taintText).join(", ")}>
                      {n.taints.length ? n.taints.map((t) => <span key={taintText(t)} className="badge orange" style={{ marginRight: 4 }}>{taintText(t)}</span>) : <span className="muted">none</span>}
                    </div>
                  </div>
                );
              })}
            </div>
          )}
        </div>
      </div>
    </div>
  );
}

function ZoneSummary({ nodes }: { nodes: SnapshotNode[] }) {
  const zones = useMemo(() => {
    const m = new Map<string, { nodes: number; alloc: Record<string, number>; req: Record<string, number>; cordoned: number; tainted: number }>();
    for (const n of nodes) {
      const z = n.zone || "(no zone)";
      const e = m.get(z) ?? { nodes: 0, alloc: {}, req: {}, cordoned: 0, tainted: 0 };
      e.nodes++;
      if (n.unschedulable) e.cordoned++;
      if (n.taints.length) e.tainted++;
      for (const r of BASE) {
        e.alloc[r] = (e.alloc[r] ?? 0) + (n.allocatable[r] ?? 0);
        e.req[r] = (e.req[r] ?? 0) + (n.requested[r] ?? 0);
      }
      m.set(z, e);
    }
    return [...m.entries()].sort((a, b) => a[0].localeCompare(b[0]));
  }, [nodes]);
  return (
    <table className="data">
      <thead>
        <tr>
          <th>Zone</th>
          <th className="num">Nodes</th>
          {BASE.map((r) => (
            <th key={r}>{resourceLabel(r)}</th>
          ))}
          <th>Cordoned / tainted</th>
        </tr>
      </thead>
      <tbody>
        {zones.map(([z, e]) => (
          <tr key={z}>
            <td className="nowrap">{z}</td>
            <td className="num">{e.nodes}</td>
            {BASE.map((r) => (
              <td key={r} style={{ minWidth: 140 }}>
                <UsageBar used={e.req[r]} total={e.alloc[r]} resource={r} />
              </td>
            ))}
            <td className="small">
              {e.cordoned} / {e.tainted}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The snapshot's pods as the panel shows them: how many in each state, and the pending ones. */
interface PodsOverview {
  counts: Record<PodState, number>;
  pending: SnapshotPod[];
}

/** The pending pods and the counts of the others (one small page each): not every pod of a dense cluster. */
async function loadPods(id: string, signal: AbortSignal): Promise<PodsOverview> {
  const base = `/api/v1/snapshots/${id}/pods/`;
  const count = async (state: PodState) => (await api.get<Page<SnapshotPod>>(`${base}?state=${state}&page_size=1`, { signal })).count;
  const [pending, running, finished] = await Promise.all([
    fetchAll<SnapshotPod>(`${base}?state=pending`, { signal }),
    count("running"),
    count("finished"),
  ]);
  return { counts: { running, pending: pending.length, finished }, pending };
}

function PodsPanel({ pods }: { pods: PodsOverview }) {
  const { counts, pending } = pods;
  const [showAll, setShowAll] = useState(false);
  const list = showAll ? pending : pending.slice(0, 50);
  return (
    <div>
      <div className="row" style={{ marginBottom: 8 }} aria-label="Pods by state">
        <span className="badge blue">running {counts.running}</span>
        <span className="badge orange">pending {counts.pending}</span>
        <span className="badge grey">finished {counts.finished}</span>
        <span className="small muted">pending pods are replayed in queue order; finished pods are ignored, as the scheduler does</span>
      </div>
      {pending.length ? (
        <div className="table-wrap" style={{ maxHeight: 360 }}>
          <table className="data">
            <caption className="sr-only">Pending pods</caption>
            <thead>
              <tr>
                <th>Pending pod</th>
                <th>Requests</th>
                <th className="num">Priority</th>
                <th>Scheduler</th>
                <th>Gates</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.key}>
                  <td className="mono">{p.key}</td>
                  <td className="small">
                    {Object.entries(p.requests)
                      .map(([r, v]) => `${r} ${formatAmount(r, v)}`)
                      .join(", ") || <span className="muted">none (best effort)</span>}
                  </td>
                  <td className="num">{p.priority}</td>
                  <td className="small">{p.schedulerName}</td>
                  <td className="small">{p.schedulingGates.join(", ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {pending.length > list.length ? (
            <button type="button" className="small" onClick={() => setShowAll(true)} style={{ margin: 8 }}>
              Show all {pending.length} pending pods
            </button>
          ) : null}
        </div>
      ) : (
        <Empty>No pending pod: nothing to replay.</Empty>
      )}
    </div>
  );
}

function ReplayLauncher({ snapshot }: { snapshot: Snapshot }) {
  const navigate = useNavigate();
  const [allNodes, setAllNodes] = useState(true);
  const [configuration, setConfiguration] = useState("");
  const [preemption, setPreemption] = useState<"evict" | "dry-run">("evict");
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const configs = useLoader<Configuration[]>("configs", (signal) => fetchAll<Configuration>("/api/v1/configurations/", { signal, pageSize: 200 }));
  const start = async (extenders: "call" | "skip" = "call") => {
    setBusy(true);
    setError(null);
    try {
      const r = await api.post<Replay>("/api/v1/replays/", {
        snapshot: snapshot.id,
        all_nodes: allNodes,
        preemption,
        name: name.trim() || defaultName,
        extenders,
        ...(configuration ? { configuration } : {}),
      });
      navigate(`/replays/${r.id}`);
    } catch (e) {
      setError(e as Error);
      setBusy(false);
    }
  };
  const configName = configuration
    ? (configs.data ?? []).find((c) => c.id === configuration)?.name || "a stored configuration"
    : snapshot.config
      ? "its own configuration"
      : "default profile";
  const defaultName = `${snapshot.name}, ${configName}, ${allNodes ? "every node" : "sampled"}${preemption === "dry-run" ? ", preemption dry-run" : ""}`;
  return (
    <section className="panel" aria-labelledby="replay-title">
      <h2 id="replay-title">Replay</h2>
      <div className="row">
        <label className="field">
          <span>Scheduler configuration</span>
          <select value={configuration} onChange={(e) => setConfiguration(e.target.value)} aria-label="Scheduler configuration">
            <option value="">{snapshot.config ? "The snapshot's own configuration" : "v1.35 default profile"}</option>
            {(configs.data ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name || c.id}
              </option>
            ))}
          </select>
        </label>
        <label className="row" style={{ gap: 6 }} title="percentageOfNodesToScore: 100, so that every node is explained">
          <input type="checkbox" checked={allNodes} onChange={(e) => setAllNodes(e.target.checked)} />
          Evaluate every node
        </label>
        <label className="field">
          <span>Preemption</span>
          <select value={preemption} onChange={(e) => setPreemption(e.target.value as "evict" | "dry-run")} aria-label="Preemption mode">
            <option value="evict">evict: victims are deleted, the preemptor retried</option>
            <option value="dry-run">dry-run: only record what preemption would do</option>
          </select>
        </label>
        <label className="field">
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} placeholder={defaultName} aria-label="Replay name" maxLength={200} style={{ width: 260 }} />
        </label>
        <button type="button" className="primary" onClick={() => start()} disabled={busy || snapshot.pending_count === 0}>
          {busy ? "Starting…" : `Replay ${plural(snapshot.pending_count, "pending pod")}`}
        </button>
        <Link to="/configurations">Write a configuration…</Link>
      </div>
      <p className="small muted" style={{ marginTop: 6 }}>
        Without “every node”, the replay samples nodes exactly as kube-scheduler does and marks the nodes it did not evaluate.
      </p>
      {error ? <UploadProblems error={error} /> : null}
      {extendersRefused(error) ? (
        <div className="row" style={{ marginTop: 6 }}>
          <button type="button" onClick={() => start("skip")} disabled={busy}>
            Replay without the extenders this server may not call
          </button>
          <span className="small muted">they are named on the replay as not called</span>
        </div>
      ) : null}
    </section>
  );
}

/** The server refused the configuration because of extenders it may not call (SCHEDVIZ_EXTENDER_URLS). */
function extendersRefused(error: Error | null): boolean {
  if (!(error instanceof ApiError) || error.code !== "invalid_config") return false;
  const problems = (error.details as { problems?: unknown } | null)?.problems;
  return Array.isArray(problems) && problems.some((p) => typeof p === "string" && p.includes("SCHEDVIZ_EXTENDER_URLS"));
}

function SnapshotReplays({ snapshotId }: { snapshotId: string }) {
  const state = useApi<{ results: Replay[] }>(`/api/v1/replays/?snapshot=${snapshotId}&page_size=50`);
  return (
    <Async state={state} label="Loading replays…">
      {(data) =>
        data.results.length === 0 ? (
          <Empty>Not replayed yet.</Empty>
        ) : (
          <table className="data">
            <thead>
              <tr>
                <th>Replay</th>
                <th>Status</th>
                <th>Results</th>
                <th>Started</th>
              </tr>
            </thead>
            <tbody>
              {data.results.map((r) => (
                <tr key={r.id}>
                  <td>
                    <Link to={`/replays/${r.id}`}>{r.name || r.id.slice(0, 8)}</Link>
                    {r.options.allNodes ? <span className="muted small"> · every node</span> : null}
                  </td>
                  <td>
                    <StatusBadge status={r.status} />
                    {r.status === "running" ? <ProgressBar value={r.progress} label="progress" /> : null}
                  </td>
                  <td className="small">
                    {Object.entries(r.summary.results ?? {})
                      .map(([k, v]) => `${v} ${k}`)
                      .join(", ")}
                  </td>
                  <td className="small nowrap">{formatDate(r.started ?? r.created)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </Async>
  );
}

/** A snapshot's page; while its upload is being read on the server, its progress (then the page). */
export function SnapshotPage() {
  const { id = "" } = useParams();
  const snap = useApi<SnapshotState>(`/api/v1/snapshots/${id}/`);
  const [state, setState] = useState<SnapshotState | null>(null);
  const first = snap.data;
  useEffect(() => {
    if (!first || !isReading(first)) return;
    const ctrl = new AbortController();
    followSnapshot(first.id, setState, { signal: ctrl.signal }).catch(() => undefined);
    return () => ctrl.abort();
  }, [first]);
  if (snap.error) return <ErrorView error={snap.error} title="Could not load the snapshot" onRetry={snap.reload} />;
  if (!first) return <Loading label="Loading the snapshot…" />;
  const s = state ?? first;
  if (s.status === "ready" || s.status === undefined) return <StoredSnapshotPage key={id} />;
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <div className="crumbs">
            <Link to="/snapshots">Snapshots</Link> /
          </div>
          <h1>{s.name || s.id}</h1>
          <p className="muted small">
            {s.upload_name || ""} {formatSize(s.size_bytes)} · uploaded {formatDate(s.created)}
          </p>
        </div>
      </div>
      <section className="panel">
        {isReading(s) ? <UploadProgressView snapshot={s} /> : <UploadProblems error={failureError(s)} />}
      </section>
    </div>
  );
}

function StoredSnapshotPage() {
  const { id = "" } = useParams();
  const location = useLocation();
  const snap = useApi<Snapshot>(`/api/v1/snapshots/${id}/`);
  const nodes = useLoader<SnapshotNode[]>(`nodes-${id}`, (signal) => fetchAll<SnapshotNode>(`/api/v1/snapshots/${id}/nodes/`, { signal }));
  const pods = useLoader<PodsOverview>(`pods-${id}`, (signal) => loadPods(id, signal));
  if (snap.error) return <ErrorView error={snap.error} title="Could not load the snapshot" onRetry={snap.reload} />;
  if (!snap.data) return <Loading label="Loading the snapshot…" />;
  const s = snap.data;
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <div className="crumbs">
            <Link to="/snapshots">Snapshots</Link> /
          </div>
          <h1>{s.name || s.id}</h1>
          <p className="muted small">
            {plural(s.node_count, "node")} · {plural(s.pod_count, "pod")} · {s.pending_count} pending · {s.source_format},{" "}
            {formatSize(s.size_bytes)} · uploaded {formatDate(s.created)}
            {Object.keys(s.ignored).length ? ` · ignored: ${Object.entries(s.ignored).map(([k, v]) => `${v} ${k}`).join(", ")}` : ""}
          </p>
          {(location.state as { uploaded?: boolean } | null)?.uploaded ? (
            <p className="notice small" role="status">
              Snapshot stored. Replay its pending pods below.
            </p>
          ) : null}
        </div>
      </div>
      <ReplayLauncher snapshot={s} />
      <div className="grid-2">
        <section className="panel" aria-labelledby="zones-title">
          <h2 id="zones-title">Zones</h2>
          <Async state={nodes} label="Loading nodes…">
            {(ns) => <ZoneSummary nodes={ns} />}
          </Async>
        </section>
        <section className="panel" aria-labelledby="replays-title">
          <h2 id="replays-title">Replays of this snapshot</h2>
          <SnapshotReplays snapshotId={id} />
        </section>
      </div>
      <section className="panel" aria-labelledby="nodes-title">
        <h2 id="nodes-title">Nodes</h2>
        <Async state={nodes} label="Loading nodes…">
          {(ns) => <NodesTable nodes={ns} />}
        </Async>
      </section>
      <section className="panel" aria-labelledby="pods-title">
        <h2 id="pods-title">Pods</h2>
        <Async state={pods} label="Loading pods…">
          {(ps) => <PodsPanel pods={ps} />}
        </Async>
      </section>
    </div>
  );
}
