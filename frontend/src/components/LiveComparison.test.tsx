import { render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { describe, expect, it } from "vitest";
import type { LiveComparison } from "../api/live";
import { LiveComparisonPanel } from "./LiveComparison";

const diverged: LiveComparison = {
  seq: 7,
  pod: "shop/web-5d8f-abcde",
  trigger: "bound",
  triggerSource: "event",
  observed: "2026-01-01T10:00:00Z",
  occurred: null,
  resourceVersion: "1207",
  actual: { result: "Scheduled", node: "node-12", message: null, scheduler: "default-scheduler" },
  replay: { result: "Scheduled", node: "node-07", message: null, tiedCount: 3 },
  agreement: "diverged",
  divergence: "score",
  explanations: [
    {
      code: "score",
      message: "the replay scores node-12 380 and node-07 412 (weighted difference by plugin: NodeResourcesFit +32)",
      details: { winner: "node-07", winnerTotal: 412, node: "node-12", nodeTotal: 380, byPlugin: { NodeResourcesFit: 32, ImageLocality: -4 } },
    },
    { code: "stale-state", message: "node-12 changed 2 s before the decision", details: { changes: ["node-12: pod shop/db-0 added", "node-12: labels changed"] } },
  ],
  notes: ["a pod was deleted from node-03 1 s before the decision"],
  exact: false,
  gap: true,
  error: null,
};

function renderPanel(live: LiveComparison, links = true) {
  return render(
    <MemoryRouter>
      <LiveComparisonPanel live={live} cycleHref={links ? "/live/c1/cycles/7" : undefined} whyHref={links ? "/live/c1/cycles/7/why" : undefined} />
    </MemoryRouter>,
  );
}

describe("the live comparison", () => {
  it("sets the cluster's decision against the replay's, with the agreement, the main explanation and its details", () => {
    renderPanel(diverged);
    const cluster = screen.getByRole("group", { name: "The cluster decided" });
    const replay = screen.getByRole("group", { name: "The replay decided" });
    expect(within(cluster).getByTestId("side-node")).toHaveTextContent("node-12");
    expect(cluster).toHaveTextContent("by default-scheduler");
    expect(within(replay).getByTestId("side-node")).toHaveTextContent("node-07");
    expect(replay).toHaveTextContent("tied with 2 other nodes");
    const heading = screen.getByRole("heading", { name: "The cluster against the replay" }).parentElement!;
    expect(within(heading).getByText("diverged")).toBeInTheDocument();

    const items = within(screen.getByRole("list", { name: "Explanations" })).getAllByTestId("explanation");
    expect(items).toHaveLength(2);
    expect(items[0]).toHaveTextContent("the replay scores node-12 380 and node-07 412");
    // each explanation's details, folded; numbers by plugin come largest first, signed
    const main = items[0].querySelector("details")!;
    expect(main.open).toBe(false);
    expect(main).toHaveTextContent("winner total412");
    expect(main).toHaveTextContent("by pluginNodeResourcesFit +32, ImageLocality -4");
    expect(items[1].querySelector("details")!.open).toBe(false);
    expect(items[1]).toHaveTextContent("node-12: pod shop/db-0 added, node-12: labels changed");

    expect(screen.getByRole("list", { name: "Notes" })).toHaveTextContent("a pod was deleted from node-03 1 s before the decision");
    expect(screen.getByText("state not rebuilt exactly")).toHaveAttribute("data-flag", "exact");
    expect(screen.getByText("seen after a watch gap")).toBeInTheDocument();
    expect(screen.getByText(/seen from a Scheduled event/)).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Why here?" })).toHaveAttribute("href", "/live/c1/cycles/7/why");
    expect(screen.getByRole("link", { name: "Cycle 7" })).toHaveAttribute("href", "/live/c1/cycles/7");
  });

  it("shows a match without divergence and a failed decision by its results", () => {
    renderPanel(
      {
        ...diverged,
        agreement: "match",
        divergence: null,
        trigger: "failed",
        triggerSource: "pod",
        actual: { result: "Unschedulable", node: null, message: "0/21 nodes are available: 21 Insufficient cpu.", scheduler: "default-scheduler" },
        replay: { result: "Unschedulable", node: null, message: "0/21 nodes are available: 21 Insufficient cpu.", tiedCount: 0 },
        explanations: [],
        notes: [],
        exact: true,
        gap: false,
      },
      false,
    );
    for (const name of ["The cluster decided", "The replay decided"]) {
      const side = screen.getByRole("group", { name });
      expect(within(side).getByText("Unschedulable")).toBeInTheDocument();
      expect(within(side).queryByTestId("side-node")).not.toBeInTheDocument();
      expect(side).toHaveTextContent("0/21 nodes are available: 21 Insufficient cpu.");
    }
    expect(screen.getByText("match")).toBeInTheDocument();
    expect(screen.queryByRole("list", { name: "Explanations" })).not.toBeInTheDocument();
    expect(screen.getByText("state rebuilt exactly")).toBeInTheDocument();
    expect(screen.queryByText("seen after a watch gap")).not.toBeInTheDocument();
    expect(screen.queryByRole("link")).not.toBeInTheDocument();
  });

  it("says why a skipped decision was not replayed", () => {
    renderPanel({ ...diverged, agreement: "skipped", divergence: null, explanations: [], replay: { result: null, node: null, message: null, tiedCount: null }, error: "the pod is unknown to the mirror" });
    expect(screen.getByRole("group", { name: "The replay decided" })).toHaveTextContent("no result");
    expect(screen.getByText("Not replayed").nextElementSibling).toHaveTextContent("the pod is unknown to the mirror");
  });
});
