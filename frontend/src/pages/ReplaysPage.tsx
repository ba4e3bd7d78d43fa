import { useMemo } from "react";
import { Link } from "react-router-dom";
import { fetchAll } from "../api/client";
import type { Replay, Snapshot } from "../api/types";
import { useLoader } from "../api/useApi";
import { StatusBadge } from "../components/Badges";
import { ProgressBar } from "../components/Bars";
import { anyActive, isActive, type JobColumn, JobLink, JobList, usePolling } from "../components/JobList";
import { formatDate, formatDuration } from "../lib/format";

export function ReplaysPage({ live = false }: { live?: boolean }) {
  const replays = useLoader<Replay[]>(`replays-${live}`, async (signal) => {
    const all = await fetchAll<Replay>("/api/v1/replays/", { signal, pageSize: 200 });
    return live ? all.filter(isActive) : all;
  });
  const snaps = useLoader<Snapshot[]>("snapshots", (signal) => fetchAll<Snapshot>("/api/v1/snapshots/", { signal, pageSize: 200 }));
  const names = useMemo(() => new Map((snaps.data ?? []).map((s) => [s.id, s.name || s.id.slice(0, 8)])), [snaps.data]);
  usePolling(live || anyActive(replays.data), replays.reload, 3000);
  const columns: JobColumn<Replay>[] = [
    { header: "Replay", cell: (r) => <JobLink job={r} base="/replays" /> },
    {
      header: "Snapshot",
      cell: (r) => <Link to={`/snapshots/${r.snapshot}`}>{names.get(r.snapshot) ?? r.snapshot.slice(0, 8)}</Link>,
    },
    {
      header: "Status",
      cell: (r) => (
        <>
          <div className="row" style={{ gap: 6 }}>
            <StatusBadge status={r.status} />
            {r.status === "running" ? (
              <>
                <ProgressBar value={r.progress} label={`${r.name || r.id} progress`} />
                <span className="small muted">
                  {r.cycles_done}/{r.cycles_total}
                </span>
              </>
            ) : null}
          </div>
          {r.reason ? <div className="small muted">{r.reason}</div> : null}
        </>
      ),
    },
    {
      header: "Results",
      className: "small",
      cell: (r) =>
        Object.entries(r.summary.results ?? {})
          .map(([k, v]) => `${v} ${k}`)
          .join(", ") || "–",
    },
    {
      header: "Options",
      className: "small",
      cell: (r) => (
        <>
          {r.options.allNodes ? "every node" : "sampled"}
          {r.configuration || r.config ? " · custom config" : ""}
        </>
      ),
    },
    { header: "Started", className: "small nowrap", cell: (r) => formatDate(r.started ?? r.created) },
    { header: "Took", className: "small nowrap", cell: (r) => formatDuration(r.started, r.finished) },
  ];
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <h1>{live ? "Live replays" : "Replays"}</h1>
          <p className="muted">
            {live
              ? "Replays running now. Open one to follow its cycles as the scheduler makes them."
              : "Every replay you may read. Start one from a snapshot."}
          </p>
        </div>
      </div>
      <section className="panel">
        <JobList
          state={replays}
          label="Loading replays…"
          empty={
            <>
              {live ? "No replay is running." : "No replay yet."} <Link to="/snapshots">Start one from a snapshot.</Link>
            </>
          }
          columns={columns}
        />
      </section>
    </div>
  );
}
