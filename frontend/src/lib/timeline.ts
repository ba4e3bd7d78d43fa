// Cluster over time: the timeline and latency answers normalised, and per-node allocation cycle by cycle.

import { ApiError, api, fetchAll } from "../api/client";
import type { CycleDetail, CycleSummary, PluginLatency, Resources, SnapshotNode, SnapshotPod, TimelineCycle } from "../api/types";
import { rowsPerGroup, type NodeGroup } from "./nodeGroups";

type Obj = Record<string, unknown>;

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function listOf(raw: unknown, keys: string[]): unknown[] {
  if (Array.isArray(raw)) return raw;
  if (raw && typeof raw === "object") {
    for (const k of keys) {
      const v = (raw as Obj)[k];
      if (Array.isArray(v)) return v;
    }
  }
  return [];
}

/** GET /replays/:id/timeline/: a list of cycles, or {cycles: [...]} / {results: [...]}. */
export function normalizeTimeline(raw: unknown): TimelineCycle[] {
  return listOf(raw, ["cycles", "results", "timeline"])
    .map((c, i) => {
      const o = (c ?? {}) as Obj;
      const node = (o.node ?? o.selectedNode ?? null) as string | null;
      const evictions = Array.isArray(o.evictions) ? (o.evictions as Obj[]) : [];
      return {
        seq: num(o.seq) ?? i + 1,
        pod: String(o.pod ?? ""),
        result: String(o.result ?? ""),
        node: node || null,
        requests: ((o.requests ?? o.podRequests ?? {}) as Resources) || {},
        kind: typeof o.kind === "string" ? o.kind : "Scheduling",
        follows: num(o.follows),
        attempt: num(o.attempt) ?? 1,
        evictions: evictions.map((e) => ({
          pod: String(e.pod ?? ""),
          node: String(e.node ?? ""),
          requests: ((e.requests ?? {}) as Resources) || {},
        })),
      };
    })
    .sort((a, b) => a.seq - b.seq);
}

/** GET /replays/:id/latency/: a list, {plugins: [...]}, or {"Point/Plugin": {...}}. Times in microseconds. */
export function normalizeLatency(raw: unknown): PluginLatency[] {
  let items = listOf(raw, ["plugins", "results", "latency"]);
  if (!items.length && raw && typeof raw === "object" && !Array.isArray(raw)) {
    items = Object.entries(raw as Obj)
      .filter(([, v]) => v && typeof v === "object" && !Array.isArray(v))
      .map(([k, v]) => {
        const [point, plugin] = k.includes("/") ? k.split("/", 2) : ["", k];
        return { point, plugin, ...(v as Obj) };
      });
  }
  const pick = (o: Obj, ...keys: string[]) => {
    for (const k of keys) {
      const v = num(o[k]);
      if (v !== null) return v;
    }
    return null;
  };
  return items
    .map((it) => {
      const o = (it ?? {}) as Obj;
      const calls = pick(o, "calls", "count", "n") ?? 0;
      const total = pick(o, "totalMicros", "total", "sumMicros") ?? 0;
      const mean = pick(o, "meanMicros", "mean", "avgMicros") ?? (calls ? total / calls : 0);
      return {
        point: String(o.point ?? o.extensionPoint ?? ""),
        plugin: String(o.plugin ?? o.name ?? ""),
        calls,
        totalMicros: total || mean * calls,
        meanMicros: mean,
        p50Micros: pick(o, "p50Micros", "p50"),
        p95Micros: pick(o, "p95Micros", "p95"),
        p99Micros: pick(o, "p99Micros", "p99"),
        maxMicros: pick(o, "maxMicros", "max"),
      };
    })
    .filter((l) => l.plugin);
}

export interface TimelineData {
  cycles: TimelineCycle[];
  /** "server": the timeline endpoint; "derived": cycles + the snapshot's pod requests (endpoint missing). */
  source: "server" | "derived";
}

export async function loadTimeline(replayId: string, snapshotId: string, signal?: AbortSignal): Promise<TimelineData> {
  try {
    const raw = await api.get<unknown>(`/api/v1/replays/${replayId}/timeline/`, { signal });
    return { cycles: normalizeTimeline(raw), source: "server" };
  } catch (e) {
    if (!(e instanceof ApiError) || (e.status !== 404 && e.status !== 405)) throw e;
  }
  const [cycles, pods] = await Promise.all([
    fetchAll<CycleSummary>(`/api/v1/replays/${replayId}/cycles/`, { signal }),
    fetchAll<SnapshotPod>(`/api/v1/snapshots/${snapshotId}/pods/?state=pending`, { signal }),
  ]);
  const req = new Map(pods.map((p) => [p.key, p.requests]));
  return {
    cycles: cycles.map((c) => ({ seq: c.seq, pod: c.pod, result: c.result, node: c.node || null, requests: req.get(c.pod) ?? {} })),
    source: "derived",
  };
}

export interface LatencyData {
  plugins: PluginLatency[];
  source: "server" | "sampled";
  sampledCycles?: number;
}

/** The latency endpoint, or (while it is missing) an estimate from the stages of up to `sample` cycles. */
export async function loadLatency(replayId: string, cycleCount: number, signal?: AbortSignal, sample = 30): Promise<LatencyData> {
  try {
    const raw = await api.get<unknown>(`/api/v1/replays/${replayId}/latency/`, { signal });
    const plugins = normalizeLatency(raw);
    // replays stored before timings were kept answer an empty list: estimate from their stages instead
    if (plugins.length || cycleCount === 0) return { plugins, source: "server" };
  } catch (e) {
    if (!(e instanceof ApiError) || (e.status !== 404 && e.status !== 405)) throw e;
  }
  const n = Math.min(sample, cycleCount);
  const seqs = [...new Set(Array.from({ length: n }, (_, k) => 1 + Math.floor((k * cycleCount) / Math.max(1, n))))];
  const details = await Promise.all(
    seqs.map((s) => api.get<CycleDetail>(`/api/v1/replays/${replayId}/cycles/${s}/?page_size=1`, { signal })),
  );
  const acc = new Map<string, { point: string; plugin: string; samples: number[] }>();
  for (const d of details) {
    for (const st of d.stages ?? []) {
      const k = `${st.point}/${st.plugin}`;
      const e = acc.get(k) ?? { point: st.point, plugin: st.plugin, samples: [] };
      e.samples.push(st.durationMicros || 0);
      acc.set(k, e);
    }
  }
  const plugins: PluginLatency[] = [...acc.values()].map((e) => {
    const s = [...e.samples].sort((a, b) => a - b);
    const total = s.reduce((a, b) => a + b, 0);
    const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
    return {
      point: e.point,
      plugin: e.plugin,
      calls: s.length,
      totalMicros: total,
      meanMicros: total / s.length,
      p50Micros: q(0.5),
      p95Micros: q(0.95),
      p99Micros: q(0.99),
      maxMicros: s[s.length - 1],
    };
  });
  return { plugins, source: "sampled", sampledCycles: details.length };
}

const PLACED = new Set(["Scheduled", "Waiting"]);

export interface AllocationMatrix {
  /** rows × cols, row-major: requested / allocatable (NaN when the node allocates none of it). */
  values: Float32Array;
  rows: number;
  cols: number;
  /** For each row, the node indices it covers (one node per row unless there are more nodes than rows). */
  rowNodes: number[][];
  /** For each column, the last cycle it includes (0 = before the first cycle). */
  colCycle: number[];
  /** The first row of each group of nodes (rows never mix groups). */
  groupRows: number[];
}

export function resourcesOf(nodes: SnapshotNode[], cycles: TimelineCycle[]): string[] {
  const set = new Set<string>(["cpu", "memory", "pods"]);
  for (const n of nodes) for (const r of Object.keys(n.allocatable)) set.add(r);
  for (const c of cycles) for (const r of Object.keys(c.requests)) set.add(r);
  const base = ["cpu", "memory", "pods"];
  return [...base, ...[...set].filter((r) => !base.includes(r)).sort()];
}

/**
 * Follows the requested amount of one resource per node through the cycles, as the scheduler's cache
 * does: a pod counts on its node from the cycle that placed it (Scheduled, or Waiting at Permit: it is
 * reserved there); the Binding record that ends a wait adds nothing when the pod binds and gives the
 * reservation back when it does not; a preemption's victims leave their nodes in the cycle that
 * evicted them.
 */
class Allocation {
  readonly used: Float64Array;
  private readonly index: Map<string, number>;
  private readonly waiting = new Map<number, number>(); // seq of a Waiting record -> its node's index

  constructor(nodes: SnapshotNode[], private readonly resource: string) {
    this.index = new Map(nodes.map((n, i) => [n.name, i]));
    this.used = Float64Array.from(nodes, (n) => n.requested[resource] ?? 0);
  }

  private amount(requests: Resources): number {
    return this.resource === "pods" ? 1 : (requests[this.resource] ?? 0);
  }

  apply(c: TimelineCycle): void {
    if (c.kind === "Binding") {
      const i = c.follows != null ? this.waiting.get(c.follows) : undefined;
      if (i !== undefined && c.result !== "Scheduled") this.used[i] -= this.amount(c.requests);
    } else if (PLACED.has(c.result) && c.node) {
      const i = this.index.get(c.node);
      if (i !== undefined) {
        this.used[i] += this.amount(c.requests);
        if (c.result === "Waiting") this.waiting.set(c.seq, i);
      }
    }
    for (const e of c.evictions ?? []) {
      const i = this.index.get(e.node);
      if (i !== undefined) this.used[i] -= this.amount(e.requests);
    }
  }
}

/** Per node, the requested amount of `resource` after `cycle` cycles (0: the snapshot as uploaded). */
export function requestedAt(nodes: SnapshotNode[], cycles: TimelineCycle[], resource: string, cycle: number): Float64Array {
  const a = new Allocation(nodes, resource);
  for (const c of cycles) {
    if (c.seq > cycle) break;
    a.apply(c);
  }
  return a.used;
}

/**
 * The allocation heatmap: columns follow the cycles (bucketed to at most maxCols), rows the nodes (to at most
 * maxRows). `span` narrows the columns to the states after cycles `from` to `to` (0: the snapshot as uploaded);
 * the cycles before it still count.
 */
export function allocationMatrix(
  nodes: SnapshotNode[],
  cycles: TimelineCycle[],
  resource: string,
  maxCols: number,
  maxRows: number,
  groups?: NodeGroup[],
  span?: { from: number; to: number },
): AllocationMatrix {
  const n = nodes.length;
  const totalCycles = cycles.length ? cycles[cycles.length - 1].seq : 0;
  const from = Math.max(0, Math.min(totalCycles, span?.from ?? 0));
  const to = Math.max(from, Math.min(totalCycles, span?.to ?? totalCycles));
  const steps = to - from + 1;
  const cols = Math.max(1, Math.min(steps, maxCols));
  const parts = groups && groups.length ? groups : [{ label: "", start: 0, count: n }];
  const shares = rowsPerGroup(parts, Math.max(1, Math.min(n, maxRows)));
  const rows = Math.max(1, shares.reduce((a, b) => a + b, 0));
  const rowNodes: number[][] = Array.from({ length: rows }, () => []);
  const groupRows: number[] = [];
  let first = 0;
  parts.forEach((g, k) => {
    const share = shares[k];
    groupRows.push(first);
    for (let j = 0; j < g.count; j++) rowNodes[first + Math.floor((j * share) / Math.max(1, g.count))].push(g.start + j);
    first += share;
  });
  const colCycle = Array.from({ length: cols }, (_, k) => from + (cols === steps ? k : Math.round(((k + 1) * (steps - 1)) / cols)));
  const alloc = Float64Array.from(nodes, (nd) => nd.allocatable[resource] ?? 0);
  const allocation = new Allocation(nodes, resource);
  const used = allocation.used;
  const values = new Float32Array(rows * cols).fill(Number.NaN);
  let ci = 0;
  const capture = (col: number) => {
    for (let r = 0; r < rows; r++) {
      let worst = Number.NaN;
      for (const i of rowNodes[r]) {
        const v = alloc[i] > 0 ? used[i] / alloc[i] : used[i] > 0 ? 2 : Number.NaN;
        if (!Number.isNaN(v) && (Number.isNaN(worst) || v > worst)) worst = v;
      }
      values[r * cols + col] = worst;
    }
  };
  let col = 0;
  while (col < cols && colCycle[col] <= 0) capture(col++);
  for (const c of cycles) {
    if (col >= cols) break;
    allocation.apply(c);
    ci = c.seq;
    while (col < cols && colCycle[col] <= ci) capture(col++);
  }
  while (col < cols) capture(col++);
  return { values, rows, cols, rowNodes, colCycle, groupRows };
}
