import { useEffect, useRef, useState } from "react";
import { Link } from "react-router-dom";
import { requestWithStatus } from "../api/client";
import { clusterApi, type SnapshotRequest } from "../api/live";

const POLL_MS = 1000;
const WAIT_SECONDS = 5;

/** "Snapshot now": the worker freezes the mirrored state into a snapshot; poll the request until it is done. */
export function SnapshotNow({ clusterId, disabled }: { clusterId: string; disabled?: boolean }) {
  const [req, setReq] = useState<SnapshotRequest | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  const take = async () => {
    setBusy(true);
    setError(null);
    setReq(null);
    try {
      let res = await requestWithStatus<SnapshotRequest>("POST", clusterApi(clusterId, "snapshot/"), { wait: WAIT_SECONDS });
      if (!alive.current) return;
      setReq(res.data);
      while (res.status === 202) {
        await new Promise((r) => setTimeout(r, POLL_MS));
        if (!alive.current) return;
        res = await requestWithStatus<SnapshotRequest>("GET", clusterApi(clusterId, `snapshots/${res.data.id}/`));
        if (!alive.current) return;
        setReq(res.data);
      }
    } catch (e) {
      if (alive.current) setError(e as Error);
    } finally {
      if (alive.current) setBusy(false);
    }
  };

  const snap = req?.status === "done" ? req.snapshot : null;
  return (
    <div className="snapshot-now">
      <button type="button" onClick={take} disabled={busy || disabled} title="Freeze the mirrored state (and the configuration the replays use) into a snapshot, for what-if replays">
        {busy ? "Taking a snapshot…" : "Snapshot now"}
      </button>
      <span role="status" aria-live="polite" className="small">
        {busy && req?.status === "pending" ? <span className="muted">waiting for the worker…</span> : null}
        {snap ? (
          <>
            Snapshot taken:{" "}
            <Link to={`/snapshots/${snap.id}`} data-testid="snapshot-link">
              {snap.name || snap.id.slice(0, 8)}
            </Link>{" "}
            <span className="muted">
              ({snap.node_count} nodes, {snap.pod_count} pods)
            </span>
          </>
        ) : null}
        {error ? <span className="problem">Snapshot failed: {error.message}</span> : null}
      </span>
    </div>
  );
}
