import { useCallback, useEffect, useRef, useState } from "react";
import { ReplayStream, type ConnectionState, type StreamOptions } from "./client";
import { INITIAL_LIVE, reduce, type LiveState } from "./liveState";
import type { ServerMsg } from "./protocol";

const MIN_FLUSH_MS = 100;
const PARTIAL_MS = 100;
/** The messages of a cycle before its `cycle.end`. */
const PARTIAL_TYPES = new Set<ServerMsg["type"]>(["cycle.start", "stage", "filter", "postFilter", "score", "selection"]);

export interface StreamControls {
  play: (speed: number) => void;
  pause: () => void;
  step: () => void;
  seek: (cycle: number) => void;
}

export interface UseReplayStream {
  live: LiveState;
  connection: ConnectionState;
  detail: string | undefined;
  controls: StreamControls;
}

/**
 * Follow a replay's websocket while `enabled`. Messages are applied in batches, at most ~10 times a second and
 * on an animation frame, so a fast replay does not re-render the page for every message; a cycle is drawn as soon
 * as its last message is in (unless the page was drawn less than MIN_FLUSH_MS ago). Changing replayId/mode/after opens
 * a new stream.
 */
export function useReplayStream(
  enabled: boolean,
  opts: Pick<StreamOptions, "replayId" | "mode" | "after" | "topk"> & { socketFactory?: StreamOptions["socketFactory"] },
): UseReplayStream {
  const [live, setLive] = useState<LiveState>(INITIAL_LIVE);
  const [connection, setConnection] = useState<ConnectionState>("idle");
  const [detail, setDetail] = useState<string | undefined>(undefined);
  const streamRef = useRef<ReplayStream | null>(null);
  // playback wishes made before the stream exists (it is created in an effect) are applied on creation
  const desired = useRef<{ playing: boolean; speed: number; steps: number; seek: number | null }>({
    playing: false,
    speed: 5,
    steps: 0,
    seek: null,
  });
  const stateRef = useRef<LiveState>(INITIAL_LIVE);
  const { replayId, mode, after, topk, socketFactory } = opts;

  useEffect(() => {
    if (!enabled) {
      setConnection("idle");
      return;
    }
    stateRef.current = INITIAL_LIVE;
    setLive(INITIAL_LIVE);
    let buffer: ServerMsg[] = [];
    // the buffer holds something worth drawing at once: a cycle's end, or a message that is not part of a cycle
    let complete = false;
    // when the first buffered message of a cycle still arriving came in
    let partialSince: number | null = null;
    let lastFlush = Number.NEGATIVE_INFINITY;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let frame: number | null = null;
    let dueAt = Number.POSITIVE_INFINITY;
    const useRaf = typeof window.requestAnimationFrame === "function" && import.meta.env.MODE !== "test";
    // At most ~10 renders a second (a 5000-node cycle costs tens of milliseconds to render and lay out); a cycle
    // that is still arriving is drawn only once its first message is PARTIAL_MS old, so that a cycle whose messages
    // come together is drawn once, complete, as soon as its last message is in.
    const dueTime = () => Math.max(lastFlush + MIN_FLUSH_MS, complete ? 0 : (partialSince ?? Number.POSITIVE_INFINITY) + PARTIAL_MS);
    const cancel = () => {
      if (timer !== null) clearTimeout(timer);
      if (frame !== null) window.cancelAnimationFrame(frame);
      timer = null;
      frame = null;
      dueAt = Number.POSITIVE_INFINITY;
    };
    const arm = (due: number) => {
      cancel();
      dueAt = due;
      const wait = due - performance.now();
      if (wait > 0) timer = setTimeout(flush, wait);
      else if (useRaf) frame = window.requestAnimationFrame(flush);
      else timer = setTimeout(flush, 16);
    };
    function flush() {
      timer = null;
      frame = null;
      dueAt = Number.POSITIVE_INFINITY;
      if (!buffer.length) return;
      const due = dueTime();
      const now = performance.now();
      if (due > now + 1) {
        arm(due);
        return;
      }
      lastFlush = now;
      const batch = buffer;
      buffer = [];
      complete = false;
      partialSince = null;
      stateRef.current = reduce(stateRef.current, batch);
      setLive(stateRef.current);
    }
    const schedule = () => {
      const due = dueTime();
      if ((timer !== null || frame !== null) && dueAt <= due) return;
      arm(due);
    };
    const stream = new ReplayStream(
      { replayId, mode, after, topk, socketFactory },
      {
        onMessage: (m) => {
          buffer.push(m);
          if (PARTIAL_TYPES.has(m.type)) partialSince ??= performance.now();
          else complete = true;
          schedule();
        },
        onState: (s, d) => {
          setConnection(s);
          setDetail(d);
        },
        onReset: () => {
          buffer = [];
          complete = false;
          partialSince = null;
        },
      },
    );
    streamRef.current = stream;
    const d = desired.current;
    if (d.seek !== null) stream.seek(d.seek);
    if (d.playing) stream.play(d.speed);
    for (; d.steps > 0; d.steps--) stream.step();
    d.seek = null;
    stream.start();
    return () => {
      stream.stop();
      cancel();
      streamRef.current = null;
    };
  }, [enabled, replayId, mode, after, topk, socketFactory]);

  const play = useCallback((speed: number) => {
    desired.current.playing = true;
    desired.current.speed = speed;
    streamRef.current?.play(speed);
  }, []);
  const pause = useCallback(() => {
    desired.current.playing = false;
    streamRef.current?.pause();
  }, []);
  const step = useCallback(() => {
    if (streamRef.current) streamRef.current.step();
    else desired.current.steps += 1;
  }, []);
  const seek = useCallback((cycle: number) => {
    if (streamRef.current) streamRef.current.seek(cycle);
    else desired.current.seek = cycle;
  }, []);
  return { live, connection, detail, controls: { play, pause, step, seek } };
}
