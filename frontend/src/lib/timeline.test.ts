import { describe, expect, it } from "vitest";
import type { SnapshotNode, TimelineCycle } from "../api/types";
import { allocationMatrix, normalizeLatency, normalizeTimeline, requestedAt } from "./timeline";

const node = (name: string, cpu: number, used: number): SnapshotNode => ({
  name,
  zone: "z",
  region: "r",
  allocatable: { cpu, pods: 10 },
  requested: { cpu: used, pods: 1 },
  nonZeroRequested: {},
  podCount: 1,
  taints: [],
  unschedulable: false,
  labels: {},
});
const nodes = [node("a", 1000, 100), node("b", 2000, 0)];
const cycles: TimelineCycle[] = [
  { seq: 1, pod: "p1", result: "Scheduled", node: "a", requests: { cpu: 400 } },
  { seq: 2, pod: "p2", result: "Unschedulable", node: null, requests: { cpu: 9000 } },
  { seq: 3, pod: "p3", result: "Scheduled", node: "b", requests: { cpu: 1000 } },
  { seq: 4, pod: "p4", result: "Waiting", node: "a", requests: { cpu: 600 } },
];

describe("allocation over time", () => {
  it("adds the requests of placed pods (Scheduled and Waiting) cycle by cycle", () => {
    expect(Array.from(requestedAt(nodes, cycles, "cpu", 0))).toEqual([100, 0]);
    expect(Array.from(requestedAt(nodes, cycles, "cpu", 2))).toEqual([500, 0]);
    expect(Array.from(requestedAt(nodes, cycles, "cpu", 4))).toEqual([1100, 1000]);
    expect(Array.from(requestedAt(nodes, cycles, "pods", 4))).toEqual([3, 2]);
  });
  it("counts a pod that waited at Permit once, and gives its reservation back when it does not bind", () => {
    const more: TimelineCycle[] = [
      ...cycles,
      { seq: 5, pod: "p4", result: "Scheduled", node: "a", requests: { cpu: 600 }, kind: "Binding", follows: 4 },
      { seq: 6, pod: "p5", result: "Waiting", node: "b", requests: { cpu: 300 } },
      { seq: 7, pod: "p5", result: "Unschedulable", node: null, requests: { cpu: 300 }, kind: "Binding", follows: 6 },
    ];
    expect(Array.from(requestedAt(nodes, more, "cpu", 5))).toEqual([1100, 1000]);
    expect(Array.from(requestedAt(nodes, more, "cpu", 6))).toEqual([1100, 1300]);
    expect(Array.from(requestedAt(nodes, more, "cpu", 7))).toEqual([1100, 1000]);
    expect(Array.from(requestedAt(nodes, more, "pods", 7))).toEqual([3, 2]);
    const m = allocationMatrix(nodes, more, "cpu", 100, 100);
    expect(Array.from(m.values.slice(m.cols, 2 * m.cols)).map((v) => Math.round(v * 100))).toEqual([0, 0, 0, 50, 50, 50, 65, 50]);
  });
  it("takes a preemption's victims off their nodes in the cycle that evicted them", () => {
    const preempting: TimelineCycle[] = [
      { seq: 1, pod: "hi", result: "Unschedulable", node: null, requests: { cpu: 900 }, evictions: [{ pod: "lo", node: "a", requests: { cpu: 100 } }] },
      { seq: 2, pod: "hi", result: "Scheduled", node: "a", requests: { cpu: 900 }, attempt: 2 },
    ];
    expect(Array.from(requestedAt(nodes, preempting, "cpu", 1))).toEqual([0, 0]);
    expect(Array.from(requestedAt(nodes, preempting, "cpu", 2))).toEqual([900, 0]);
    expect(Array.from(requestedAt(nodes, preempting, "pods", 2))).toEqual([1, 1]);
    const m = allocationMatrix(nodes, preempting, "cpu", 100, 100);
    expect(Array.from(m.values.slice(0, m.cols)).map((v) => Math.round(v * 100))).toEqual([10, 0, 90]);
  });
  it("makes one column per cycle (plus the start) and one row per node", () => {
    const m = allocationMatrix(nodes, cycles, "cpu", 100, 100);
    expect([m.rows, m.cols]).toEqual([2, 5]);
    const row = (r: number) => Array.from(m.values.slice(r * m.cols, (r + 1) * m.cols)).map((v) => Math.round(v * 100));
    expect(row(0)).toEqual([10, 50, 50, 50, 110]);
    expect(row(1)).toEqual([0, 0, 0, 50, 50]);
  });
  it("buckets columns and rows when there are more than fit, keeping the busiest node of a row", () => {
    const m = allocationMatrix(nodes, cycles, "cpu", 2, 1);
    expect([m.rows, m.cols]).toEqual([1, 2]);
    expect(m.colCycle).toEqual([2, 4]);
    expect(Array.from(m.values).map((v) => Math.round(v * 100))).toEqual([50, 110]);
    expect(m.rowNodes).toEqual([[0, 1]]);
  });
  it("narrows the columns to a span of cycles, counting the cycles before it", () => {
    const m = allocationMatrix(nodes, cycles, "cpu", 100, 100, undefined, { from: 2, to: 3 });
    expect([m.rows, m.cols]).toEqual([2, 2]);
    expect(m.colCycle).toEqual([2, 3]);
    const row = (r: number) => Array.from(m.values.slice(r * m.cols, (r + 1) * m.cols)).map((v) => Math.round(v * 100));
    expect(row(0)).toEqual([50, 50]);
    expect(row(1)).toEqual([0, 50]);
    // a span past the end is clamped to the last cycle; one of nodes only (a zoom on rows)
    const last = allocationMatrix(nodes.slice(1), cycles, "cpu", 100, 100, undefined, { from: 4, to: 99 });
    expect([last.rows, last.cols, last.colCycle]).toEqual([1, 1, [4]]);
    expect(Array.from(last.values).map((v) => Math.round(v * 100))).toEqual([50]);
  });
});

describe("normalizers", () => {
  it("reads the timeline answer", () => {
    const t = normalizeTimeline({ replay: "r", cycles: [{ seq: 2, pod: "b", result: "Scheduled", node: "n", requests: { cpu: 1 } }, { seq: 1, pod: "a", result: "Gated", node: null }] });
    expect(t.map((c) => c.seq)).toEqual([1, 2]);
    expect(t[0].requests).toEqual({});
    expect(t[0].node).toBeNull();
  });
  it("reads the latency answer in its shapes", () => {
    const l = normalizeLatency({ plugins: [{ point: "Filter", plugin: "NodeResourcesFit", calls: 4, totalMicros: 40, meanMicros: 10, p50Micros: 9, p95Micros: 20, maxMicros: 21 }] });
    expect(l[0]).toMatchObject({ point: "Filter", plugin: "NodeResourcesFit", calls: 4, meanMicros: 10, p95Micros: 20 });
    const keyed = normalizeLatency({ "Score/ImageLocality": { count: 2, total: 8 } });
    expect(keyed[0]).toMatchObject({ point: "Score", plugin: "ImageLocality", calls: 2, totalMicros: 8, meanMicros: 4 });
  });
});
