import { act, renderHook } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SocketLike } from "./client";
import { useReplayStream } from "./useReplayStream";

class FakeSocket implements SocketLike {
  readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(public url: string) {}
  send() {}
  close() {
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  push(msg: object) {
    this.onmessage?.({ data: JSON.stringify(msg) });
  }
}

const hello = { type: "hello", replay: { id: "r", status: "running", attempt: 1, cyclesTotal: 3, cyclesDone: 0, nodeCount: 2 }, mode: "live", resumeAfter: "" };
const nodes = { type: "nodes", offset: 0, names: ["a", "b"] };
const start = (c: number) => ({ type: "cycle.start", pos: [c, 0], pod: `ns/p${c}`, profile: "default-scheduler", startIndex: 0, nodesToFind: 2, filterPlugins: ["F"], reasons: [] });
const stage = (c: number, p: number) => ({ type: "stage", pos: [c, p], point: "PreFilter", plugin: "X", code: "Success", reason: "", durationMicros: 1 });
const filter = (c: number, p: number) => ({ type: "filter", pos: [c, p], offset: 0, codes: [0, 0], plugins: [-1, -1], reasons: [-1, -1] });
const end = (c: number, p: number) => ({ type: "cycle.end", pos: [c, p], result: "Scheduled", node: "a", message: null, nominatedNode: null });

function setup() {
  const sockets: FakeSocket[] = [];
  // one factory for every render: a new one would open a new stream
  const socketFactory = (u: string) => {
    const s = new FakeSocket(u);
    sockets.push(s);
    return s;
  };
  let count = 0;
  const hook = renderHook(() => {
    count++;
    return useReplayStream(true, { replayId: "r", mode: "live", socketFactory });
  });
  expect(sockets).toHaveLength(1);
  const ws = sockets[0];
  act(() => {
    ws.open();
    ws.push(hello);
    ws.push(nodes);
  });
  const wait = (ms: number) => act(() => void vi.advanceTimersByTime(ms));
  return { hook, ws, wait, renders: () => count };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"] });
});
afterEach(() => vi.useRealTimers());

describe("useReplayStream batching", () => {
  it("shows the connection's news at once", () => {
    const { hook, wait } = setup();
    wait(20);
    expect(hook.result.current.live.status).toBe("running");
    expect(hook.result.current.live.names).toEqual(["a", "b"]);
  });

  it("draws a cycle whose messages come together once, complete, as soon as its last message is in", () => {
    const { hook, ws, wait } = setup();
    wait(200);
    act(() => {
      ws.push(start(1));
      ws.push(stage(1, 1));
    });
    wait(30);
    // not drawn half-way: the rest of the cycle is on its way
    expect(hook.result.current.live.cycle).toBeNull();
    act(() => {
      ws.push(filter(1, 2));
      ws.push(end(1, 3));
    });
    wait(20);
    const c = hook.result.current.live.lastCompleted;
    expect(c?.seq).toBe(1);
    expect(c?.stages).toHaveLength(1);
    expect(c?.verdictsReceived).toBe(2);
  });

  it("still draws a cycle that arrives slowly, before its end", () => {
    const { hook, ws, wait } = setup();
    wait(200);
    act(() => ws.push(start(1)));
    wait(150);
    expect(hook.result.current.live.cycle?.seq).toBe(1);
    expect(hook.result.current.live.lastCompleted).toBeNull();
  });

  it("draws a cycle that ends right after a render at once, without the 100 ms throttle of cycles still arriving", () => {
    const { hook, ws, wait } = setup();
    wait(200);
    act(() => {
      ws.push(start(1));
      ws.push(end(1, 1));
    });
    wait(1);
    expect(hook.result.current.live.lastCompleted?.seq).toBe(1);
    wait(20);
    act(() => {
      ws.push(start(2));
      ws.push(end(2, 1));
    });
    wait(1);
    expect(hook.result.current.live.lastCompleted?.seq).toBe(2);
    expect(hook.result.current.live.completed.map((q) => q.seq)).toEqual([1, 2]);
  });

  it("draws the cycles that end while the last one is just drawn once, the newest", () => {
    const { hook, ws, wait, renders } = setup();
    wait(200);
    const before = renders();
    act(() => {
      for (const c of [1, 2, 3]) {
        ws.push(start(c));
        ws.push(filter(c, 1));
        ws.push(end(c, 2));
      }
    });
    // the first is drawn as its last message comes in; the two others came within a frame of that render
    expect(renders() - before).toBe(1);
    expect(hook.result.current.live.lastCompleted?.seq).toBe(1);
    wait(20);
    expect(renders() - before).toBe(2);
    expect(hook.result.current.live.lastCompleted?.seq).toBe(3);
    expect(hook.result.current.live.completed.map((q) => q.seq)).toEqual([1, 2, 3]);
  });

  it("leaves a frame between two renders of complete cycles", () => {
    const { hook, ws, wait } = setup();
    wait(200);
    act(() => {
      ws.push(start(1));
      ws.push(end(1, 1));
    });
    wait(1);
    act(() => {
      ws.push(start(2));
      ws.push(end(2, 1));
    });
    wait(5);
    expect(hook.result.current.live.lastCompleted?.seq).toBe(1);
    wait(12);
    expect(hook.result.current.live.lastCompleted?.seq).toBe(2);
  });

  it("draws a cycle complete at once when only part of it was drawn last", () => {
    const { hook, ws, wait } = setup();
    wait(200);
    act(() => ws.push(start(1)));
    wait(100);
    expect(hook.result.current.live.cycle?.seq).toBe(1);
    expect(hook.result.current.live.lastCompleted).toBeNull();
    act(() => ws.push(end(1, 1)));
    expect(hook.result.current.live.lastCompleted?.seq).toBe(1);
  });

  it("redraws a cycle still arriving at most every 100 ms", () => {
    const { hook, ws, wait } = setup();
    wait(200);
    act(() => {
      ws.push(start(1));
      ws.push(end(1, 1));
    });
    expect(hook.result.current.live.lastCompleted?.seq).toBe(1);
    act(() => ws.push(start(2)));
    wait(30);
    act(() => ws.push(stage(2, 1)));
    wait(30);
    // cycle 2 is not drawn yet: what is shown is cycle 1
    expect(hook.result.current.live.cycle?.seq).toBe(1);
    wait(45);
    expect(hook.result.current.live.cycle?.seq).toBe(2);
    expect(hook.result.current.live.cycle?.stages).toHaveLength(1);
    expect(hook.result.current.live.lastCompleted?.seq).toBe(1);
  });
});
