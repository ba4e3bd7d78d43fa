import { describe, expect, it } from "vitest";
import { applyQuery, DEFAULT_QUERY, filterRows, paramsWithQuery, queryFromParams, rejectingPlugins, rowsFromStream, sortRows, type NodeRow } from "./nodes";

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
