import { describe, expect, it } from "vitest";
import type { SnapshotNode } from "../api/types";
import { orderNodes, rowsPerGroup } from "./nodeGroups";

function nd(name: string, zone: string, labels: Record<string, string> = {}): SnapshotNode {
  return { name, zone, region: "", allocatable: { cpu: 1000 }, requested: {}, nonZeroRequested: {}, podCount: 0, taints: [], unschedulable: false, labels };
}

const nodes = [
  nd("a1", "zone-b", { "node.kubernetes.io/instance-type": "m5.large", "cloud.google.com/gke-nodepool": "gpu" }),
  nd("a2", "zone-a", { "node.kubernetes.io/instance-type": "m5.xlarge" }),
  nd("a3", "zone-b", { pool: "general" }),
  nd("a4", "", {}),
];

describe("orderNodes", () => {
  it("groups by zone, instance type or pool label, snapshot order within a group", () => {
    const z = orderNodes(nodes, "zone");
    expect(z.nodes.map((n) => n.name)).toEqual(["a4", "a2", "a1", "a3"]);
    expect(z.groups).toEqual([
      { label: "(no zone)", start: 0, count: 1 },
      { label: "zone-a", start: 1, count: 1 },
      { label: "zone-b", start: 2, count: 2 },
    ]);
    expect(orderNodes(nodes, "instance-type").groups.map((g) => g.label)).toEqual(["(no instance type)", "m5.large", "m5.xlarge"]);
    expect(orderNodes(nodes, "pool").groups.map((g) => [g.label, g.count])).toEqual([
      ["(no pool label)", 2],
      ["general", 1],
      ["gpu", 1],
    ]);
  });
  it("orders the groups of 5000 nodes by their labels' numbers, snapshot order within each", () => {
    const many = Array.from({ length: 5000 }, (_, i) => nd(`n${i}`, `zone-${[10, 9, 1][i % 3]}`));
    const z = orderNodes(many, "zone");
    expect(z.groups).toEqual([
      { label: "zone-1", start: 0, count: 1666 },
      { label: "zone-9", start: 1666, count: 1667 },
      { label: "zone-10", start: 3333, count: 1667 },
    ]);
    expect(z.nodes.slice(0, 3).map((n) => n.name)).toEqual(["n2", "n5", "n8"]);
    expect(z.nodes[3333].name).toBe("n0");
  });
  it("sorts by utilization, highest first, nodes with nothing allocatable last", () => {
    const u = [0.2, Number.NaN, 0.9, 0.2];
    expect(orderNodes(nodes, "utilization", u).nodes.map((n) => n.name)).toEqual(["a3", "a1", "a4", "a2"]);
  });
});

describe("rowsPerGroup", () => {
  it("shares the rows in proportion, at least one each, adding up", () => {
    const groups = [
      { label: "a", start: 0, count: 1000 },
      { label: "b", start: 1000, count: 990 },
      { label: "c", start: 1990, count: 10 },
    ];
    const rows = rowsPerGroup(groups, 200);
    expect(rows.reduce((s, x) => s + x, 0)).toBe(200);
    expect(rows[2]).toBeGreaterThanOrEqual(1);
    expect(rows[0]).toBeGreaterThan(rows[1]);
    expect(rowsPerGroup(groups.slice(2), 200)).toEqual([10]);
  });
});
