// JSON shapes of the SchedViz REST API (schedviz/<app>/serializers.py, cycles/pages.py,
// ingestion/summary.py, reports/build.py compare_traces, engine/explain.py Explanation.to_dict()).

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface ApiErrorBody {
  error: { code: string; message: string; details: unknown };
}

/** One upload problem (schedviz/ingestion/parsing.py Problem.to_dict). */
export interface UploadProblem {
  document: string;
  object: string;
  field: string;
  message: string;
}

export interface Snapshot {
  id: string;
  name: string;
  content_hash: string;
  source_format: string;
  size_bytes: number;
  created: string;
  node_count: number;
  pod_count: number;
  pending_count: number;
  kinds: Record<string, number>;
  ignored: Record<string, number>;
  config: unknown;
  /** pending, parsing (the worker is reading the upload), ready, failed */
  status?: string;
  /** bytesRead of bytesTotal, objects read so far */
  progress?: unknown;
  /** When failed: message, and problems. */
  error?: unknown;
  upload_name?: string;
  /** When failed because the same content is stored already: that snapshot. */
  duplicate_of?: string | null;
  team?: number | null;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** Resources in the scheduler's units: cpu millicores, memory/storage bytes, the rest whole units. */
export type Resources = Record<string, number>;

export interface SnapshotNode {
  name: string;
  zone: string;
  region: string;
  allocatable: Resources;
  requested: Resources;
  nonZeroRequested: Resources;
  podCount: number;
  taints: Taint[];
  unschedulable: boolean;
  labels: Record<string, string>;
}

export type PodState = "running" | "pending" | "finished";

export interface SnapshotPod {
  key: string;
  namespace: string;
  name: string;
  state: PodState;
  phase: string;
  node: string | null;
  nominatedNode: string | null;
  requests: Resources;
  priority: number;
  priorityClassName: string;
  schedulerName: string;
  schedulingGates: string[];
  labels: Record<string, string>;
}

export type ReplayStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

export interface Replay {
  id: string;
  name: string;
  snapshot: string;
  configuration: string | null;
  config: unknown;
  options: { allNodes?: boolean; [k: string]: unknown };
  status: ReplayStatus;
  reason: string;
  attempt: number;
  cycles_done: number;
  cycles_total: number;
  progress: number;
  created: string;
  started: string | null;
  finished: string | null;
  summary: { results?: Record<string, number>; cycles?: number; nodes?: number; [k: string]: unknown };
  team?: number | null;
}

export type CycleResult = "Scheduled" | "Unschedulable" | "Waiting" | "Error" | "NotHandled" | "Gated" | string;

/** A row of GET /replays/:id/cycles/ (the per-cycle summary). */
export interface CycleSummary {
  seq: number;
  pod: string;
  namespace: string;
  profile: string;
  result: CycleResult;
  node: string | null;
  message: string | null;
  nominated_node: string | null;
  feasible_count: number | null;
  evaluated_count: number | null;
  tied_count: number | null;
  winner_total: number | null;
}

export interface StageEntry {
  point: string;
  plugin: string;
  code: string;
  reason: string;
  durationMicros: number;
  details?: unknown;
}

export interface FilterStatus {
  code: string;
  plugin: string;
  reasons: string[];
}

export type PluginScore = { raw: number; normalized: number; weighted: number } | { skipped: true };

export interface CycleNode {
  name: string;
  rank: number;
  evaluated: boolean;
  filter: FilterStatus | null;
  scores?: Record<string, PluginScore>;
  total?: number | null;
}

export interface PostFilterDetails {
  nominatedNodeName?: string;
  victims?: string[];
  candidates?: { node: string; victims: string[]; pdbViolations: number; result: string }[];
  rejected?: Record<string, string>;
  [k: string]: unknown;
}

/** GET /replays/:id/cycles/:seq/ */
export interface CycleDetail {
  seq: number;
  pod: string;
  profile: string | null;
  result: CycleResult;
  selectedNode: string | null;
  tiedNodes: string[];
  message: string | null;
  messageBeforePostFilter: string | null;
  nominatedNode: string | null;
  scored: boolean;
  scorePlugins: string[];
  scoreWeights: Record<string, number>;
  skippedScorePlugins: string[];
  startIndex: number;
  nodesToFind: number;
  evaluatedNodes: number;
  stages: StageEntry[];
  postFilter?: PostFilterDetails | null;
  error?: string | null;
  nodeCounts: { passed: number; failed: number; notEvaluated: number };
  rejectedBy: Record<string, number>;
  nodes: { count: number; page: number; pageSize: number; results: CycleNode[] };
}

export interface Configuration {
  id: string;
  name: string;
  text: string;
  parsed: unknown;
  errors: unknown;
  valid: boolean;
  created: string;
  updated: string;
}

export interface ConfigValidation {
  valid: boolean;
  problems: string[];
  percentageOfNodesToScore?: number | null;
  profiles?: {
    schedulerName: string;
    percentageOfNodesToScore: number | null;
    plugins: Record<string, { name: string; weight: number }[]>;
    pluginArgs: Record<string, unknown>;
  }[];
}

// ----- compare (reports.compare_traces) -----
export interface Outcome {
  result: string;
  node: string | null;
  message: string | null;
  profile: string | null;
  nominatedNode: string | null;
  total: number | null;
}

export interface Comparison {
  a: string;
  b: string;
  counts: Record<string, number>;
  pods: { pod: string; change: string; a: Outcome | null; b: Outcome | null }[];
  moved: { pod: string; from: string; to: string; fromTotal: number | null; toTotal: number | null }[];
  newlyUnschedulable: { pod: string; previousResult: string; previousNode: string | null; message: string | null }[];
  newlyScheduled: { pod: string; node: string; previousResult: string; previousMessage: string | null }[];
  resultChanged: { pod: string; from: string; to: string; previousNode: string | null; node: string | null; message: string | null }[];
  onlyInA: string[];
  onlyInB: string[];
  scoreShifts: {
    pod: string;
    aNode: string;
    aTotal: number | null;
    bNode: string;
    bTotal: number | null;
    delta: number | null;
    aNodeTotalInB: number | null;
    bNodeTotalInA: number | null;
  }[];
}

// ----- explain (engine/explain.py) -----
export interface PluginDiff {
  weight: number;
  winner: number;
  other: number;
  difference: number;
  winnerRaw: number;
  otherRaw: number;
}

export interface NodeComparison {
  node: string;
  feasible: boolean;
  total?: number | null;
  margin?: number | null;
  tied?: boolean;
  plugins?: Record<string, PluginDiff>;
  rejected?: FilterStatus | null;
  fixes?: string[];
}

export interface Change {
  kind: string;
  scope: "pod" | "node" | string;
  description: string;
  details?: unknown;
}

export interface ThenFails {
  plugin: string;
  code: string;
  reasons: string[];
  nodes: string[];
  next: Fix[];
}

export interface Fix {
  plugin: string;
  code: string;
  reasons: string[];
  nodes: string[];
  diagnosis: string;
  details: unknown;
  change: Change | null;
  verdict: "fits" | "partly" | "still-fails" | "unchecked" | "no-suggestion" | string;
  verified?: boolean;
  passes?: string[];
  unchecked?: string[];
  thenFails?: ThenFails[];
  feasibleNodesAfter?: number;
  moreFeasibleNodes?: number;
}

export interface RejectedGroup {
  plugin: string;
  code: string;
  reasons: string[];
  count: number;
  nodes: string[];
}

export interface Explanation {
  apiVersion: string;
  kind: string;
  kubernetesVersion: string;
  pod: string;
  profile: string | null;
  seq: number;
  result: string;
  /** The explanation in one line: the resources no node has enough of, or the winner's margin. */
  summary?: string;
  message: string | null;
  error: string | null;
  nodes: { total: number; feasible: number; rejected: number };
  winner: { node: string; total: number | null; tiedNodes: string[]; runnerUp: NodeComparison | null } | null;
  compared: NodeComparison[];
  rejected: RejectedGroup[];
  fixes: Fix[];
  fixesOmitted: number;
  suggestions: { change: Change; feasibleNodes: number; nodes: string[] }[];
  suggestionsOmitted: number;
  checks: { run: number; limit: number; capped: boolean };
  scheduler: {
    allNodes?: boolean;
    result?: string;
    selectedNode?: string | null;
    message?: string | null;
    nominatedNode?: string | null;
    evaluatedNodes?: number;
    error?: string | null;
  };
  notes: string[];
}

// ----- cluster over time -----
/** One cycle of GET /replays/:id/timeline/ (normalised by lib/timeline.ts). */
export interface TimelineEviction {
  pod: string;
  node: string;
  requests: Resources;
}

export interface TimelineCycle {
  seq: number;
  pod: string;
  profile?: string;
  result: string;
  node: string | null;
  nominatedNode?: string | null;
  requests: Resources;
  durationMicros?: number;
  /** "Binding": the record that ended the Permit wait of cycle `follows` (its pod was counted there). */
  kind?: string;
  follows?: number | null;
  /** The pod's scheduling attempt: 2, 3, ... for a retry (a preemptor after its victims left). */
  attempt?: number;
  /** Pods this cycle's preemption deleted, with their requests. */
  evictions?: TimelineEviction[];
}

/** One plugin's latency (normalised by lib/timeline.ts from GET /replays/:id/latency/). */
export interface PluginLatency {
  point: string;
  plugin: string;
  calls: number;
  totalMicros: number;
  meanMicros: number;
  p50Micros?: number | null;
  p95Micros?: number | null;
  p99Micros?: number | null;
  maxMicros?: number | null;
}

/** GET /replays/:id/cycles/:seq/pod/: what the scheduler reads of the cycle's pod (scheduler units). */
export interface CyclePod {
  pod: string;
  requests: Resources;
  priority: number;
  priorityClassName: string | null;
  preemptionPolicy: string;
  schedulerName: string;
  nodeSelector: Record<string, string>;
  nodeAffinity: NodeAffinitySpec | null;
  podAffinity: unknown;
  podAntiAffinity: unknown;
  tolerations: Toleration[];
  topologySpreadConstraints: SpreadConstraint[];
  schedulingGates: string[];
  labels: Record<string, string>;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeAffinitySpec {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
  preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; preference: NodeSelectorTerm }[];
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface SpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: string;
  labelSelector?: unknown;
  minDomains?: number;
}

export interface FilterVerdict {
  plugin: string;
  /** null: not run (PreFilter rejected the pod) */
  code: string | null;
  reasons: string[];
  /** false: kube-scheduler had stopped at an earlier rejection and never ran it */
  ranByScheduler: boolean;
  /** a rejection: what the plugin finds wrong with the node, with its numbers */
  diagnosis?: string[];
}

/** GET /replays/:id/cycles/:seq/nodes/:node/ */
export interface CycleNodeInspection {
  seq: number;
  pod: CyclePod;
  node: {
    name: string;
    labels: Record<string, string>;
    taints: Taint[];
    unschedulable: boolean;
    allocatable: Resources;
    requested: Resources;
    free: Resources;
    podCount: number;
  };
  allFilters: {
    preFilter: { code: string; plugin: string | null; reasons: string[]; excludedBy?: string[] } | null;
    filters: FilterVerdict[];
    note: string;
  };
}
