import type { LiveHealth, StreamHealth } from "../api/live";
import { formatDate } from "../lib/format";
import { ClusterStatusBadge, StreamStateBadge } from "./LiveBadges";

/** Unix seconds as a short local time ("14:03:22"), with the date when it is not today. */
export function unixTime(ts: number | null | undefined): string {
  if (!ts) return "–";
  const d = new Date(ts * 1000);
  const today = new Date();
  const sameDay = d.toDateString() === today.toDateString();
  return sameDay ? d.toLocaleTimeString(undefined, { hourCycle: "h23" }) : d.toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium", hourCycle: "h23" });
}

/**
 * A watch whose resourceVersion the API server no longer keeps gets 410 Gone and lists again: routine
 * (etcd compaction), not a failure, once the stream is back to listing or watching.
 */
export function isRoutineRelist(s: Pick<StreamHealth, "lastError" | "state">): boolean {
  return !!s.lastError && /\b410 Gone\b/.test(s.lastError) && (s.state === "watching" || s.state === "listing" || s.state === "starting");
}

function StreamRows({ s }: { s: StreamHealth }) {
  const routine = isRoutineRelist(s);
  return (
    <>
      <tr data-stream={s.stream} className={s.lastError && !routine ? "has-error" : undefined}>
        <td className="ellipsis" title={`${s.stream}${s.resourceVersion ? ` (resourceVersion ${s.resourceVersion})` : ""}`}>
          {s.stream}
        </td>
        <td>
          <StreamStateBadge state={s.state} />
        </td>
        <td className="center" data-col="synced">
          {s.synced ? (
            <span title="listed and in sync">
              <span aria-hidden="true">✓</span>
              <span className="sr-only">synced</span>
            </span>
          ) : (
            <span className="muted" title="not listed yet">
              <span aria-hidden="true">–</span>
              <span className="sr-only">not synced</span>
            </span>
          )}
        </td>
        <td className="num" data-col="objects">
          {s.objects.toLocaleString()}
        </td>
        <td className="num" data-col="relists">
          {s.relists}
        </td>
        <td className="num" data-col="reconnects">
          {s.reconnects}
        </td>
      </tr>
      {s.lastError && routine ? (
        <tr className="stream-note" data-routine="true">
          <td colSpan={6} title={`${unixTime(s.lastErrorAt)}: ${s.lastError}`}>
            <span className="small muted" data-col="last-error">
              {unixTime(s.lastErrorAt)}: routine relist: the watch&apos;s resourceVersion had expired (410 Gone), so the stream listed again
              {s.expired > 1 ? ` (${s.expired} times so far)` : ""}
            </span>
          </td>
        </tr>
      ) : s.lastError ? (
        <tr className={`stream-error${s.state === "watching" ? " recovered" : ""}`}>
          <td colSpan={6} title={`${unixTime(s.lastErrorAt)}: ${s.lastError}`}>
            <span className="small" data-col="last-error">
              {unixTime(s.lastErrorAt)}: {s.lastError}
            </span>
            {s.state === "backoff" && s.retryAt ? <span className="small muted"> · retrying at {unixTime(s.retryAt)}</span> : null}
          </td>
        </tr>
      ) : null}
    </>
  );
}

export function ClusterHealthPanel({ health, loading }: { health: LiveHealth; loading?: boolean }) {
  const streams = health.streams;
  const watching = streams.filter((s) => s.state === "watching").length;
  const synced = streams.filter((s) => s.synced).length;
  return (
    <section className="panel health" aria-labelledby="health-title">
      <h2 id="health-title">
        Health <ClusterStatusBadge status={health.status} />
        {loading ? <span className="small muted">refreshing…</span> : null}
      </h2>
      {health.message ? <p className="small status-message-box">{health.message}</p> : null}
      <dl className="kv small">
        <dt>Worker</dt>
        <dd>
          {health.worker.alive ? (
            <>
              <span className="dot ok" aria-hidden="true" /> alive <span className="mono muted">{health.worker.id}</span>
            </>
          ) : (
            <>
              <span className="dot off" aria-hidden="true" /> none
            </>
          )}
          {health.worker.heartbeat ? <span className="muted"> · heartbeat {formatDate(health.worker.heartbeat)}</span> : null}
        </dd>
        <dt>Decisions</dt>
        <dd data-testid="health-processed">
          {health.processed.toLocaleString()} replayed · {health.queue} waiting · {health.failures} failed
        </dd>
        {health.lastFailure ? (
          <>
            <dt>Last failure</dt>
            <dd className="problem">{health.lastFailure}</dd>
          </>
        ) : null}
        <dt>Mirror</dt>
        <dd>
          {health.objects.toLocaleString()} objects · started {unixTime(health.startedAt)}
          {health.restoredAt ? ` from a checkpoint of ${unixTime(health.restoredAt)}` : ""}
        </dd>
        {health.config ? (
          <>
            <dt>Configuration</dt>
            <dd>
              {health.config.source ?? "default"}
              {health.config.configMap ? ` ${health.config.configMap}` : ""}
              {health.config.profiles?.length ? ` · profiles ${health.config.profiles.join(", ")}` : ""}
              {health.config.unknownPlugins?.length ? <span className="problem"> · unknown plugins {health.config.unknownPlugins.join(", ")}</span> : null}
              {health.config.extenders?.length ? <span className="problem"> · {health.config.extenders.length} extender(s)</span> : null}
            </dd>
          </>
        ) : null}
        {health.configError ? (
          <>
            <dt>Configuration error</dt>
            <dd className="problem">{health.configError}</dd>
          </>
        ) : null}
      </dl>
      {streams.length ? (
        <>
          <h3 style={{ margin: "10px 0 4px" }}>
            Streams{" "}
            <span className="small muted" style={{ fontWeight: 400 }}>
              {watching} of {streams.length} watching · {synced} synced
            </span>
          </h3>
          <div className="streams-wrap">
            <table className="data streams" aria-label="Streams">
              <thead>
                <tr>
                  <th>Stream</th>
                  <th>State</th>
                  <th className="center" title="Listed and in sync">
                    Sync
                  </th>
                  <th className="num">Objects</th>
                  <th className="num" title="Lists after the first (a 410 Gone, or a gap)">
                    Relists
                  </th>
                  <th className="num" title="Watches opened again after a network error">
                    Reconn.
                  </th>
                </tr>
              </thead>
              <tbody>
                {streams.map((s) => (
                  <StreamRows key={s.stream} s={s} />
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : (
        <p className="small muted">No stream yet: the worker has not started watching.</p>
      )}
    </section>
  );
}
