// The stage timeline's model: the ten extension points of a scheduling cycle and what happened at each.

import type { StageEntry } from "../api/types";

export const POINTS = [
  "PreFilter",
  "Filter",
  "PostFilter",
  "PreScore",
  "Score",
  "NormalizeScore",
  "Reserve",
  "Permit",
  "PreBind",
  "Bind",
] as const;
export type Point = (typeof POINTS)[number];

/** Points shown inside another step (PreEnqueue has its own notice). */
const GROUPED: Record<string, Point> = { PreBindPreFlight: "PreBind", Unreserve: "Reserve", PostBind: "Bind" };

export type StepStatus = "pending" | "active" | "success" | "skipped" | "failed" | "error" | "wait" | "not-run";

export interface Step {
  point: Point;
  status: StepStatus;
  entries: StageEntry[];
  micros: number;
  /** Reached: something ran at this point (or the cycle went past it). */
  reached: boolean;
}

export interface StepContext {
  /** The cycle has ended: points with nothing recorded did not run. */
  complete: boolean;
  /** Feasible nodes after Filter, when known: 0 makes Filter a failure even though each plugin returned Success. */
  feasible?: number | null;
}

function statusOf(entries: StageEntry[]): StepStatus {
  if (entries.some((e) => e.code === "Error")) return "error";
  if (entries.some((e) => e.code === "Unschedulable" || e.code === "UnschedulableAndUnresolvable")) return "failed";
  if (entries.some((e) => e.code === "Wait" || e.code === "Pending")) return "wait";
  if (entries.length && entries.every((e) => e.code === "Skip")) return "skipped";
  return "success";
}

export function pointOf(entry: StageEntry): Point | "PreEnqueue" | null {
  if (entry.point === "PreEnqueue") return "PreEnqueue";
  if ((POINTS as readonly string[]).includes(entry.point)) return entry.point as Point;
  return GROUPED[entry.point] ?? null;
}

export function buildSteps(stages: StageEntry[], ctx: StepContext): Step[] {
  const by = new Map<Point, StageEntry[]>();
  for (const e of stages) {
    const p = pointOf(e);
    if (p && p !== "PreEnqueue") by.set(p, [...(by.get(p) ?? []), e]);
  }
  let lastReached = -1;
  POINTS.forEach((p, i) => {
    if (by.has(p)) lastReached = i;
  });
  return POINTS.map((point, i) => {
    const entries = by.get(point) ?? [];
    const micros = entries.reduce((s, e) => s + (e.durationMicros || 0), 0);
    let status: StepStatus;
    if (entries.length) {
      status = statusOf(entries);
      if (point === "Filter" && ctx.feasible === 0 && status === "success") status = "failed";
      if (!ctx.complete && i === lastReached) status = "active";
    } else {
      status = ctx.complete || i < lastReached ? "not-run" : "pending";
    }
    return { point, status, entries, micros, reached: entries.length > 0 };
  });
}

export function preEnqueueProblem(stages: StageEntry[]): StageEntry | null {
  return stages.find((e) => e.point === "PreEnqueue" && e.code !== "Success" && e.code !== "Skip") ?? null;
}

export const STATUS_TEXT: Record<StepStatus, string> = {
  pending: "pending",
  active: "running",
  success: "success",
  skipped: "skipped",
  failed: "failed",
  error: "error",
  wait: "waiting",
  "not-run": "not run",
};

export const STATUS_ICON: Record<StepStatus, string> = {
  pending: "",
  active: "…",
  success: "✓",
  skipped: "↷",
  failed: "✕",
  error: "!",
  wait: "‖",
  "not-run": "–",
};
