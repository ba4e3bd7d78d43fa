// The cluster-over-time map's rows at scale: nodes grouped (zone, instance type, node pool) or sorted by
// utilisation, so that thousands of rows read as a few labelled bands.

import type { SnapshotNode } from "../api/types";

export type GroupBy = "snapshot" | "zone" | "instance-type" | "pool" | "utilization";
export const GROUP_BY: { value: GroupBy; label: string }[] = [
  { value: "snapshot", label: "Snapshot order" },
  { value: "zone", label: "Zone" },
  { value: "instance-type", label: "Instance type" },
  { value: "pool", label: "Node pool" },
  { value: "utilization", label: "Utilization" },
];

const INSTANCE_TYPE = ["node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"];
/** Node pool labels of the usual providers and tools, then the plain ones. */
const POOL = [
  "cloud.google.com/gke-nodepool",
  "eks.amazonaws.com/nodegroup",
  "kubernetes.azure.com/agentpool",
  "karpenter.sh/nodepool",
  "node.kubernetes.io/pool",
  "nodepool",
  "node-pool",
  "pool",
];

function firstLabel(n: SnapshotNode, keys: string[]): string {
  for (const k of keys) {
    const v = n.labels[k];
    if (v) return v;
  }
  return "";
}

export function groupOf(n: SnapshotNode, by: GroupBy): string {
  if (by === "zone") return n.zone || "(no zone)";
  if (by === "instance-type") return firstLabel(n, INSTANCE_TYPE) || "(no instance type)";
  if (by === "pool") return firstLabel(n, POOL) || "(no pool label)";
  return "";
}

export interface NodeGroup {
  label: string;
  /** Position of the group's first node in `nodes`. */
  start: number;
  count: number;
}

/**
 * The nodes in the map's order, with their groups: by group label (then snapshot order within a group), or
 * by `utilization` (highest first, one group), or as in the snapshot. `utilization[i]` is node i's share of
 * its allocatable at the end of the replay (NaN: none allocatable, last).
 */
export function orderNodes(nodes: SnapshotNode[], by: GroupBy, utilization?: ArrayLike<number>): { nodes: SnapshotNode[]; groups: NodeGroup[] } {
  const idx = nodes.map((_, i) => i);
  if (by === "utilization" && utilization) {
    const u = (i: number) => (Number.isNaN(utilization[i]) ? -1 : utilization[i]);
    idx.sort((a, b) => u(b) - u(a) || a - b);
    return { nodes: idx.map((i) => nodes[i]), groups: [{ label: "", start: 0, count: nodes.length }] };
  }
  if (by === "snapshot" || by === "utilization") return { nodes: nodes.slice(), groups: [{ label: "", start: 0, count: nodes.length }] };
  const labels = nodes.map((n) => groupOf(n, by));
  // the few distinct labels are ranked once: comparing numbers keeps the sort of 5000 nodes in milliseconds
  const collator = new Intl.Collator(undefined, { numeric: true });
  const rank = new Map([...new Set(labels)].sort(collator.compare).map((l, k) => [l, k] as const));
  const ranks = Int32Array.from(labels, (l) => rank.get(l) ?? 0);
  idx.sort((a, b) => ranks[a] - ranks[b] || a - b);
  const groups: NodeGroup[] = [];
  idx.forEach((i, k) => {
    const last = groups[groups.length - 1];
    if (last && last.label === labels[i]) last.count++;
    else groups.push({ label: labels[i], start: k, count: 1 });
  });
  return { nodes: idx.map((i) => nodes[i]), groups };
}

/**
 * How many rows each group gets when `total` rows are shared among them: in proportion to its nodes, at
 * least one, never more than it has nodes (largest remainders first, so the rows add up).
 */
export function rowsPerGroup(groups: NodeGroup[], total: number): number[] {
  const n = groups.reduce((s, g) => s + g.count, 0);
  if (!groups.length) return [];
  if (total >= n) return groups.map((g) => g.count);
  const budget = Math.max(total, groups.length);
  const exact = groups.map((g) => (g.count * budget) / n);
  const out = exact.map((x, k) => Math.min(groups[k].count, Math.max(1, Math.floor(x))));
  let left = budget - out.reduce((s, x) => s + x, 0);
  const order = exact.map((x, k) => [x - Math.floor(x), k] as const).sort((a, b) => b[0] - a[0]);
  for (const [, k] of order) {
    if (left <= 0) break;
    if (out[k] < groups[k].count) {
      out[k]++;
      left--;
    }
  }
  return out;
}
