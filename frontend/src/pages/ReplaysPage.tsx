import { useEffect, useMemo } from "react";
import { Link } from "react-router-dom";
import { fetchAll } from "../api/client";
import type { Replay, Snapshot } from "../api/types";
import { useLoader } from "../api/useApi";
import { StatusBadge } from "../components/Badges";
import { ProgressBar } from "../components/Bars";
import { Async, Empty } from "../components/Feedback";
import { formatDate, formatDuration } from "../lib/format";

export function ReplaysPage({ live = false }: { live?: boolean }) {
  const replays = useLoader<Replay[]>(`replays-${live}`, async (signal) => {
    const all = await fetchAll<Replay>("/api/v1/replays/", { signal, pageSize: 200 });
    return live ? all.filter((r) => r.status === "running" || r.status === "queued") : all;
  });
  const snaps = useLoader<Snapshot[]>("snapshots", (signal) => fetchAll<Snapshot>("/api/v1/snapshots/", { signal, pageSize: 200 }));
  const names = useMemo(() => new Map((snaps.data ?? []).map((s) => [s.id, s.name || s.id.slice(0, 8)])), [snaps.data]);
  const anyRunning = (replays.data ?? []).some((r) => r.status === "running" || r.status === "queued");
  const { reload } = replays;
  useEffect(() => {
    if (!live && !anyRunning) return;
    const t = setInterval(reload, 3000);
    return () => clearInterval(t);
  }, [live, anyRunning, reload]);
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
        <Async state={replays} label="Loading replays…">
          {(items) =>
            items.length === 0 ? (
              <Empty>
                {live ? "No replay is running." : "No replay yet."} <Link to="/snapshots">Start one from a snapshot.</Link>
              </Empty>
            ) : (
              <div className="table-wrap">
                <table className="data">
                  <thead>
                    <tr>
                      <th>Replay</th>
                      <th>Snapshot</th>
                      <th>Status</th>
                      <th>Results</th>
                      <th>Options</th>
                      <th>Started</th>
                      <th>Took</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((r) => (
                      <tr key={r.id}>
                        <td>
                          <Link to={`/replays/${r.id}`}>{r.name || r.id.slice(0, 8)}</Link>
                        </td>
                        <td>
                          <Link to={`/snapshots/${r.snapshot}`}>{names.get(r.snapshot) ?? r.snapshot.slice(0, 8)}</Link>
                        </td>
                        <td>
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
                        </td>
                        <td className="small">
                          {Object.entries(r.summary.results ?? {})
                            .map(([k, v]) => `${v} ${k}`)
                            .join(", ") || "–"}
                        </td>
                        <td className="small">
                          {r.options.allNodes ? "every node" : "sampled"}
                          {r.configuration || r.config ? " · custom config" : ""}
                        </td>
                        <td className="small nowrap">{formatDate(r.started ?? r.created)}</td>
                        <td className="small nowrap">{formatDuration(r.started, r.finished)}</td>
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
