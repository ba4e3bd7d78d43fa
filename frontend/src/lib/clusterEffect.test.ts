import { describe, expect, it } from "vitest";
import type { SnapshotNode, TimelineCycle } from "../api/types";
import { clusterEffect } from "./clusterEffect";

function nd(name: string, zone: string, cpu: number, used = 0, podCount = 0): SnapshotNode {
  return { name, zone, region: "", allocatable: { cpu, pods: 110 }, requested: { cpu: used, pods: podCount }, nonZeroRequested: {}, podCount, taints: [], unschedulable: false, labels: {} };
}

const nodes = [nd("a", "z1", 4000), nd("b", "z1", 4000), nd("c", "z2", 4000, 1000, 1)];
const cyc = (seq: number, node: string | null, cpu: number): TimelineCycle => ({ seq, pod: `p${seq}`, result: node ? "Scheduled" : "Unschedulable", node, requests: { cpu } });

describe("clusterEffect", () => {
  it("packs: fewer nodes used, capacity stranded only on partly used nodes", () => {
    const packed = clusterEffect(nodes, [cyc(1, "c", 3000), cyc(2, "a", 1000)]);
    expect(packed.nodesUsed).toBe(2);
    expect(packed.placedPerZone).toEqual({ z2: 1, z1: 1 });
    const cpu = packed.resources[0];
    // c is full (4000/4000), a is at 25%, b empty
    expect(cpu.histogram[9]).toBe(1);
    expect(cpu.histogram[2]).toBe(1);
    expect(cpu.histogram[0]).toBe(1);
    expect(cpu.stranded).toBe(3000);
    expect(cpu.free).toBe(7000);
  });
  it("spreads: more nodes used, more capacity stranded", () => {
    const spread = clusterEffect(nodes, [cyc(1, "a", 2000), cyc(2, "b", 2000), cyc(3, null, 500)]);
    expect(spread.nodesUsed).toBe(3);
    expect(spread.placedPerZone).toEqual({ z1: 2 });
    expect(spread.resources[0].stranded).toBe(2000 + 2000 + 3000);
  });
});
