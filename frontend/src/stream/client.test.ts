import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ReplayStream, type SocketLike } from "./client";
import type { ServerMsg } from "./protocol";

class FakeSocket implements SocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: unknown[] = [];
  closed: { code?: number } | null = null;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(public url: string) {
    FakeSocket.all.push(this);
  }
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close(code?: number) {
    this.closed = { code };
    this.readyState = 3;
  }
  // server side
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  push(msg: object | object[]) {
    this.onmessage?.({ data: JSON.stringify(msg) });
  }
  drop(code = 1006) {
    this.readyState = 3;
    this.onclose?.({ code });
  }
}

const hello = (attempt = 1) => ({
  type: "hello",
  replay: { id: "r", status: "running", attempt, cyclesTotal: 3, cyclesDone: 0, nodeCount: 2 },
  mode: "live",
  resumeAfter: "0.-1",
});
const start = (c: number) => ({ type: "cycle.start", pos: [c, 0], pod: `ns/p${c}`, profile: "default-scheduler", startIndex: 0, nodesToFind: 2, filterPlugins: [], reasons: [] });
const stage = (c: number, p: number) => ({ type: "stage", pos: [c, p], point: "PreFilter", plugin: "X", code: "Success", reason: "", durationMicros: 1 });
const end = (c: number, p: number) => ({ type: "cycle.end", pos: [c, p], result: "Scheduled", node: "a", message: null, nominatedNode: null });

function make(opts: Partial<ConstructorParameters<typeof ReplayStream>[0]> = {}) {
  const got: ServerMsg[] = [];
  const states: string[] = [];
  const resets: number[] = [];
  const s = new ReplayStream(
    {
      replayId: "r",
      mode: "live",
      url: (q) => `ws://test/ws/replays/r/?${q}`,
      socketFactory: (u) => new FakeSocket(u),
      initialBackoffMs: 100,
      maxBackoffMs: 400,
      keepAliveMs: 1000,
      now: () => Date.now(),
      ...opts,
    },
    { onMessage: (m) => got.push(m), onState: (st) => states.push(st), onReset: (a) => resets.push(a) },
  );
  return { s, got, states, resets, last: () => FakeSocket.all[FakeSocket.all.length - 1] };
}

const positions = (got: ServerMsg[]) => got.filter((m) => "pos" in m).map((m) => (m as { pos: number[] }).pos.join("."));

beforeEach(() => {
  FakeSocket.all = [];
  vi.useFakeTimers();
});
afterEach(() => vi.useRealTimers());

describe("ReplayStream", () => {
  it("passes messages in order and drops duplicates by position", () => {
    const { s, got, last } = make();
    s.start();
    const ws = last();
    ws.open();
    ws.push(hello());
    ws.push(start(1));
    ws.push(stage(1, 1));
    ws.push(stage(1, 1)); // duplicate
    ws.push(start(1)); // older
    ws.push(end(1, 2));
    ws.push(start(2));
    expect(positions(got)).toEqual(["1.0", "1.1", "1.2", "2.0"]);
    expect(s.stats.duplicates).toBe(2);
    expect(s.position).toEqual([2, 0]);
  });

  it("takes a batched frame's messages in order, with the same duplicate and gap checks", () => {
    const { s, got, last } = make();
    s.start();
    const ws = last();
    ws.open();
    ws.push(hello());
    ws.push([start(1), stage(1, 1), end(1, 2)]);
    ws.push([stage(1, 2), start(2), stage(2, 1)]); // 1.2 again: a duplicate inside a frame
    expect(positions(got)).toEqual(["1.0", "1.1", "1.2", "2.0", "2.1"]);
    expect(s.stats.duplicates).toBe(1);
    // a gap inside a frame: the rest of the frame is dropped and the stream resumes after 2.1
    ws.push([stage(2, 3), end(2, 4)]);
    expect(s.stats.gaps).toBe(1);
    expect(positions(got)).toEqual(["1.0", "1.1", "1.2", "2.0", "2.1"]);
    expect(ws.closed?.code).toBe(4000);
    expect(last().url).toContain("after=2.1&");
  });

  it("resumes with after=<last position> when the connection drops, and dedupes the overlap", () => {
    const { s, got, last, states } = make();
    s.start();
    let ws = last();
    expect(ws.url).toBe("ws://test/ws/replays/r/?mode=live&batch=1");
    ws.open();
    ws.push(hello());
    ws.push(start(1));
    ws.push(stage(1, 1));
    ws.drop();
    expect(states).toContain("reconnecting");
    expect(FakeSocket.all).toHaveLength(1);
    vi.advanceTimersByTime(100);
    ws = last();
    expect(FakeSocket.all).toHaveLength(2);
    expect(ws.url).toBe("ws://test/ws/replays/r/?after=1.1&mode=live&batch=1");
    ws.open();
    ws.push(hello());
    ws.push(stage(1, 1)); // the server resent one message we had
    ws.push(end(1, 2));
    expect(positions(got)).toEqual(["1.0", "1.1", "1.2"]);
  });

  it("backs off exponentially up to the maximum between failed reconnects", () => {
    const { s, last } = make();
    s.start();
    last().drop();
    vi.advanceTimersByTime(99);
    expect(FakeSocket.all).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.all).toHaveLength(2);
    last().drop();
    vi.advanceTimersByTime(199);
    expect(FakeSocket.all).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.all).toHaveLength(3);
    last().drop();
    vi.advanceTimersByTime(400);
    expect(FakeSocket.all).toHaveLength(4);
    last().drop();
    vi.advanceTimersByTime(400); // capped at 400
    expect(FakeSocket.all).toHaveLength(5);
  });

  it("reconnects at once after a gap in live mode, asking for what is missing", () => {
    const { s, got, last } = make();
    s.start();
    const ws = last();
    ws.open();
    ws.push(hello());
    ws.push(start(1));
    ws.push(stage(1, 3)); // 1.1 and 1.2 are missing
    expect(positions(got)).toEqual(["1.0"]);
    expect(s.stats.gaps).toBe(1);
    expect(ws.closed).not.toBeNull();
    expect(last().url).toContain("after=1.0");
  });

  it("treats a later cycle that does not start at part 0 as a gap", () => {
    const { s, got, last } = make();
    s.start();
    last().open();
    last().push(hello());
    last().push(start(1));
    last().push(stage(2, 1));
    expect(positions(got)).toEqual(["1.0"]);
    expect(s.stats.gaps).toBe(1);
  });

  it("resumes from an initial after= and accepts only what follows it", () => {
    const { s, got, last } = make({ after: "5" });
    s.start();
    expect(last().url).toContain("after=5&");
    last().open();
    last().push(hello());
    last().push(stage(5, 7)); // part of cycle 5: already had it
    last().push(start(6));
    expect(positions(got)).toEqual(["6.0"]);
  });

  it("starts over when a new attempt of the replay (a re-run) says hello", () => {
    const { s, got, last, resets } = make();
    s.start();
    last().open();
    last().push(hello(1));
    last().push(start(1));
    last().push(stage(1, 1));
    last().push(hello(2));
    last().push(start(1));
    expect(resets).toEqual([2]);
    expect(positions(got)).toEqual(["1.0", "1.1", "1.0"]);
  });

  it("does not reconnect when the server refuses the replay", () => {
    const { s, last, states } = make();
    s.start();
    last().drop(4404);
    vi.advanceTimersByTime(10_000);
    expect(FakeSocket.all).toHaveLength(1);
    expect(states[states.length - 1]).toBe("failed");
  });

  it("stop() closes the socket and never reconnects", () => {
    const { s, last, states } = make();
    s.start();
    last().open();
    s.stop();
    vi.advanceTimersByTime(10_000);
    expect(FakeSocket.all).toHaveLength(1);
    expect(states[states.length - 1]).toBe("closed");
  });

  it("pings when the line is quiet and reconnects when the ping goes unanswered", () => {
    const { s, last } = make();
    s.start();
    const ws = last();
    ws.open();
    ws.push(hello());
    vi.advanceTimersByTime(1000);
    expect(ws.sent).toContainEqual({ action: "ping" });
    vi.advanceTimersByTime(1000);
    expect(ws.closed).not.toBeNull();
    expect(FakeSocket.all).toHaveLength(2);
  });

  it("playback: sends controls, and replays them on a new connection", () => {
    const { s, last } = make({ mode: "playback", after: "3" });
    s.play(5); // before the socket opens
    s.start();
    let ws = last();
    expect(ws.url).toContain("mode=playback");
    ws.open();
    expect(ws.sent).toEqual([{ action: "play", speed: 5 }]);
    s.pause();
    s.step();
    expect(ws.sent.slice(1)).toEqual([{ action: "pause" }, { action: "step" }]);
    s.play(10);
    ws.drop();
    vi.advanceTimersByTime(100);
    ws = last();
    ws.open();
    expect(ws.sent).toEqual([{ action: "play", speed: 10 }]);
  });

  it("playback seek: drops what was in flight and asks again if the server sent another cycle", () => {
    const { s, got, last } = make({ mode: "playback" });
    s.start();
    const ws = last();
    ws.open();
    ws.push({ ...hello(), mode: "playback" });
    s.step();
    ws.push(start(1));
    ws.push(stage(1, 1));
    s.seek(3); // paused: seek + step
    expect(ws.sent.slice(-2)).toEqual([{ action: "seek", cycle: 3 }, { action: "step" }]);
    ws.push(stage(1, 2)); // leftover of cycle 1
    ws.push(start(2)); // the server had not seen the seek yet
    expect(ws.sent[ws.sent.length - 1]).toEqual({ action: "seek", cycle: 3 });
    ws.push(stage(2, 1));
    ws.push(start(3));
    ws.push(end(3, 1));
    expect(positions(got)).toEqual(["1.0", "1.1", "3.0", "3.1"]);
  });
});
