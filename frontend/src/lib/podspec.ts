// The pod's scheduling-relevant spec and a node's facts, as an operator reads them: requests against what
// is free, node selector and required node affinity checked against the node's labels, taints against
// the pod's tolerations. Pure functions; the numbers come from the server (scheduler units).

import type { NodeSelectorRequirement, NodeSelectorTerm, Resources, SpreadConstraint, Taint, Toleration } from "../api/types";
import { formatAmount, resourceLabel } from "./format";

/** "40 CPU", "16Gi memory", "1 nvidia.com/gpu": an amount with its resource, in the resource's one unit. */
export function amountText(resource: string, value: number): string {
  // CPU always in cores (0.5, 26, 32.6), never millicores next to cores
  if (resource === "cpu") return `${Math.round(value) / 1000} CPU`;
  const amount = formatAmount(resource, value);
  if (resource === "memory") return `${amount} memory`;
  if (resource === "pods") return `${amount} pod${value === 1 ? "" : "s"}`;
  return `${amount} ${resourceLabel(resource)}`;
}

export interface ResourceLine {
  resource: string;
  /** What the pod asks for (0 when it asks for none). */
  request: number;
  allocatable: number;
  requested: number;
  free: number;
  /** The pod's request is more than what is free. */
  short: boolean;
}

/**
 * One line per resource the pod asks for, plus CPU, memory and the pod count (as NodeResourcesFit checks
 * them: one more pod, each request against allocatable minus requested). Resources the pod does not ask
 * for and the node does not have are left out.
 */
export function resourceLines(
  requests: Resources,
  node: { allocatable: Resources; requested: Resources; free: Resources },
): ResourceLine[] {
  const names = ["cpu", "memory", ...Object.keys(requests).filter((r) => r !== "cpu" && r !== "memory" && r !== "pods").sort(), "pods"];
  const out: ResourceLine[] = [];
  for (const r of names) {
    const request = r === "pods" ? 1 : (requests[r] ?? 0);
    const allocatable = node.allocatable[r] ?? 0;
    const requested = node.requested[r] ?? 0;
    if (!request && !allocatable) continue;
    const free = node.free[r] ?? allocatable - requested;
    out.push({ resource: r, request, allocatable, requested, free, short: request > 0 && request > free });
  }
  return out;
}

/** A requirement of a node selector term against a node's labels (v1 NodeSelectorRequirement). */
export function requirementMatches(labels: Record<string, string>, req: NodeSelectorRequirement): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, req.key);
  const v = labels[req.key];
  const values = req.values ?? [];
  switch (req.operator) {
    case "In":
      return has && values.includes(v);
    case "NotIn":
      return !has || !values.includes(v);
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    case "Gt":
    case "Lt": {
      if (!has || values.length !== 1) return false;
      const a = Number.parseInt(v, 10);
      const b = Number.parseInt(values[0], 10);
      if (!/^-?\d+$/.test(v) || !/^-?\d+$/.test(values[0])) return false;
      return req.operator === "Gt" ? a > b : a < b;
    }
    default:
      return false;
  }
}

export function requirementText(req: NodeSelectorRequirement): string {
  const values = req.values ?? [];
  switch (req.operator) {
    case "In":
      return values.length === 1 ? `${req.key}=${values[0]}` : `${req.key} in (${values.join(", ")})`;
    case "NotIn":
      return values.length === 1 ? `${req.key}!=${values[0]}` : `${req.key} not in (${values.join(", ")})`;
    case "Exists":
      return `${req.key} exists`;
    case "DoesNotExist":
      return `no ${req.key}`;
    case "Gt":
      return `${req.key} > ${values[0] ?? "?"}`;
    case "Lt":
      return `${req.key} < ${values[0] ?? "?"}`;
    default:
      return `${req.key} ${req.operator} ${values.join(",")}`;
  }
}

export function termText(term: NodeSelectorTerm): string {
  const parts = [...(term.matchExpressions ?? []), ...(term.matchFields ?? []).map((f) => ({ ...f, key: `field ${f.key}` }))];
  return parts.length ? parts.map(requirementText).join(" and ") : "(empty term: matches no node)";
}

/** A term's label requirements checked against the node; matchFields (metadata.name) against its name. */
export function termMatches(labels: Record<string, string>, nodeName: string, term: NodeSelectorTerm): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (!exprs.length && !fields.length) return false;
  return (
    exprs.every((e) => requirementMatches(labels, e)) &&
    fields.every((f) => f.key === "metadata.name" && requirementMatches({ "metadata.name": nodeName }, f))
  );
}

export function taintText(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`;
}

export function tolerationText(t: Toleration): string {
  const key = t.key ? t.key : "every taint";
  const what = t.operator === "Exists" || !t.key ? key : `${key}=${t.value ?? ""}`;
  return `${what}${t.effect ? `:${t.effect}` : ""}${t.tolerationSeconds !== undefined ? ` for ${t.tolerationSeconds}s` : ""}`;
}

/** Whether a toleration tolerates a taint (v1 Toleration.ToleratesTaint). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (!t.key && t.operator !== "Exists") return false;
  if (t.operator === "Exists") return true;
  return (t.value ?? "") === (taint.value ?? "");
}

/** The taints the scheduler's filter looks at (NoSchedule, NoExecute) that none of the tolerations tolerates. */
export function untoleratedTaints(taints: Taint[], tolerations: Toleration[]): Taint[] {
  return taints.filter((t) => (t.effect === "NoSchedule" || t.effect === "NoExecute") && !tolerations.some((x) => tolerates(x, t)));
}

export function spreadText(c: SpreadConstraint): string {
  const key = c.topologyKey === "topology.kubernetes.io/zone" ? "zone" : c.topologyKey === "kubernetes.io/hostname" ? "node" : c.topologyKey;
  return `spread by ${key}, max skew ${c.maxSkew} (${c.whenUnsatisfiable === "DoNotSchedule" ? "required" : "preferred"})`;
}

/** The pod's requests in a line: "40 CPU · 16Gi memory · 1 nvidia.com/gpu". */
export function requestsText(requests: Resources): string {
  const names = ["cpu", "memory", ...Object.keys(requests).filter((r) => r !== "cpu" && r !== "memory").sort()];
  const parts = names.filter((r) => requests[r]).map((r) => amountText(r, requests[r]));
  return parts.length ? parts.join(" · ") : "nothing";
}
