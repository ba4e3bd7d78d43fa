import { describe, expect, it } from "vitest";
import type { LiveSummary } from "../api/live";
import { INITIAL_CLUSTER_STREAM, reduceCluster, type ClusterMsg } from "./clusterState";

const summary = (over: Partial<LiveSummary> = {}): LiveSummary => ({
  cycles: 3,
  match: 2,
  tie: 0,
  diverged: 1,
  skipped: 0,
  byCode: { score: 1 },
  lastCycleAt: "2026-01-01T00:00:00Z",
  ...over,
});

const hello: ClusterMsg = {
  type: "hello",
  cluster: { id: "c1", name: "prod", status: "syncing", message: "listing pods", cyclesDone: 3, summary: summary(), workerAlive: true },
  mode: "live",
  resumeAfter: "3.1000000000",
};
const nodes = (names: string[], nodeSet: number, offset = 0): ClusterMsg => ({ type: "nodes", offset, names, nodeSet });
const start = (seq: number, pod: string): ClusterMsg => ({
  type: "cycle.start",
  pos: [seq, 0],
  pod,
  profile: "default-scheduler",
  startIndex: 0,
  nodesToFind: 3,
  filterPlugins: [],
  reasons: [],
});
const score = (seq: number, part: number, feasible: number): ClusterMsg => ({
  type: "score",
  pos: [seq, part],
  plugins: ["NodeResourcesFit"],
  weights: [1],
  skipped: [],
  feasible,
  top: [],
  aggregates: {},
});
const selection = (seq: number, part: number, node: number, total: number): ClusterMsg => ({ type: "selection", pos: [seq, part], node, tied: 1, tiedNodes: [node], total });
const end = (seq: number, part: number, node: string | null, result = "Scheduled"): ClusterMsg => ({
  type: "cycle.end",
  pos: [seq, part],
  result,
  node,
  message: null,
  nominatedNode: null,
});
const verdict = (seq: number, part: number, pod: string, over: Record<string, unknown> = {}): ClusterMsg =>
  ({
    type: "live.verdict",
    pos: [seq, part],
    pod,
    trigger: "bound",
    triggerSource: "pod",
    observed: "2026-01-01T00:00:05Z",
    occurred: null,
    resourceVersion: String(100 + seq),
    actual: { result: "Scheduled", node: "b", message: null, scheduler: "default-scheduler" },
    replay: { result: "Scheduled", node: "b", message: null, tiedCount: 1 },
    agreement: "match",
    divergence: null,
    explanations: [],
    notes: [],
    exact: true,
    gap: false,
    error: null,
    ...over,
  }) as ClusterMsg;

describe("reduceCluster", () => {
  it("takes the cluster from hello and every status message, counting the status messages", () => {
    let s = reduceCluster(INITIAL_CLUSTER_STREAM, [hello]);
    expect(s.cluster).toMatchObject({ name: "prod", status: "syncing", message: "listing pods", cyclesDone: 3, workerAlive: true });
    expect(s.statusCount).toBe(0);
    s = reduceCluster(s, [
      { type: "status", status: "watching", message: "", cyclesDone: 4, summary: summary({ cycles: 4, match: 3 }), workerAlive: true },
    ]);
    expect(s.cluster).toMatchObject({ id: "c1", name: "prod", status: "watching", message: "", cyclesDone: 4 });
    expect(s.cluster?.summary.match).toBe(3);
    expect(s.statusCount).toBe(1);
    s = reduceCluster(s, [{ type: "status", status: "stopped", message: "no worker", cyclesDone: 4, summary: summary({ cycles: 4 }), workerAlive: false }]);
    expect(s.cluster?.workerAlive).toBe(false);
    expect(s.statusCount).toBe(2);
  });

  it("turns a streamed cycle and its verdict into a decision, with the replay's choice resolved by the node set", () => {
    const s = reduceCluster(INITIAL_CLUSTER_STREAM, [
      hello,
      nodes(["a", "b", "c"], 7),
      start(4, "shop/web-1"),
      score(4, 1, 3),
      selection(4, 2, 2, 412),
      end(4, 3, "c"),
      verdict(4, 4, "shop/web-1", {
        actual: { result: "Scheduled", node: "a", message: null, scheduler: "default-scheduler" },
        replay: { result: "Scheduled", node: "c", message: null, tiedCount: 1 },
        agreement: "diverged",
        divergence: "score",
        explanations: [{ code: "score", message: "the replay scores a 380 and c 412", details: { byPlugin: { NodeResourcesFit: 32 } } }],
      }),
    ]);
    expect(s.nodeSet).toBe(7);
    expect(s.names).toEqual(["a", "b", "c"]);
    expect(s.current).toBeNull();
    expect(s.received).toBe(1);
    expect(s.decisions).toHaveLength(1);
    const d = s.decisions[0];
    expect(d).toMatchObject({ seq: 4, pod: "shop/web-1", namespace: "shop", agreement: "diverged", divergence: "score", feasible: 3, winnerTotal: 412 });
    expect(d.actual.node).toBe("a");
    expect(d.replay.node).toBe("c");
    expect(d.explanations[0].message).toContain("412");
    // the last stored seq follows the verdicts
    expect(s.cluster?.cyclesDone).toBe(4);
  });

  it("resolves node indices with the latest node set, and keeps a cycle in flight until its verdict", () => {
    let s = reduceCluster(INITIAL_CLUSTER_STREAM, [hello, nodes(["a", "b"], 1), start(4, "ns/p4"), selection(4, 1, 1, 10)]);
    expect(s.current).toMatchObject({ seq: 4, pod: "ns/p4", node: "b", total: 10 });
    expect(s.decisions).toEqual([]);
    s = reduceCluster(s, [end(4, 2, "b"), verdict(4, 3, "ns/p4")]);
    // a node joined: the server sends the new set before the next cycle
    s = reduceCluster(s, [nodes(["a", "b", "new-0"], 2), start(5, "ns/p5"), selection(5, 1, 2, 20)]);
    expect(s.nodeSet).toBe(2);
    expect(s.current?.node).toBe("new-0");
    // a set sent in chunks: the second chunk appends at its offset
    s = reduceCluster(s, [nodes(["x", "y"], 3), nodes(["z"], 3, 2)]);
    expect(s.names).toEqual(["x", "y", "z"]);
  });

  it("lists decisions newest first, once each, and keeps only the newest", () => {
    let s = reduceCluster(INITIAL_CLUSTER_STREAM, [hello, verdict(5, 0, "ns/a", { agreement: "skipped", error: "unknown pod" }), verdict(6, 0, "ns/b")]);
    expect(s.decisions.map((d) => d.seq)).toEqual([6, 5]);
    expect(s.decisions[1]).toMatchObject({ agreement: "skipped", error: "unknown pod", feasible: null });
    // a resent verdict (after a reconnect) replaces its decision instead of adding one
    s = reduceCluster(s, [verdict(6, 0, "ns/b", { agreement: "tie", divergence: "tie" })]);
    expect(s.decisions.map((d) => [d.seq, d.agreement])).toEqual([
      [6, "tie"],
      [5, "skipped"],
    ]);
    s = reduceCluster(s, [verdict(7, 0, "ns/c"), verdict(8, 0, "ns/d")], 3);
    expect(s.decisions.map((d) => d.seq)).toEqual([8, 7, 6]);
    expect(s.received).toBe(5);
  });

  it("never changes the state it is given", () => {
    const before = reduceCluster(INITIAL_CLUSTER_STREAM, [hello, nodes(["a"], 1), verdict(4, 0, "ns/a")]);
    const copy = JSON.parse(JSON.stringify(before));
    const after = reduceCluster(before, [nodes(["b"], 2), start(5, "ns/b"), verdict(5, 1, "ns/b"), { type: "status", status: "degraded", message: "m", cyclesDone: 5, summary: summary(), workerAlive: true }]);
    expect(JSON.parse(JSON.stringify(before))).toEqual(copy);
    expect(after.decisions).toHaveLength(2);
    expect(before.decisions).toHaveLength(1);
  });

  it("notes that the cluster was deleted", () => {
    const s = reduceCluster(INITIAL_CLUSTER_STREAM, [hello, { type: "error", code: "gone", message: "the cluster was deleted" }]);
    expect(s.gone).toBe(true);
    expect(s.error).toBe("the cluster was deleted");
  });
});
