import { memo, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router-dom";
import { api, fetchAll } from "../api/client";
import type { CycleSummary, Replay, Snapshot } from "../api/types";
import { useApi, useLoader } from "../api/useApi";
import { StatusBadge } from "../components/Badges";
import { ProgressBar } from "../components/Bars";
import { ErrorView, Loading } from "../components/Feedback";
import { PodQueue, type QueueItem } from "../components/PodQueue";
import { formatDuration } from "../lib/format";
import { paramsWithQuery, queryFromParams, type TableQuery } from "../lib/nodes";
import type { ConnectionState } from "../stream/client";
import type { LiveCycle } from "../stream/liveState";
import { useReplayStream } from "../stream/useReplayStream";
import { CycleView } from "./CycleView";

const ACTIVE = new Set(["queued", "running"]);
// The page re-renders for the queue and the progress while the cycle shown stays the same: that one is not redrawn.
const ShownCycle = memo(CycleView);
const SPEEDS = [0.5, 1, 2, 5, 10, 25, 100];

export function Connection({ state, detail, live }: { state: ConnectionState; detail?: string; live: boolean }) {
  if (state === "idle") return null;
  const text: Record<ConnectionState, string> = {
    idle: "",
    connecting: "connecting…",
    open: live ? "streaming" : "playback connected",
    reconnecting: "reconnecting…",
    closed: "closed",
    failed: "stream unavailable",
  };
  return (
    <span className={`conn ${state}`} role="status" title={detail}>
      <span className="led" aria-hidden="true" />
      {text[state]}
      {state === "failed" && detail ? `: ${detail}` : ""}
    </span>
  );
}

function toItem(c: CycleSummary): QueueItem {
  return { seq: c.seq, pod: c.pod, result: c.result, node: c.node || null, message: c.message || null };
}

export function ReplayPage() {
  const { id = "", seq: seqParam } = useParams();
  const urlSeq = seqParam ? Number.parseInt(seqParam, 10) : null;
  const [sp, setSp] = useSearchParams();
  const navigate = useNavigate();
  const replay = useApi<Replay>(`/api/v1/replays/${id}/`);
  const r = replay.data;
  const isLive = !!r && ACTIVE.has(r.status);
  const attempt = r?.attempt ?? 0;
  const queue = useLoader<CycleSummary[]>(r ? `${id}-${attempt}` : null, (signal) =>
    fetchAll<CycleSummary>(`/api/v1/replays/${id}/cycles/`, { signal }),
  );
  const snapshot = useApi<Snapshot>(r ? `/api/v1/snapshots/${r.snapshot}/` : null);

  // ----- streaming: live replays follow the worker; finished ones play back on demand -----
  const [playbackActive, setPlaybackActive] = useState(false);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(2);
  const [after, setAfter] = useState<string | undefined>(undefined);
  const liveAfter = useRef<string | undefined>(undefined);
  if (isLive && queue.data && liveAfter.current === undefined) {
    const last = queue.data.length ? queue.data[queue.data.length - 1].seq : 0;
    liveAfter.current = last ? String(last) : "";
  }
  const streamEnabled = isLive ? queue.data !== undefined : playbackActive;
  const stream = useReplayStream(streamEnabled, {
    replayId: id,
    mode: isLive ? "live" : "playback",
    after: isLive ? liveAfter.current || undefined : after,
    topk: 50,
  });
  const live = stream.live;

  // leaving live mode (the replay finished) or changing replay resets the stream bookkeeping
  useEffect(() => {
    if (!isLive) liveAfter.current = undefined;
  }, [isLive, id]);
  useEffect(() => {
    setPlaybackActive(false);
    setPlaying(false);
  }, [id]);

  // the stream says the replay finished, or was re-run: refresh the REST view of it
  const { reload: reloadReplay } = replay;
  const { reload: reloadQueue } = queue;
  // (also when the replay ended between the page's first read and the stream's hello: the stream's
  // first word is then already the final status)
  const reloadedFor = useRef<string | null>(null);
  const restActive = !!r && ACTIVE.has(r.status);
  useEffect(() => {
    if (!live.status || ACTIVE.has(live.status)) {
      reloadedFor.current = null;
      return;
    }
    if (restActive && reloadedFor.current !== live.status) {
      reloadedFor.current = live.status;
      reloadReplay();
      reloadQueue();
    }
  }, [live.status, restActive, reloadReplay, reloadQueue]);
  useEffect(() => {
    if (live.attempt !== null && r && live.attempt !== r.attempt) reloadReplay();
  }, [live.attempt, r, reloadReplay]);
  // poll a queued replay until the worker picks it up (the stream also reports it)
  useEffect(() => {
    if (!r || r.status !== "queued") return;
    const t = setInterval(reloadReplay, 2000);
    return () => clearInterval(t);
  }, [r, reloadReplay]);

  // playback reached the end
  useEffect(() => {
    if (live.endCount > 0 && !isLive) setPlaying(false);
  }, [live.endCount, isLive]);

  // ----- the queue: stored cycles plus those streamed since -----
  const stored = useMemo(() => (queue.data ?? []).map(toItem), [queue.data]);
  const items = useMemo(() => {
    const base = stored;
    if (!isLive || !live.completed.length) return base;
    const lastSeq = base.length ? base[base.length - 1].seq : 0;
    const extra: QueueItem[] = live.completed.filter((c) => c.seq > lastSeq).map((c) => ({ ...c }));
    const c = live.cycle;
    const lastKnown = extra.length ? extra[extra.length - 1].seq : lastSeq;
    if (c && !c.end && c.seq > lastKnown) extra.push({ seq: c.seq, pod: c.pod, result: "Running", node: null });
    return extra.length ? [...base, ...extra] : base;
  }, [stored, live.completed, live.cycle, isLive]);

  // ----- which cycle is shown -----
  const following = isLive && urlSeq === null;
  // while a stream moves, show the last cycle it completed (stable, with its scores); the queue shows the one in flight
  const streamed = live.lastCompleted ?? live.cycle;
  // Playback: a cycle streamed after Step or Play is shown at once and the URL follows it (in an effect, below);
  // once the user opens another cycle, streamed cycles no longer move the view until the next Step or Play.
  const followStream = useRef(false);
  const followed = useRef<LiveCycle | null>(null);
  const liveSeq = live.lastCompleted?.seq ?? null;
  const fresh = !isLive && playbackActive && followStream.current && live.lastCompleted !== null && live.lastCompleted !== followed.current;
  let seq: number | null = urlSeq;
  if (following && streamed) seq = streamed.seq;
  if (!isLive && playbackActive && playing && streamed) seq = streamed.seq;
  if (fresh && liveSeq !== null) seq = liveSeq;
  const shownLive = streamed && streamed.seq === seq ? streamed : live.cycle && live.cycle.seq === seq ? live.cycle : null;
  // a followed replay that finishes stays on the cycle the user was looking at (not back to the first)
  const lastFollowed = useRef<number | null>(null);
  if (following && seq !== null) lastFollowed.current = seq;
  if (seq === null && !isLive && lastFollowed.current !== null) seq = lastFollowed.current;
  if (seq === null && items.length) seq = following ? items[items.length - 1].seq : items[0].seq;
  useEffect(() => {
    if (isLive || urlSeq !== null || lastFollowed.current === null) return;
    navigate(`/replays/${id}/cycles/${lastFollowed.current}${window.location.search}`, { replace: true });
  }, [isLive, urlSeq, id, navigate]);
  useEffect(() => {
    lastFollowed.current = null;
  }, [id]);

  // a stepped (or paused, or finished) playback leaves the URL on the cycle it shows
  useEffect(() => {
    if (!fresh || playing) return;
    followed.current = live.lastCompleted;
    if (liveSeq !== null && liveSeq !== urlSeq) {
      navigate(`/replays/${id}/cycles/${liveSeq}${window.location.search}`, { replace: true });
    }
  }, [fresh, live.lastCompleted, playing, liveSeq, urlSeq, id, navigate]);

  const query = useMemo(() => queryFromParams(sp), [sp]);
  const setQuery = useCallback((q: TableQuery) => setSp(paramsWithQuery(sp, q), { replace: true }), [sp, setSp]);
  const selectedNode = sp.get("node");
  const setSelectedNode = useCallback(
    (n: string | null) => {
      const next = new URLSearchParams(sp);
      if (n) next.set("node", n);
      else next.delete("node");
      setSp(next, { replace: false });
    },
    [sp, setSp],
  );

  const openCycle = useCallback(
    (s: number) => {
      followStream.current = false;
      if (playing) {
        stream.controls.pause();
        setPlaying(false);
      }
      navigate(`/replays/${id}/cycles/${s}${window.location.search}`);
    },
    [id, navigate, playing, stream.controls],
  );

  const total = r ? Math.max(r.cycles_total, items.length) : items.length;
  const play = () => {
    followStream.current = true;
    if (!playbackActive) {
      setAfter(seq !== null && seq < total ? String(seq) : "");
      setPlaybackActive(true);
      stream.controls.play(speed);
    } else {
      stream.controls.play(speed);
      // go on from the cycle shown: the stream's position is elsewhere after the user opened another cycle
      if (seq !== null && seq >= total) stream.controls.seek(1);
      else if (seq !== null && seq !== liveSeq) stream.controls.seek(seq + 1);
    }
    setPlaying(true);
  };
  const pause = () => {
    stream.controls.pause();
    setPlaying(false);
    if (liveSeq !== null) navigate(`/replays/${id}/cycles/${liveSeq}${window.location.search}`, { replace: true });
  };
  const step = () => {
    followStream.current = true;
    if (!playbackActive) {
      setAfter(seq !== null ? String(seq) : "");
      setPlaybackActive(true);
      stream.controls.step();
    } else if (seq !== null && seq !== liveSeq) {
      stream.controls.seek(seq + 1); // paused: the stream sends that cycle at once
    } else {
      stream.controls.step();
    }
  };
  const seekTo = (n: number) => {
    if (playing) stream.controls.seek(n);
    else openCycle(n);
  };

  // ← / → step through the cycles (not while typing, nor in the node table or a slider, which use the keys)
  const stepRef = useRef<(delta: number) => void>(() => undefined);
  // where the last key press went, until the page shows it (key presses faster than renders add up)
  const keySeq = useRef<number | null>(null);
  keySeq.current = seq;
  stepRef.current = (delta: number) => {
    const from = keySeq.current;
    if (from === null || !total) return;
    const next = Math.max(1, Math.min(total, from + delta));
    keySeq.current = next;
    if (next !== from) openCycle(next);
  };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
      if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.defaultPrevented) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.closest("input, select, textarea, [contenteditable=true], [role=grid]") || t.isContentEditable)) return;
      e.preventDefault();
      stepRef.current(e.key === "ArrowLeft" ? -1 : 1);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  // ----- actions -----
  const [actionError, setActionError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (what: "cancel" | "rerun") => {
    setBusy(true);
    setActionError(null);
    try {
      const next = await api.post<Replay>(`/api/v1/replays/${id}/${what}/`);
      replay.setData(next);
      if (what === "rerun") {
        setPlaybackActive(false);
        setPlaying(false);
        liveAfter.current = undefined;
        navigate(`/replays/${id}`);
      }
    } catch (e) {
      setActionError(e as Error);
    } finally {
      setBusy(false);
    }
  };

  if (replay.error && !r) return <ErrorView error={replay.error} title="Could not load the replay" onRetry={replay.reload} />;
  if (!r) return <Loading label="Loading the replay…" />;

  const status = isLive && live.status ? live.status : r.status;
  const done = isLive && live.status ? live.cyclesDone : r.cycles_done;
  const totalCycles = isLive && live.status ? live.cyclesTotal : r.cycles_total;
  const results = r.summary.results ?? {};
  const notCalled = Array.isArray(r.options.extendersNotCalled) ? (r.options.extendersNotCalled as string[]) : [];
  return (
    <div>
      <div className="page-head">
        <div className="grow">
          <div className="crumbs">
            <Link to="/replays">Replays</Link> /{" "}
            <Link to={`/snapshots/${r.snapshot}`}>{snapshot.data?.name || "snapshot"}</Link> /
          </div>
          <div className="row" style={{ gap: 10 }}>
            <h1 style={{ margin: 0 }}>{r.name || `Replay ${r.id.slice(0, 8)}`}</h1>
            <StatusBadge status={status} />
            {ACTIVE.has(status) ? (
              <>
                <ProgressBar value={totalCycles ? done / totalCycles : 0} label="Replay progress" />
                <span className="small">
                  {done.toLocaleString()} / {totalCycles.toLocaleString()} cycles
                </span>
              </>
            ) : (
              <span className="small muted">
                {total.toLocaleString()} cycles · {formatDuration(r.started, r.finished)}
              </span>
            )}
            <Connection state={stream.connection} detail={stream.detail} live={isLive} />
          </div>
          <div className="row small muted" style={{ marginTop: 4, gap: 10 }}>
            <span>{r.options.allNodes ? "every node evaluated" : "scheduler's node sampling"}</span>
            <span data-option="preemption">preemption: {r.options.preemption === "dry-run" ? "dry-run (recorded, nothing evicted)" : "evict"}</span>
            <span>{r.configuration || r.config ? "custom configuration" : "configuration: the snapshot's, else the v1.35 default"}</span>
            {Object.keys(results).length ? (
              <span>
                {Object.entries(results)
                  .map(([k, v]) => `${v} ${k}`)
                  .join(" · ")}
              </span>
            ) : null}
            {notCalled.length ? (
              <span className="badge purple" title="Their URLs are not under SCHEDVIZ_EXTENDER_URLS: replayed without them">
                extenders not called: {notCalled.join(", ")}
              </span>
            ) : null}
            {r.reason ? <span className="badge purple">{r.reason}</span> : null}
          </div>
        </div>
        <div className="row">
          {ACTIVE.has(status) ? (
            <button type="button" className="danger" onClick={() => act("cancel")} disabled={busy}>
              Cancel
            </button>
          ) : (
            <button type="button" onClick={() => act("rerun")} disabled={busy}>
              Re-run
            </button>
          )}
          <Link className="button" to={`/replays/${id}/timeline${seq ? `?cycle=${seq}` : ""}`}>
            Cluster over time
          </Link>
          <Link className="button" to={`/compare?a=${id}`}>
            Compare…
          </Link>
        </div>
      </div>
      {actionError ? <ErrorView error={actionError} title="The action failed" /> : null}
      {stream.live.error ? <p className="warn-box small">Stream: {stream.live.error}</p> : null}

      {!isLive && total > 0 ? (
        <div className="panel playback" role="group" aria-label="Playback" style={{ marginBottom: 12 }}>
          <button type="button" onClick={() => openCycle(1)} disabled={seq === 1 && !playing} aria-label="First cycle">
            |◀
          </button>
          <button type="button" onClick={() => seq && openCycle(Math.max(1, seq - 1))} disabled={!seq || seq <= 1} aria-label="Previous cycle">
            ◀
          </button>
          {playing ? (
            <button type="button" className="primary" onClick={pause} aria-label="Pause playback">
              ‖ Pause
            </button>
          ) : (
            <button type="button" className="primary" onClick={play} aria-label="Play the replay cycle by cycle">
              ▶ Play
            </button>
          )}
          <button type="button" onClick={step} disabled={playing || (seq ?? 0) >= total} aria-label="Step to the next cycle (streamed)">
            Step ▶|
          </button>
          <label className="row small" style={{ gap: 4 }}>
            Speed
            <select
              value={speed}
              onChange={(e) => {
                const s = Number(e.target.value);
                setSpeed(s);
                if (playing) stream.controls.play(s);
              }}
              aria-label="Playback speed, cycles per second"
            >
              {SPEEDS.map((s) => (
                <option key={s} value={s}>
                  {s}/s
                </option>
              ))}
            </select>
          </label>
          <input
            type="range"
            min={1}
            max={Math.max(1, total)}
            value={seq ?? 1}
            onChange={(e) => seekTo(Number(e.target.value))}
            aria-label="Seek to cycle"
            aria-valuetext={`cycle ${seq ?? 1} of ${total}`}
          />
          <span className="small nowrap">
            cycle {seq ?? "–"} / {total}
          </span>
          <span className="small muted nowrap" title="The left and right arrow keys step to the previous and next cycle">
            ← → keys step
          </span>
        </div>
      ) : null}
      {isLive && urlSeq !== null ? (
        <p className="notice small" style={{ marginBottom: 12 }}>
          Showing cycle {urlSeq}. <Link to={`/replays/${id}`}>Follow the live replay</Link>
        </p>
      ) : null}

      <div className="replay-layout">
        {queue.error && !queue.data ? (
          <ErrorView error={queue.error} title="Could not load the queue" onRetry={queue.reload} />
        ) : queue.data === undefined ? (
          <Loading label="Loading the queue…" />
        ) : (
          <PodQueue
            items={items}
            currentSeq={seq}
            onOpen={openCycle}
            pendingCount={isLive ? Math.max(0, totalCycles - items.length) : 0}
          />
        )}
        <div style={{ minWidth: 0 }}>
          {urlSeq !== null && !isLive && queue.data !== undefined && (!Number.isFinite(urlSeq) || urlSeq < 1 || urlSeq > total) ? (
            <div className="panel warn-box" role="alert">
              {total ? (
                <>
                  There is no cycle {seqParam}: this replay has {total.toLocaleString()} cycle{total === 1 ? "" : "s"}.{" "}
                  <Link to={`/replays/${id}/cycles/${total}`}>Show the last one</Link> or{" "}
                  <Link to={`/replays/${id}/cycles/1`}>the first</Link>.
                </>
              ) : (
                <>There is no cycle {seqParam}: this replay has no cycle.</>
              )}
            </div>
          ) : seq === null ? (
            r.status === "queued" ? (
              <Loading label="Waiting for a worker to start the replay…" />
            ) : isLive ? (
              <Loading label="Waiting for the first cycle…" />
            ) : (
              <p className="panel muted">This replay has no cycle: the snapshot has no pending pod.</p>
            )
          ) : (
            <ShownCycle
              replayId={id}
              seq={seq}
              live={shownLive}
              names={live.names}
              fetchDetail={!(playing && !isLive) && !(following && shownLive !== null && !shownLive.end)}
              query={query}
              onQueryChange={setQuery}
              selectedNode={selectedNode}
              onSelectNode={setSelectedNode}
              tableHeight="max(320px, calc(100vh - 420px))"
              detailDelay={following ? 1500 : 250}
              snapshotId={r.snapshot}
            />
          )}
        </div>
      </div>
    </div>
  );
}
