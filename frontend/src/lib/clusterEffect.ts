// What a configuration change does to the cluster as a whole, from two replays of one snapshot: nodes used,
// how full the nodes are (per resource), capacity stranded on partly used nodes, pods per zone.

import type { SnapshotNode, TimelineCycle } from "../api/types";
import { requestedAt } from "./timeline";

export const BUCKETS = 10;

export interface ResourceEffect {
  resource: string;
  /** Nodes per utilisation decile at the end of the replay: [0-10%), ..., [90-100%]; over 100% in the last. */
  histogram: number[];
  /** Free capacity on nodes neither empty of the replay's pods nor full (0 < utilisation < 1), scheduler units. */
  stranded: number;
  /** Free capacity on every node. */
  free: number;
}

export interface ClusterEffect {
  /** Nodes running at least one pod at the end of the replay. */
  nodesUsed: number;
  /** Pods the replay placed, per zone. */
  placedPerZone: Record<string, number>;
  resources: ResourceEffect[];
}

function lastSeq(cycles: TimelineCycle[]): number {
  return cycles.length ? cycles[cycles.length - 1].seq : 0;
}

export function clusterEffect(nodes: SnapshotNode[], cycles: TimelineCycle[], resources: string[] = ["cpu", "memory"]): ClusterEffect {
  const end = lastSeq(cycles);
  const pods = requestedAt(nodes, cycles, "pods", end);
  const start = requestedAt(nodes, [], "pods", 0);
  let nodesUsed = 0;
  const placedPerZone: Record<string, number> = {};
  nodes.forEach((n, i) => {
    const count = n.podCount + (pods[i] - start[i]);
    if (count > 0) nodesUsed++;
    const placed = pods[i] - start[i];
    if (placed > 0) {
      const z = n.zone || "(no zone)";
      placedPerZone[z] = (placedPerZone[z] ?? 0) + placed;
    }
  });
  const out: ResourceEffect[] = resources.map((resource) => {
    const used = requestedAt(nodes, cycles, resource, end);
    const histogram = new Array<number>(BUCKETS).fill(0);
    let stranded = 0;
    let free = 0;
    nodes.forEach((n, i) => {
      const alloc = n.allocatable[resource] ?? 0;
      if (alloc <= 0) return;
      const u = used[i] / alloc;
      histogram[Math.min(BUCKETS - 1, Math.max(0, Math.floor(u * BUCKETS)))]++;
      const f = Math.max(0, alloc - used[i]);
      free += f;
      if (u > 0 && u < 1) stranded += f;
    });
    return { resource, histogram, stranded, free };
  });
  return { nodesUsed, placedPerZone, resources: out };
}
