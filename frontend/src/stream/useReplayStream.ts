import { useCallback, useEffect, useRef, useState } from "react";
import { ReplayStream, type ConnectionState, type StreamOptions } from "./client";
import { INITIAL_LIVE, reduce, type LiveState } from "./liveState";
import type { ServerMsg } from "./protocol";

const MIN_FLUSH_MS = 100;

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
 * Follow a replay's websocket while `enabled`. Messages are applied in batches, at most once per animation
 * frame, so a fast replay does not re-render the page for every message. Changing replayId/mode/after opens
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
    let scheduled: number | null = null;
    let lastFlush = 0;
    const useRaf = typeof window.requestAnimationFrame === "function" && import.meta.env.MODE !== "test";
    const flush = () => {
      // at most ~10 renders a second: a 5000-node cycle costs a few milliseconds to lay out
      const wait = lastFlush + MIN_FLUSH_MS - performance.now();
      if (wait > 0) {
        scheduled = setTimeout(flush, wait) as unknown as number;
        scheduledIsTimer = true;
        return;
      }
      lastFlush = performance.now();
      scheduled = null;
      if (!buffer.length) return;
      const batch = buffer;
      buffer = [];
      stateRef.current = reduce(stateRef.current, batch);
      setLive(stateRef.current);
    };
    let scheduledIsTimer = false;
    const schedule = () => {
      if (scheduled !== null) return;
      scheduledIsTimer = !useRaf;
      scheduled = useRaf ? window.requestAnimationFrame(flush) : (setTimeout(flush, 16) as unknown as number);
    };
    const stream = new ReplayStream(
      { replayId, mode, after, topk, socketFactory },
      {
        onMessage: (m) => {
          buffer.push(m);
          schedule();
        },
        onState: (s, d) => {
          setConnection(s);
          setDetail(d);
        },
        onReset: () => {
          buffer = [];
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
      if (scheduled !== null) {
        if (scheduledIsTimer) clearTimeout(scheduled);
        else window.cancelAnimationFrame(scheduled);
      }
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
