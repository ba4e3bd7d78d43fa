import { useEffect, useRef, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { api, fetchAll } from "../api/client";
import { clustersUrl, clusterUrl, livePath, type LiveCluster } from "../api/live";
import { useLoader } from "../api/useApi";
import { AddClusterForm } from "../components/ClusterForm";
import { Async, Empty, ErrorView } from "../components/Feedback";
import { ClusterStatusBadge } from "../components/LiveBadges";
import { formatDate } from "../lib/format";

const REFRESH_MS = 5000;

export function SummaryCounts({ summary }: { summary: LiveCluster["summary"] }) {
  const parts: [string, number, string][] = [
    ["match", summary.match, "blue"],
    ["tie", summary.tie, "grey"],
    ["diverged", summary.diverged, "vermillion"],
    ["skipped", summary.skipped, "outline"],
  ];
  return (
    <span className="counts" aria-label={`${summary.cycles} decisions`}>
      {parts.map(([k, v, cls]) => (
        <span key={k} className={`count ${cls}${v ? "" : " zero"}`} data-count={k}>
          <span className="n">{v.toLocaleString()}</span> {k}
        </span>
      ))}
    </span>
  );
}

export function WorkerCell({ worker }: { worker: LiveCluster["worker"] }) {
  return worker.alive ? (
    <span className="small nowrap" title={worker.heartbeat ? `last heartbeat ${formatDate(worker.heartbeat)}` : undefined}>
      <span className="dot ok" aria-hidden="true" /> alive <span className="muted mono">{worker.id}</span>
    </span>
  ) : (
    <span className="small muted">
      <span className="dot off" aria-hidden="true" /> no worker
    </span>
  );
}

function ClusterRow({ c, onChanged, onDeleted }: { c: LiveCluster; onChanged: (c: LiveCluster) => void; onDeleted: (id: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirming) cancelRef.current?.focus();
  }, [confirming]);
  const toggle = async () => {
    setBusy(true);
    setError(null);
    try {
      onChanged(await api.patch<LiveCluster>(clusterUrl(c.id), { enabled: !c.enabled, verify: false }));
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.del(clusterUrl(c.id));
      onDeleted(c.id);
    } catch (e) {
      setError(e as Error);
      setBusy(false);
    }
  };
  const title = c.name || c.id.slice(0, 8);
  return (
    <tr data-cluster={c.id}>
      <td>
        <Link to={livePath(c.id)}>
          <strong>{title}</strong>
        </Link>
        <div className="small muted">
          {c.source === "kubeconfig" ? `kubeconfig, context ${c.context || "–"}` : c.source === "path" ? `kubeconfig at ${c.path}` : "in-cluster"}
          {" · "}
          {c.config_source === "configmap" ? `config from ${c.config_map}` : c.config_source === "uploaded" ? "uploaded config" : "default config"}
          {c.all_nodes ? "" : " · sampled"}
        </div>
      </td>
      <td className="mono small ellipsis" style={{ maxWidth: 220 }} title={c.server}>
        {c.server || "–"}
      </td>
      <td>
        <div className="row" style={{ gap: 6 }}>
          <ClusterStatusBadge status={c.status} />
          {!c.enabled ? <span className="badge outline">disabled</span> : null}
        </div>
        {c.status_message ? (
          <div className="small muted status-message" title={c.status_message}>
            {c.status_message}
          </div>
        ) : null}
      </td>
      <td>
        <WorkerCell worker={c.worker} />
      </td>
      <td>
        <SummaryCounts summary={c.summary} />
      </td>
      <td className="small nowrap">{formatDate(c.summary.lastCycleAt)}</td>
      <td className="nowrap">
        {confirming ? (
          <div className="confirm" role="group" aria-label={`Delete ${title}?`}>
            <span className="small">Delete {title} and its timeline?</span>
            <button type="button" className="danger small" onClick={remove} disabled={busy}>
              Delete
            </button>
            <button ref={cancelRef} type="button" className="small" onClick={() => setConfirming(false)} disabled={busy}>
              Keep
            </button>
          </div>
        ) : (
          <div className="row" style={{ gap: 6, flexWrap: "nowrap" }}>
            <button type="button" className="small" onClick={toggle} disabled={busy} aria-label={`${c.enabled ? "Disable" : "Enable"} ${title}`}>
              {c.enabled ? "Disable" : "Enable"}
            </button>
            <button type="button" className="small danger" onClick={() => setConfirming(true)} disabled={busy} aria-label={`Delete ${title}`}>
              Delete
            </button>
          </div>
        )}
        {error ? <ErrorView error={error} title="Not done" /> : null}
      </td>
    </tr>
  );
}

export function LiveClustersPage() {
  const [sp, setSp] = useSearchParams();
  const adding = sp.get("add") === "1";
  const navigate = useNavigate();
  const clusters = useLoader<LiveCluster[]>("clusters", (signal) => fetchAll<LiveCluster>(clustersUrl, { signal, pageSize: 200 }));
  const { reload, setData } = clusters;
  useEffect(() => {
    const t = setInterval(reload, REFRESH_MS);
    return () => clearInterval(t);
  }, [reload]);
  const setAdding = (on: boolean) => {
    const next = new URLSearchParams(sp);
    if (on) next.set("add", "1");
    else next.delete("add");
    setSp(next);
  };
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <h1>Live clusters</h1>
          <p className="muted" style={{ margin: 0 }}>
            Watched clusters: each scheduling decision is replayed against the state just before it and compared with what the cluster did.
          </p>
        </div>
        {!adding ? (
          <button type="button" className="primary" onClick={() => setAdding(true)}>
            Add cluster
          </button>
        ) : null}
      </div>
      {adding ? (
        <section className="panel" aria-labelledby="add-title">
          <h2 id="add-title">Add a cluster</h2>
          <AddClusterForm
            onCreated={(c) => {
              setData((prev) => [c, ...(prev ?? []).filter((x) => x.id !== c.id)]);
              navigate(livePath(c.id));
            }}
            onCancel={() => setAdding(false)}
          />
        </section>
      ) : null}
      <section className="panel" aria-label="Clusters">
        <Async state={clusters} label="Loading clusters…">
          {(items) =>
            items.length === 0 ? (
              <Empty>
                No cluster is watched yet.{" "}
                <button type="button" className="linklike" onClick={() => setAdding(true)}>
                  Add one
                </button>{" "}
                (or run <code>manage.py live_demo</code> for a scripted one).
              </Empty>
            ) : (
              <div className="table-wrap">
                <table className="data clusters">
                  <thead>
                    <tr>
                      <th>Cluster</th>
                      <th>Server</th>
                      <th>Status</th>
                      <th>Worker</th>
                      <th>Decisions</th>
                      <th>Last decision</th>
                      <th>
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((c) => (
                      <ClusterRow
                        key={c.id}
                        c={c}
                        onChanged={(next) => setData((prev) => (prev ?? []).map((x) => (x.id === next.id ? next : x)))}
                        onDeleted={(id) => setData((prev) => (prev ?? []).filter((x) => x.id !== id))}
                      />
                    ))}
                  </tbody>
                </table>
              </div>
            )
          }
        </Async>
      </section>
    </div>
  );
}
