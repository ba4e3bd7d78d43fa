import { describe, expect, it } from "vitest";
import {
  applyQuery,
  assignRanks,
  DEFAULT_QUERY,
  filterRows,
  inRankOrder,
  labelIndex,
  paramsWithQuery,
  queryFromParams,
  rejectingPlugins,
  rowsFromStream,
  sortRows,
  type NodeRow,
  type Verdict,
} from "./nodes";

function row(name: string, over: Partial<NodeRow> = {}): NodeRow {
  return { index: 0, name, verdict: "passed", code: "Success", plugin: "", reasons: [], scores: null, total: null, rank: 0, ...over };
}

const rows: NodeRow[] = [
  row("node-10", { rank: 1, total: 90, scores: { Fit: { raw: 9, normalized: 90, weighted: 90 }, Taints: { raw: 0, normalized: 100, weighted: 300 } } }),
  row("node-2", { rank: 2, total: 80, scores: { Fit: { raw: 8, normalized: 95, weighted: 95 }, Taints: { raw: 1, normalized: 0, weighted: 0 } } }),
  row("gpu-1", { rank: 3, verdict: "failed", code: "UnschedulableAndUnresolvable", plugin: "TaintToleration", reasons: ["node(s) had untolerated taint(s)"] }),
  row("node-3", { rank: 4, verdict: "failed", code: "Unschedulable", plugin: "NodeResourcesFit", reasons: ["Insufficient cpu"] }),
  row("node-4", { rank: 5, verdict: "failed", code: "Unschedulable", plugin: "NodeResourcesFit", reasons: ["Insufficient memory"] }),
  row("far-1", { rank: 6, verdict: "not-evaluated", code: "" }),
];

describe("filterRows", () => {
  it("filters by verdict, rejecting plugin and name search (case-insensitive)", () => {
    expect(filterRows(rows, { verdict: "failed", plugin: "", search: "" }).map((r) => r.name)).toEqual(["gpu-1", "node-3", "node-4"]);
    expect(filterRows(rows, { verdict: "", plugin: "NodeResourcesFit", search: "" }).map((r) => r.name)).toEqual(["node-3", "node-4"]);
    expect(filterRows(rows, { verdict: "", plugin: "", search: "NODE-" }).map((r) => r.name)).toEqual(["node-10", "node-2", "node-3", "node-4"]);
    expect(filterRows(rows, { verdict: "passed", plugin: "", search: "2" }).map((r) => r.name)).toEqual(["node-2"]);
    expect(filterRows(rows, { verdict: "not-evaluated", plugin: "", search: "" }).map((r) => r.name)).toEqual(["far-1"]);
  });
});

describe("search by label", () => {
  const labels = labelIndex([
    { name: "node-10", labels: { "topology.kubernetes.io/zone": "zone-b", pool: "general" } },
    { name: "node-2", labels: { "topology.kubernetes.io/zone": "zone-a", pool: "gpu" } },
    { name: "gpu-1", labels: { "topology.kubernetes.io/zone": "zone-b", pool: "gpu" } },
  ]);
  const names = (search: string) => filterRows(rows, { verdict: "", plugin: "", search }, labels).map((r) => r.name);
  it("finds a label value, a key=value pair, and needs every word", () => {
    expect(names("zone-b")).toEqual(["node-10", "gpu-1"]);
    expect(names("pool=gpu")).toEqual(["node-2", "gpu-1"]);
    expect(names("POOL=GPU zone-b")).toEqual(["gpu-1"]);
    // a name still matches, and a node without labels is found by its name only
    expect(names("node-4")).toEqual(["node-4"]);
    expect(names("pool=gpux")).toEqual([]);
  });
  it("without the labels, searches names only", () => {
    expect(filterRows(rows, { verdict: "", plugin: "", search: "zone-b" }).map((r) => r.name)).toEqual([]);
    expect(applyQuery(rows, { ...DEFAULT_QUERY, search: "pool=gpu" }, labels).map((r) => r.name)).toEqual(["node-2", "gpu-1"]);
  });
});

describe("sortRows", () => {
  it("sorts by name with numbers in numeric order, both ways", () => {
    expect(sortRows(rows, "name", false).map((r) => r.name)).toEqual(["far-1", "gpu-1", "node-2", "node-3", "node-4", "node-10"]);
    expect(sortRows(rows, "name", true).map((r) => r.name)[0]).toBe("node-10");
  });
  it("sorts by a plugin's score in the chosen mode, best first, unscored last either way", () => {
    expect(sortRows(rows, "score:Fit", false, "normalized").map((r) => r.name).slice(0, 2)).toEqual(["node-2", "node-10"]);
    expect(sortRows(rows, "score:Fit", false, "raw").map((r) => r.name).slice(0, 2)).toEqual(["node-10", "node-2"]);
    expect(sortRows(rows, "score:Taints", false, "weighted").map((r) => r.name).slice(0, 2)).toEqual(["node-10", "node-2"]);
    const desc = sortRows(rows, "total", true).map((r) => r.name);
    expect(desc.slice(0, 2)).toEqual(["node-2", "node-10"]);
    expect(desc.slice(2)).toEqual(["gpu-1", "node-3", "node-4", "far-1"]);
  });
  it("groups by verdict, then rejecting plugin", () => {
    expect(sortRows(rows, "verdict", false).map((r) => r.name)).toEqual(["node-10", "node-2", "node-3", "node-4", "gpu-1", "far-1"]);
  });
  it("does not reorder its input", () => {
    const copy = [...rows];
    sortRows(rows, "name", true);
    expect(rows).toEqual(copy);
  });
});

describe("rowsFromStream", () => {
  it("maps codes, plugins and reasons, scores for the streamed top nodes, and ranks like the server", () => {
    const r = rowsFromStream(
      ["a", "b", "c", "d"],
      { filterPlugins: ["NodeResourcesFit"], reasons: [["Insufficient cpu"]], codes: [0, 2, 0, -1], plugins: [-1, 0, -1, -1], reasonIds: [-1, 0, -1, -1] },
      { plugins: ["NodeResourcesFit", "TaintToleration"], weights: [1, 3], top: [{ node: 2, total: 150, raw: [50, 0], normalized: [50, 33] }] },
    );
    expect(r.map((x) => [x.name, x.verdict, x.rank])).toEqual([
      ["a", "passed", 2],
      ["b", "failed", 3],
      ["c", "passed", 1],
      ["d", "not-evaluated", 4],
    ]);
    expect(r[1]).toMatchObject({ plugin: "NodeResourcesFit", code: "Unschedulable", reasons: ["Insufficient cpu"] });
    expect(r[2].scores?.TaintToleration).toEqual({ raw: 0, normalized: 33, weighted: 99 });
    expect(r[0].scores).toBeNull();
  });
});

describe("query in the URL", () => {
  it("round-trips, leaving defaults out", () => {
    const q = { ...DEFAULT_QUERY, sort: "score:Fit" as const, desc: true, verdict: "failed" as const, plugin: "X", search: "gpu", mode: "raw" as const };
    const sp = paramsWithQuery(new URLSearchParams("node=a"), q);
    expect(sp.get("node")).toBe("a");
    expect(queryFromParams(sp)).toEqual(q);
    expect(paramsWithQuery(new URLSearchParams(), DEFAULT_QUERY).toString()).toBe("");
  });
  it("falls back to defaults on nonsense", () => {
    expect(queryFromParams(new URLSearchParams("sort=bogus&verdict=x&mode=y"))).toEqual(DEFAULT_QUERY);
  });
});

describe("rejectingPlugins / applyQuery", () => {
  it("counts rejections per plugin, most first", () => {
    expect(rejectingPlugins(rows)).toEqual([
      ["NodeResourcesFit", 2],
      ["TaintToleration", 1],
    ]);
  });
  it("filters then sorts", () => {
    expect(applyQuery(rows, { ...DEFAULT_QUERY, verdict: "failed", sort: "name", desc: true }).map((r) => r.name)).toEqual(["node-4", "node-3", "gpu-1"]);
  });
});

/** A small deterministic generator (mulberry32), so that failures reproduce. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Rows as a streamed cycle has them: every verdict, totals for some passed nodes (with ties), in a shuffled order. */
function randomRows(n: number, seed: number): NodeRow[] {
  const r = rng(seed);
  const verdicts: Verdict[] = ["passed", "failed", "not-evaluated"];
  const out: NodeRow[] = [];
  for (let i = 0; i < n; i++) {
    const verdict = verdicts[Math.floor(r() * 3)];
    const total = verdict === "passed" && r() < 0.3 ? Math.floor(r() * 5) * 10 - 10 : null;
    out.push(row(`n${i}`, { index: i, verdict, total }));
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The ranking by its definition: verdict, then total (highest first, none last), then index. */
function referenceRanks(rows: NodeRow[]): Map<string, number> {
  const order: Record<Verdict, number> = { passed: 0, failed: 1, "not-evaluated": 2 };
  const sorted = [...rows].sort(
    (a, b) =>
      order[a.verdict] - order[b.verdict] ||
      (b.total ?? Number.NEGATIVE_INFINITY) - (a.total ?? Number.NEGATIVE_INFINITY) ||
      a.index - b.index,
  );
  return new Map(sorted.map((x, k) => [x.name, k + 1]));
}

describe("assignRanks", () => {
  it("ranks passed nodes by total, then rejected, then not evaluated, ties by index, whatever the input order", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rows = randomRows(400, seed);
      const want = referenceRanks(rows);
      assignRanks(rows);
      for (const x of rows) expect(x.rank, `${x.name} (seed ${seed})`).toBe(want.get(x.name));
    }
  });

  it("puts a scored passed node before an unscored one, even with a negative total", () => {
    const rows = [row("a", { index: 0 }), row("b", { index: 1, total: -5 }), row("c", { index: 2, verdict: "failed" })];
    assignRanks(rows);
    expect(rows.map((x) => x.rank)).toEqual([2, 1, 3]);
  });
});

describe("sorting by rank", () => {
  it("gives the rows in rank order, both ways, without reordering its input", () => {
    const rows = randomRows(300, 9);
    assignRanks(rows);
    const copy = [...rows];
    const asc = sortRows(rows, "rank", false).map((x) => x.rank);
    expect(asc).toEqual(Array.from({ length: 300 }, (_, k) => k + 1));
    expect(sortRows(rows, "rank", true).map((x) => x.rank)).toEqual([...asc].reverse());
    expect(rows).toEqual(copy);
  });

  it("keeps the gaps a filter leaves, and falls back to a stable sort when ranks repeat", () => {
    const rows = randomRows(200, 11);
    assignRanks(rows);
    const failed = applyQuery(rows, { ...DEFAULT_QUERY, verdict: "failed" });
    expect(failed.map((x) => x.rank)).toEqual(rows.filter((x) => x.verdict === "failed").map((x) => x.rank).sort((a, b) => a - b));
    const same = [row("x", { rank: 2 }), row("y", { rank: 1 }), row("z", { rank: 2 })];
    expect(inRankOrder(same)).toBeNull();
    expect(sortRows(same, "rank", false).map((x) => x.name)).toEqual(["y", "x", "z"]);
    expect(inRankOrder([row("x", { rank: 0 })])).toBeNull();
  });
});
