// What the Plan page draws, computed from a plan's answer (pure functions, tested on their own).

import type { PlanQuestion, PlanKind, Utilization } from "../api/plans";

export interface BarDatum {
  label: string;
  value: number;
}

/** Counts as bars, largest first (ties by label), at most `limit`; the rest summed into one "other" bar. */
export function topBars(counts: Record<string, number>, limit = 30): BarDatum[] {
  const all = Object.entries(counts)
    .map(([label, value]) => ({ label, value }))
    .sort((a, b) => b.value - a.value || a.label.localeCompare(b.label));
  if (all.length <= limit) return all;
  const shown = all.slice(0, limit - 1);
  const rest = all.slice(limit - 1);
  shown.push({ label: `${rest.length} other nodes`, value: rest.reduce((s, d) => s + d.value, 0) });
  return shown;
}

export interface UsageRow {
  resource: "cpuMilli" | "memoryBytes" | "pods";
  label: string;
  before: number | null;
  after: number | null;
}

/** The cluster's requested share of allocatable before and after, per resource (percent, null: none allocatable). */
export function totalUsage(u: Utilization): UsageRow[] {
  const rows: [UsageRow["resource"], string][] = [
    ["cpuMilli", "CPU"],
    ["memoryBytes", "Memory"],
    ["pods", "Pods"],
  ];
  return rows.map(([resource, label]) => ({
    resource,
    label,
    before: u.before.total.percent[resource],
    after: u.after.total.percent[resource],
  }));
}

/** Nodes whose requested CPU changed, by the change (largest first), with their before and after percent. */
export function changedNodes(u: Utilization, limit = 40): { node: string; before: number | null; after: number | null }[] {
  const out: { node: string; before: number | null; after: number | null; delta: number }[] = [];
  for (const [node, after] of Object.entries(u.after.nodes)) {
    const before = u.before.nodes[node];
    const b = before ? before.percent.cpuMilli : null;
    const a = after.percent.cpuMilli;
    const changed = !before || before.requested.cpuMilli !== after.requested.cpuMilli || before.requested.pods !== after.requested.pods;
    if (changed) out.push({ node, before: b, after: a, delta: Math.abs((a ?? 0) - (b ?? 0)) });
  }
  out.sort((x, y) => y.delta - x.delta || x.node.localeCompare(y.node));
  return out.slice(0, limit).map(({ node, before, after }) => ({ node, before, after }));
}

/** Node names typed by a user: separated by commas, spaces or new lines. */
export function splitNames(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface PlanForm {
  kind: PlanKind;
  snapshot: string;
  pods: string[];
  order: "round-robin" | "in-order";
  max: string;
  nodes: string;
  selector: string;
  respectPdb: boolean;
  templates: string;
  templateManifest: string;
  maxNodes: string;
  allNodes: boolean;
}

/** The form as the plans endpoint's request, or the first problem found (field and message). */
export function toQuestion(f: PlanForm): { question: PlanQuestion } | { field: string; problem: string } {
  if (!f.snapshot) return { field: "snapshot", problem: "Choose a snapshot." };
  const q: PlanQuestion = { kind: f.kind, snapshot: f.snapshot, all_nodes: f.allNodes };
  if (f.kind === "capacity") {
    const pods = f.pods.map((p) => p.trim()).filter(Boolean);
    if (pods.length === 0) return { field: "pods", problem: "Paste the pod to copy (YAML or JSON)." };
    q.pods = pods;
    q.order = f.order;
    if (f.max.trim()) {
      const n = Number(f.max);
      if (!Number.isInteger(n) || n < 0) return { field: "max", problem: "The most copies must be a whole number." };
      q.max = n;
    }
  } else if (f.kind === "drain") {
    const nodes = splitNames(f.nodes);
    if (nodes.length === 0 && !f.selector.trim()) return { field: "nodes", problem: "Name the nodes to drain, or give a label selector." };
    q.nodes = nodes;
    if (f.selector.trim()) q.selector = f.selector.trim();
    q.respect_pdb = f.respectPdb;
  } else {
    const templates = splitNames(f.templates);
    if (f.templateManifest.trim()) templates.push(f.templateManifest.trim());
    if (templates.length === 0) return { field: "templates", problem: "Name a node to clone, or paste a Node manifest." };
    q.templates = templates;
    const n = Number(f.maxNodes || "10");
    if (!Number.isInteger(n) || n < 0 || n > 200) return { field: "max_nodes", problem: "At most 200 nodes." };
    q.max_nodes = n;
  }
  return { question: q };
}
