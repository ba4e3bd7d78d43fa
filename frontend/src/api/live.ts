// Live clusters (docs/live.md): the JSON shapes of /api/v1/clusters/..., the URLs, and one normalised
// "decision" built from a timeline row (REST) or from a `live.verdict` message (websocket).

import type { Explanation, Snapshot } from "./types";

export type ClusterStatus = "pending" | "starting" | "syncing" | "watching" | "degraded" | "error" | "stopped" | string;
export type Agreement = "match" | "tie" | "diverged" | "skipped";
export const AGREEMENTS: Agreement[] = ["match", "tie", "diverged", "skipped"];

export interface LiveWorker {
  id: string;
  alive: boolean;
  leaseExpires: string | null;
  heartbeat: string | null;
}

export interface LiveSummary {
  cycles: number;
  match: number;
  tie: number;
  diverged: number;
  skipped: number;
  byCode: Record<string, number>;
  lastCycleAt: string | null;
}

export interface ConfigNotes {
  source?: string;
  configMap?: string;
  key?: string;
  profiles?: string[];
  unknownPlugins?: string[];
  extenders?: unknown[];
  [k: string]: unknown;
}

export interface LiveCluster {
  id: string;
  name: string;
  source: "kubeconfig" | "path" | "in-cluster" | string;
  context: string;
  path: string;
  server: string;
  credential_kind: string;
  credentials_stored: boolean;
  config_source: "default" | "uploaded" | "configmap" | string;
  config_map: string;
  config_map_key: string;
  config_notes: ConfigNotes | null;
  all_nodes: boolean;
  enabled: boolean;
  team: string | null;
  created: string;
  updated: string;
  status: ClusterStatus;
  status_message: string;
  worker: LiveWorker;
  summary: LiveSummary;
  checkpoint_at: string | null;
}

export type StreamState = "starting" | "listing" | "watching" | "backoff" | "error" | "unavailable" | "stopped" | string;

export interface StreamHealth {
  stream: string;
  kind: string;
  state: StreamState;
  since: number;
  resourceVersion: string;
  synced: boolean;
  objects: number;
  lists: number;
  relists: number;
  expired: number;
  events: number;
  bookmarks: number;
  reconnects: number;
  errors: number;
  lastError: string | null;
  lastErrorAt: number | null;
  lastEventAt: number | null;
  lastListAt: number | null;
  retryAt: number | null;
}

export interface LiveHealth {
  status: ClusterStatus;
  message: string;
  worker: LiveWorker;
  streams: StreamHealth[];
  config: ConfigNotes | null;
  configError: string | null;
  queue: number;
  /** the streams the next decision waits for (not caught up with its resourceVersion yet) */
  waitingFor: string | null;
  /** scheduling events a relist found and left out as too old (by the cluster's clock) */
  droppedEvents: number;
  lastDropped: string | null;
  processed: number;
  failures: number;
  lastFailure: string | null;
  objects: number;
  restoredAt: number | null;
  startedAt: number | null;
  updatedAt: string | null;
}

export interface LiveExplanationItem {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** A row of GET /clusters/<id>/cycles/ (and of divergences' `recent`). */
export interface LiveCycleRow {
  seq: number;
  pod: string;
  namespace: string;
  trigger: "bound" | "failed" | string;
  trigger_source: string;
  observed: string;
  occurred: string | null;
  actual_result: string;
  actual_node: string | null;
  actual_message: string | null;
  actual_scheduler: string;
  profile: string;
  result: string;
  node: string | null;
  message: string | null;
  tied_count: number | null;
  feasible_count: number | null;
  evaluated_count: number | null;
  winner_total: number | null;
  agreement: Agreement;
  divergence: string;
  explanations: LiveExplanationItem[];
  notes: string[];
  exact: boolean;
  gap: boolean;
  error: string;
  /** the change that revealed the decision: the timeline is in its order */
  resource_version: string;
}

/** `live` of GET /clusters/<id>/cycles/<seq>/, and the fields of a `live.verdict` message. */
export interface LiveComparison {
  seq: number;
  pod: string;
  trigger: string;
  triggerSource: string;
  observed: string | null;
  occurred: string | null;
  /** the change that revealed the decision: the timeline is in its order */
  resourceVersion: string | null;
  actual: { result: string; node: string | null; message: string | null; scheduler: string | null };
  replay: { result: string | null; node: string | null; message: string | null; tiedCount: number | null };
  agreement: Agreement;
  divergence: string | null;
  explanations: LiveExplanationItem[];
  notes: string[];
  exact: boolean;
  gap: boolean;
  error: string | null;
}

export interface Divergences {
  summary: LiveSummary;
  recent: LiveCycleRow[];
}

export interface KubeContext {
  name: string;
  cluster: string;
  server: string;
  user: string;
  namespace: string;
  usable: boolean;
  problem: string | null;
}

export interface KubeContexts {
  current: string;
  contexts: KubeContext[];
}

export interface SnapshotRequest {
  id: string;
  cluster: string;
  name: string;
  status: "pending" | "done" | "failed";
  snapshot: Snapshot | null;
  error: string;
  created: string;
  finished: string | null;
}

/** GET /clusters/<id>/cycles/<seq>/explain/: the replay explanation plus the decision's comparison. */
export interface LiveExplanation extends Explanation {
  live?: LiveComparison;
}

// ----- URLs -----
export const clustersUrl = "/api/v1/clusters/";
export const clusterUrl = (id: string) => `/api/v1/clusters/${id}/`;
export const clusterApi = (id: string, rest: string) => `/api/v1/clusters/${id}/${rest}`;

export const livePath = (id: string) => `/live/${id}`;
export const liveCyclePath = (id: string, seq: number) => `/live/${id}/cycles/${seq}`;
export function liveWhyPath(id: string, seq: number, nodes: string[] = []): string {
  const q = new URLSearchParams();
  nodes.forEach((n) => q.append("node", n));
  const s = q.toString();
  return `/live/${id}/cycles/${seq}/why${s ? `?${s}` : ""}`;
}

// ----- one decision, from either source -----
export interface Decision extends LiveComparison {
  namespace: string;
  /** Feasible nodes in the replay (REST rows, or the stream's `score`). */
  feasible: number | null;
  /** The replay's winning total. */
  winnerTotal: number | null;
}

export function namespaceOf(pod: string): string {
  const k = pod.indexOf("/");
  return k > 0 ? pod.slice(0, k) : "";
}

const orNull = (s: string | null | undefined): string | null => (s ? s : null);

export function decisionFromRow(r: LiveCycleRow): Decision {
  return {
    seq: r.seq,
    pod: r.pod,
    namespace: r.namespace || namespaceOf(r.pod),
    trigger: r.trigger,
    triggerSource: r.trigger_source,
    observed: r.observed,
    occurred: r.occurred,
    resourceVersion: orNull(r.resource_version),
    actual: {
      result: r.actual_result,
      node: orNull(r.actual_node),
      message: orNull(r.actual_message),
      scheduler: orNull(r.actual_scheduler),
    },
    replay: { result: orNull(r.result), node: orNull(r.node), message: orNull(r.message), tiedCount: r.tied_count },
    agreement: r.agreement,
    divergence: orNull(r.divergence),
    explanations: r.explanations ?? [],
    notes: r.notes ?? [],
    exact: r.exact,
    gap: r.gap,
    error: orNull(r.error),
    feasible: r.feasible_count,
    winnerTotal: r.winner_total,
  };
}

export function decisionFromComparison(c: LiveComparison, extra: Partial<Pick<Decision, "feasible" | "winnerTotal">> = {}): Decision {
  return {
    ...c,
    explanations: c.explanations ?? [],
    notes: c.notes ?? [],
    namespace: namespaceOf(c.pod),
    feasible: extra.feasible ?? null,
    winnerTotal: extra.winnerTotal ?? null,
  };
}

export interface DecisionFilter {
  agreement: string;
  namespace: string;
  divergence: string;
  search: string;
}

export const NO_FILTER: DecisionFilter = { agreement: "", namespace: "", divergence: "", search: "" };

/** The filter as the decisions page applies it to streamed decisions (the API applies the same to its pages). */
export function matchesFilter(d: Decision, f: DecisionFilter): boolean {
  if (f.agreement && d.agreement !== f.agreement) return false;
  if (f.namespace && d.namespace !== f.namespace) return false;
  if (f.divergence && d.divergence !== f.divergence) return false;
  const needle = f.search.trim().toLowerCase();
  if (needle) {
    const hay = [d.pod, d.actual.node ?? "", d.replay.node ?? ""].join(" ").toLowerCase();
    if (!hay.includes(needle)) return false;
  }
  return true;
}

/** Newest first, one per seq (the streamed copy wins over a page's: it is the same stored decision). */
export function mergeDecisions(...lists: Decision[][]): Decision[] {
  const bySeq = new Map<number, Decision>();
  for (const list of lists) for (const d of list) if (!bySeq.has(d.seq)) bySeq.set(d.seq, d);
  return [...bySeq.values()].sort((a, b) => b.seq - a.seq);
}

/** The explanation's main sentence: the first explanation's message, else the error, else nothing. */
export function mainExplanation(d: Pick<Decision, "explanations" | "error" | "agreement">): string {
  if (d.explanations.length) return d.explanations[0].message;
  if (d.error) return d.error;
  return "";
}

/** What a side did, in a few words: its node, or its result when it placed nothing. */
export function outcomeText(result: string | null, node: string | null): string {
  if (node) return node;
  if (!result) return "–";
  return result;
}
