import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { StageEntry } from "../api/types";
import { buildSteps } from "../lib/stages";
import { StageTimeline } from "./StageTimeline";

const e = (point: string, plugin: string, code = "Success", reason = ""): StageEntry => ({ point, plugin, code, reason, durationMicros: 10 });

const scheduled: StageEntry[] = [
  e("PreEnqueue", "SchedulingGates"),
  e("PreFilter", "NodeResourcesFit"),
  e("PreFilter", "NodeAffinity", "Skip"),
  e("Filter", "NodeResourcesFit"),
  e("PreScore", "TaintToleration"),
  e("Score", "TaintToleration"),
  e("NormalizeScore", "TaintToleration"),
  e("Reserve", "VolumeBinding"),
  e("PreBindPreFlight", "VolumeBinding", "Skip"),
  e("PreBind", "VolumeBinding", "Skip"),
  e("Bind", "DefaultBinder"),
];

const status = (point: string) => screen.getByRole("button", { name: new RegExp(`^${point}:`) }).dataset.status;

describe("StageTimeline", () => {
  it("marks every point of a finished cycle: ran, skipped or not run", () => {
    render(<StageTimeline stages={scheduled} complete filter={{ passed: 3, failed: 1 }} selectedNode="n1" animate={false} />);
    expect(status("PreFilter")).toBe("success");
    expect(status("Filter")).toBe("success");
    expect(status("PostFilter")).toBe("not-run");
    expect(status("Permit")).toBe("not-run");
    expect(status("PreBind")).toBe("skipped");
    expect(status("Bind")).toBe("success");
    expect(screen.getByText("3 passed · 1 rejected")).toBeInTheDocument();
    expect(screen.getByText("to n1")).toBeInTheDocument();
  });

  it("while streaming, the last point reached is running and later ones are pending", () => {
    render(<StageTimeline stages={scheduled.slice(0, 5)} complete={false} animate={false} />);
    expect(status("PreScore")).toBe("active");
    expect(status("Filter")).toBe("success");
    expect(status("PostFilter")).toBe("not-run");
    expect(status("Score")).toBe("pending");
    expect(status("Bind")).toBe("pending");
  });

  it("shows an unschedulable cycle failing at Filter and PostFilter", () => {
    const stages = [e("PreFilter", "NodeResourcesFit"), e("Filter", "NodeResourcesFit"), e("PostFilter", "DefaultPreemption", "Unschedulable", "preemption: not helpful")];
    render(<StageTimeline stages={stages} complete filter={{ passed: 0, failed: 5 }} animate={false} />);
    expect(status("Filter")).toBe("failed");
    expect(status("PostFilter")).toBe("failed");
    expect(status("Score")).toBe("not-run");
    expect(screen.getByText("no node nominated")).toBeInTheDocument();
  });

  it("opens a point's plugin calls", async () => {
    const user = userEvent.setup();
    render(<StageTimeline stages={scheduled} complete animate={false} />);
    expect(screen.queryByRole("table")).toBeNull();
    await user.click(screen.getByRole("button", { name: /^PreFilter:/ }));
    const table = screen.getByRole("table");
    expect(table).toHaveTextContent("NodeAffinity");
    expect(table).toHaveTextContent("Skip");
    expect(screen.getByRole("button", { name: /^PreFilter:/ })).toHaveAttribute("aria-expanded", "true");
  });

  it("says when PreEnqueue kept the pod out", () => {
    render(<StageTimeline stages={[e("PreEnqueue", "SchedulingGates", "UnschedulableAndUnresolvable", "waiting for scheduling gates")]} complete animate={false} />);
    expect(screen.getByText(/kept the pod out of the queue/)).toHaveTextContent("SchedulingGates");
    expect(buildSteps([], { complete: true }).every((s) => s.status === "not-run")).toBe(true);
  });

  it("groups PreBindPreFlight under PreBind and reports Permit waiting", () => {
    const steps = buildSteps([e("PreBindPreFlight", "X"), e("Permit", "P", "Wait")], { complete: true });
    expect(steps.find((s) => s.point === "PreBind")?.entries).toHaveLength(1);
    expect(steps.find((s) => s.point === "Permit")?.status).toBe("wait");
  });
});
