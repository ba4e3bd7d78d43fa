import { useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { api, fetchAll, requestWithStatus } from "../api/client";
import type { Snapshot } from "../api/types";
import { useLoader } from "../api/useApi";
import { DropZone } from "../components/DropZone";
import { Async, Empty, ErrorView } from "../components/Feedback";
import { UploadProblems } from "../components/Problems";
import { UploadProgressView } from "../components/UploadProgress";
import { formatDate, formatSize } from "../lib/format";
import { type SnapshotState, failureError, followSnapshot, isReading } from "../lib/uploads";

export function UploadForm({ onUploaded }: { onUploaded: (s: Snapshot, created: boolean) => void }) {
  const [name, setName] = useState("");
  const [config, setConfig] = useState("");
  const [busy, setBusy] = useState<string | null>(null);
  const [reading, setReading] = useState<SnapshotState | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const upload = async (file: File) => {
    setBusy(file.name);
    setReading(null);
    setError(null);
    const form = new FormData();
    form.append("file", file);
    if (name.trim()) form.append("name", name.trim());
    if (config.trim()) form.append("config", config);
    try {
      // 201: a new snapshot; 200: content already stored; 202: a large upload, stored and being read on
      // the server, followed here until it is ready or failed
      const res = await requestWithStatus<SnapshotState>("POST", "/api/v1/snapshots/", form);
      if (res.status !== 202) {
        onUploaded(res.data, res.status === 201);
        return;
      }
      setReading(res.data);
      const last = await followSnapshot(res.data.id, setReading);
      if (last.status === "ready") onUploaded(last, true);
      else if (last.duplicate_of) {
        // the same cluster was stored before: that snapshot (this one holds nothing and goes)
        await api.del(`/api/v1/snapshots/${last.id}/`).catch(() => undefined);
        onUploaded({ ...last, id: last.duplicate_of }, false);
      } else {
        // refused: its problems shown here, the failed snapshot (which holds nothing) is not kept
        await api.del(`/api/v1/snapshots/${last.id}/`).catch(() => undefined);
        setError(failureError(last));
      }
    } catch (e) {
      setError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      setBusy(null);
      setReading(null);
    }
  };
  return (
    <section className="panel" aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a snapshot</h2>
      <div className="row" style={{ marginBottom: 8, alignItems: "flex-start" }}>
        <label className="field" style={{ flex: "0 0 260px" }}>
          <span>Name (optional)</span>
          <input type="text" value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. prod-eu, Tuesday" />
        </label>
        <details style={{ flex: 1, minWidth: 260 }}>
          <summary className="small">Scheduler configuration for this snapshot (optional)</summary>
          <textarea
            aria-label="KubeSchedulerConfiguration (YAML or JSON)"
            value={config}
            onChange={(e) => setConfig(e.target.value)}
            rows={6}
            style={{ width: "100%", fontFamily: "var(--mono)", marginTop: 4 }}
            placeholder={"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: ..."}
          />
        </details>
      </div>
      <DropZone onFile={upload} disabled={busy !== null} label="Upload a snapshot file" accept=".yaml,.yml,.json,.gz,.zst,.tgz,.tar,.zip" />
      {busy && reading ? (
        <UploadProgressView snapshot={reading} filename={busy} />
      ) : busy ? (
        <p className="loading" role="status">
          <span className="spinner" aria-hidden="true" /> Uploading and checking {busy}…
        </p>
      ) : null}
      {error ? (
        <div style={{ marginTop: 8 }}>
          <UploadProblems error={error} />
        </div>
      ) : null}
    </section>
  );
}

export function SnapshotsPage() {
  const navigate = useNavigate();
  const list = useLoader<SnapshotState[]>("snapshots", (signal) => fetchAll<SnapshotState>("/api/v1/snapshots/", { signal, pageSize: 200 }));
  const [deleteError, setDeleteError] = useState<Error | null>(null);
  const remove = async (s: Snapshot) => {
    if (!window.confirm(`Delete snapshot “${s.name || s.id}” and its replays?`)) return;
    setDeleteError(null);
    try {
      await api.del(`/api/v1/snapshots/${s.id}/`);
      list.reload();
    } catch (e) {
      setDeleteError(e as Error);
    }
  };
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <h1>Snapshots</h1>
          <p className="muted">
            A snapshot is a cluster as <code>kubectl get … -o yaml</code> shows it: its pending pods are replayed through
            kube-scheduler v1.35.4, cycle by cycle.
          </p>
        </div>
      </div>
      <UploadForm onUploaded={(s) => navigate(`/snapshots/${s.id}`, { state: { uploaded: true } })} />
      <section className="panel" aria-labelledby="snap-list">
        <h2 id="snap-list">Stored snapshots</h2>
        {deleteError ? <ErrorView error={deleteError} title="Could not delete" /> : null}
        <Async state={list} label="Loading snapshots…">
          {(items) =>
            items.length === 0 ? (
              <Empty>No snapshot yet: upload one above.</Empty>
            ) : (
              <div className="table-wrap">
                <table className="data">
                  <thead>
                    <tr>
                      <th>Name</th>
                      <th className="num">Nodes</th>
                      <th className="num">Pods</th>
                      <th className="num">Pending</th>
                      <th>Format</th>
                      <th className="num">Size</th>
                      <th>Uploaded</th>
                      <th>
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((s) => (
                      <tr key={s.id}>
                        <td>
                          <Link to={`/snapshots/${s.id}`}>{s.name || s.id}</Link>
                          {s.config ? <span className="badge grey" style={{ marginLeft: 6 }}>own config</span> : null}
                          <SnapshotStatusBadge snapshot={s} />
                        </td>
                        <td className="num">{s.node_count.toLocaleString()}</td>
                        <td className="num">{s.pod_count.toLocaleString()}</td>
                        <td className="num">{s.pending_count.toLocaleString()}</td>
                        <td>{s.source_format}</td>
                        <td className="num">{formatSize(s.size_bytes)}</td>
                        <td className="nowrap">{formatDate(s.created)}</td>
                        <td className="nowrap">
                          <button type="button" className="small danger" onClick={() => remove(s)} aria-label={`Delete snapshot ${s.name || s.id}`}>
                            Delete
                          </button>
                        </td>
                      </tr>
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

/** A snapshot still being read, or whose upload failed (ready ones show nothing). */
function SnapshotStatusBadge({ snapshot }: { snapshot: SnapshotState }) {
  if (isReading(snapshot)) return <span className="badge blue" style={{ marginLeft: 6 }}>{snapshot.status}</span>;
  if (snapshot.status === "failed")
    return (
      <span className="badge vermillion" style={{ marginLeft: 6 }} title={snapshot.error?.message ?? ""}>
        failed
      </span>
    );
  return null;
}
