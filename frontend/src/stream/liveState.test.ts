import { describe, expect, it } from "vitest";
import { INITIAL_LIVE, reduce } from "./liveState";
import type { ServerMsg } from "./protocol";

const hello = (attempt: number): ServerMsg => ({
  type: "hello",
  replay: { id: "r", status: "running", attempt, cyclesTotal: 2, cyclesDone: 0, nodeCount: 3 },
  mode: "live",
  resumeAfter: "",
});

const cycle1: ServerMsg[] = [
  { type: "cycle.start", pos: [1, 0], pod: "ns/a", profile: "p", startIndex: 0, nodesToFind: 3, filterPlugins: ["NodeResourcesFit", "TaintToleration"], reasons: [["Insufficient cpu"], ["node(s) had untolerated taint(s)"]] },
  { type: "stage", pos: [1, 1], point: "PreFilter", plugin: "NodeResourcesFit", code: "Success", reason: "", durationMicros: 5 },
  { type: "filter", pos: [1, 2], offset: 0, codes: [0, 2], plugins: [-1, 0], reasons: [-1, 0] },
  { type: "filter", pos: [1, 3], offset: 2, codes: [3], plugins: [1], reasons: [1] },
  { type: "score", pos: [1, 4], plugins: ["NodeResourcesFit"], weights: [1], skipped: [], feasible: 1, top: [{ node: 0, total: 80, raw: [80], normalized: [80] }], aggregates: {} },
  { type: "selection", pos: [1, 5], node: 0, tied: 1, tiedNodes: [0], total: 80 },
  { type: "cycle.end", pos: [1, 6], result: "Scheduled", node: "n0", message: null, nominatedNode: null },
];

describe("reduce", () => {
  it("builds the cycle from its messages and records it in the queue when it ends", () => {
    let s = reduce(INITIAL_LIVE, [hello(1), { type: "nodes", offset: 0, names: ["n0", "n1", "n2"] }]);
    s = reduce(s, cycle1.slice(0, 3));
    expect(s.cycle?.pod).toBe("ns/a");
    expect(Array.from(s.cycle!.codes)).toEqual([0, 2, -1]);
    expect(s.completed).toEqual([]);
    s = reduce(s, cycle1.slice(3));
    expect(Array.from(s.cycle!.codes)).toEqual([0, 2, 3]);
    expect(Array.from(s.cycle!.plugins)).toEqual([-1, 0, 1]);
    expect(s.cycle!.stages.map((x) => x.plugin)).toEqual(["NodeResourcesFit"]);
    expect(s.cycle!.selection?.node).toBe(0);
    expect(s.completed).toEqual([{ seq: 1, pod: "ns/a", result: "Scheduled", node: "n0", message: null }]);
  });

  it("never mutates the state it is given", () => {
    const s0 = reduce(INITIAL_LIVE, [hello(1), { type: "nodes", offset: 0, names: ["n0", "n1", "n2"] }, cycle1[0]]);
    const before = { stages: s0.cycle!.stages.length, codes: Array.from(s0.cycle!.codes), version: s0.cycle!.version };
    const s1 = reduce(s0, cycle1.slice(1));
    expect(s1.cycle).not.toBe(s0.cycle);
    expect(s0.cycle!.stages.length).toBe(before.stages);
    expect(Array.from(s0.cycle!.codes)).toEqual(before.codes);
    expect(s0.cycle!.end).toBeNull();
    expect(s1.cycle!.version).toBeGreaterThan(before.version);
  });

  it("keeps the last completed cycle while the next one streams", () => {
    let s = reduce(INITIAL_LIVE, [hello(1), { type: "nodes", offset: 0, names: ["n0", "n1", "n2"] }, ...cycle1]);
    expect(s.lastCompleted?.seq).toBe(1);
    s = reduce(s, [{ ...(cycle1[0] as object), pos: [2, 0], pod: "ns/b" } as ServerMsg]);
    expect(s.cycle?.seq).toBe(2);
    expect(s.cycle?.end).toBeNull();
    expect(s.lastCompleted?.seq).toBe(1);
    expect(s.lastCompleted?.end?.node).toBe("n0");
  });

  it("appends node names chunk by chunk", () => {
    const s = reduce(INITIAL_LIVE, [
      { type: "nodes", offset: 0, names: ["a", "b"] },
      { type: "nodes", offset: 2, names: ["c"] },
    ]);
    expect(s.names).toEqual(["a", "b", "c"]);
  });

  it("forgets the previous attempt's cycles when a re-run says hello", () => {
    let s = reduce(INITIAL_LIVE, [hello(1), { type: "nodes", offset: 0, names: ["n0", "n1", "n2"] }, ...cycle1]);
    expect(s.completed).toHaveLength(1);
    s = reduce(s, [hello(2)]);
    expect(s.attempt).toBe(2);
    expect(s.completed).toEqual([]);
    expect(s.cycle).toBeNull();
  });

  it("tracks status and counts the end of playback", () => {
    let s = reduce(INITIAL_LIVE, [hello(1), { type: "status", status: "succeeded", cyclesDone: 2, cyclesTotal: 2, reason: "" }]);
    expect(s.status).toBe("succeeded");
    s = reduce(s, [{ type: "end", after: "2.6" }, { type: "end", after: "2.6" }]);
    expect(s.ended).toBe(true);
    expect(s.endCount).toBe(2);
  });
});
