import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { flushSync } from "react-dom";
import { ReplayStream, type ConnectionState, type StreamOptions } from "./client";
import { flushDueAt } from "./flushPolicy";
import { later } from "./later";
import { INITIAL_LIVE, reduce, type LiveState } from "./liveState";
import type { ServerMsg } from "./protocol";

/** How long a render waits for its frame before the next one may start anyway (a hidden page has no frames). */
const HIDDEN_FRAME_MS = 500;
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
 * Follow a replay's websocket while `enabled`. Messages are applied in batches, so a fast replay does not re-render
 * the page for every message: a cycle is drawn as soon as its last message is in, unless the last render is not on
 * screen yet (then the cycles that end meanwhile are drawn once, the newest, after that frame); a cycle still
 * arriving at most ~10 times a second (flushPolicy.ts). Changing replayId/mode/after opens a new stream.
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
    // when the last render ended, and how long it took
    let lastFlush = Number.NEGATIVE_INFINITY;
    let lastCost = 0;
    // the last render has not reached the screen yet: the next one waits for that frame (unless the last one drew
    // only part of a cycle: the complete cycle may replace it before it is painted)
    let framePending = false;
    let lastPartial = false;
    let frame: number | null = null;
    let frameTimer: ReturnType<typeof setTimeout> | null = null;
    let cancelTimer: (() => void) | null = null;
    let dueAt = Number.POSITIVE_INFINITY;
    const useRaf = typeof window.requestAnimationFrame === "function" && import.meta.env.MODE !== "test";
    const dueTime = () =>
      framePending && !(complete && lastPartial)
        ? Number.POSITIVE_INFINITY
        : flushDueAt({ pending: buffer.length > 0, complete, partialSince, lastFlush, lastCost, lastPartial });
    const cancel = () => {
      cancelTimer?.();
      cancelTimer = null;
      dueAt = Number.POSITIVE_INFINITY;
    };
    const arm = (due: number) => {
      cancel();
      if (due === Number.POSITIVE_INFINITY) return;
      dueAt = due;
      // ahead of the messages already queued: they would only join the buffer, after this render
      cancelTimer = later(flush, due - performance.now());
    };
    const framed = () => {
      if (frame !== null) window.cancelAnimationFrame(frame);
      if (frameTimer !== null) clearTimeout(frameTimer);
      frame = null;
      frameTimer = null;
      framePending = false;
      // not in this callback: what is rendered now would replace the last render before that one is painted
      if (buffer.length) arm(dueTime());
    };
    // Apply the buffer and render at once, in this task: a render left to React's scheduler would wait behind
    // every message already received (a fast replay sends hundreds a second).
    function flush() {
      cancel();
      if (!buffer.length) return;
      const due = dueTime();
      const start = performance.now();
      if (due > start + 1) {
        arm(due);
        return;
      }
      const batch = buffer;
      lastPartial = !complete;
      buffer = [];
      complete = false;
      partialSince = null;
      const next = reduce(stateRef.current, batch);
      stateRef.current = next;
      flushSync(() => setLive(next));
      lastFlush = performance.now();
      lastCost = lastFlush - start;
      // the frame that paints this render starts with its animation-frame callbacks
      framePending = true;
      if (frame !== null) window.cancelAnimationFrame(frame);
      if (frameTimer !== null) clearTimeout(frameTimer);
      // (a hidden page has no frames: the timer goes on applying what comes in, about once a second there)
      if (useRaf) frame = window.requestAnimationFrame(framed);
      frameTimer = setTimeout(framed, useRaf ? HIDDEN_FRAME_MS : 0);
    }
    function schedule() {
      const due = dueTime();
      if (due <= performance.now()) flush();
      else if (!(cancelTimer !== null && dueAt <= due)) arm(due);
    }
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
      if (frame !== null) window.cancelAnimationFrame(frame);
      if (frameTimer !== null) clearTimeout(frameTimer);
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
  // the same object while the stream lasts, so that callbacks built on it stay the same too
  const controls = useMemo(() => ({ play, pause, step, seek }), [play, pause, step, seek]);
  return { live, connection, detail, controls };
}
