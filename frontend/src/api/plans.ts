// Plans (/api/v1/plans/): capacity, drain and scale-up questions and their answers, as the command line
// prints them with --format json --utilization (schedviz/planning).

import type { components } from "./schema.gen";

export type PlanKind = "capacity" | "drain" | "scale-up";
export type PlanStatus = "queued" | "running" | "succeeded" | "failed";

export interface UsageFigures {
  cpuMilli: number;
  memoryBytes: number;
  pods: number;
}

export interface NodeUsage {
  allocatable: UsageFigures;
  requested: UsageFigures;
  percent: Record<keyof UsageFigures, number | null>;
}

export interface Utilization {
  before: { nodes: Record<string, NodeUsage>; total: NodeUsage };
  after: { nodes: Record<string, NodeUsage>; total: NodeUsage };
}

export interface CapacityStop {
  reason: "unschedulable" | "max";
  pod: string | null;
  spec: string | null;
  result: string | null;
  message: string | null;
  nodes: Record<string, string>;
}

export interface CapacitySpec {
  pod: string;
  source: string;
  replicas: number;
  perNode: Record<string, number>;
  perZone: Record<string, number>;
  stop: CapacityStop | null;
}

export interface CapacityResult {
  kind: "CapacityPlan";
  replicas: number;
  perNode: Record<string, number>;
  perZone: Record<string, number>;
  stop: CapacityStop | null;
  order: string;
  max: number;
  pods: CapacitySpec[];
  utilization?: Utilization;
}

export interface DrainOutcome {
  pod: string;
  node: string;
  action: "stays" | "evicted" | "deleted";
  reason?: string;
  replacement?: string;
  result?: string;
  selectedNode?: string | null;
  message?: string | null;
}

export interface DrainResult {
  kind: "DrainPlan";
  nodes: string[];
  respectPdb: boolean;
  summary: Record<string, number>;
  pods: DrainOutcome[];
  budgets: { name: string; disruptionsAllowed: number; desiredHealthy: number; currentHealthy: number; violated: boolean; evicted: string[]; blocked: string[] }[];
  otherPending: { pod: string; result: string; selectedNode: string | null; message: string | null }[];
  utilization?: Utilization;
}

export interface ScaleUpTemplate {
  template: string;
  source: string;
  maxNodes: number;
  stop: "fits" | "no-progress" | "max-nodes";
  nodesAdded: number;
  nodesNeeded: number | null;
  pendingPods: number;
  scheduledBefore: number;
  scheduled: number;
  steps: { nodes: number; scheduled: number; unschedulable: number; podsOnNewNodes: Record<string, number> }[];
  helpless: { pod: string; result: string; message: string | null; why: string; helps: boolean | null }[];
  utilization?: Utilization;
}

export interface ScaleUpResult {
  kind: "ScaleUpPlan";
  templates: ScaleUpTemplate[];
}

export type PlanResult = CapacityResult | DrainResult | ScaleUpResult;

export interface PlanReplay {
  label: string;
  replay: string;
  snapshot: string;
}

export interface Plan {
  id: string;
  kind: PlanKind;
  name: string;
  snapshot: string;
  snapshot_name: string;
  request: Record<string, unknown>;
  config: unknown;
  status: PlanStatus;
  result: PlanResult | null;
  error: string;
  replays: PlanReplay[];
  created: string;
  finished: string | null;
}

export interface PlanListItem {
  id: string;
  kind: PlanKind;
  name: string;
  snapshot: string;
  snapshot_name: string;
  status: PlanStatus;
  headline: string;
  error: string;
  created: string;
  finished: string | null;
}

export interface PlanQuestion {
  kind: PlanKind;
  snapshot: string;
  name?: string;
  all_nodes?: boolean;
  pods?: string[];
  order?: "round-robin" | "in-order";
  max?: number;
  nodes?: string[];
  selector?: string;
  respect_pdb?: boolean;
  templates?: string[];
  max_nodes?: number;
}

export const PLANS_URL = "/api/v1/plans/";
export const planUrl = (id: string) => `/api/v1/plans/${encodeURIComponent(id)}/`;

// Compile-time: the plan types name exactly the fields the API documents (schema.gen.ts), and a
// question asks only for fields the endpoint takes.
type Schemas = components["schemas"];
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : { onlyInExplorer: Exclude<keyof A, keyof B>; onlyInApi: Exclude<keyof B, keyof A> };
type Within<A, B> = [Exclude<keyof A, keyof B>] extends [never] ? true : { unknownToApi: Exclude<keyof A, keyof B> };

export const PLAN_TYPES_MATCH: {
  Plan: SameKeys<Plan, Schemas["Plan"]>;
  PlanListItem: SameKeys<PlanListItem, Schemas["PlanList"]>;
  PlanQuestion: Within<PlanQuestion, Schemas["PlanCreateRequest"]>;
  PlanKind: [PlanKind] extends [Schemas["PlanKindEnum"]] ? ([Schemas["PlanKindEnum"]] extends [PlanKind] ? true : false) : false;
} = { Plan: true, PlanListItem: true, PlanQuestion: true, PlanKind: true };
