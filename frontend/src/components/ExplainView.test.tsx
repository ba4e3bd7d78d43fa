import { render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { describe, expect, it } from "vitest";
import type { Explanation } from "../api/types";
import { comparisonWords, ExplainView } from "./ExplainView";

const diff = (weight: number, winner: number, other: number, winnerRaw = winner, otherRaw = other) => ({
  weight,
  winner,
  other,
  difference: winner - other,
  winnerRaw,
  otherRaw,
});

const base: Explanation = {
  apiVersion: "schedviz.io/v1",
  kind: "Explanation",
  kubernetesVersion: "v1.35.4",
  pod: "default/hello",
  profile: "default-scheduler",
  seq: 2,
  result: "Scheduled",
  message: null,
  error: null,
  nodes: { total: 21, feasible: 17, rejected: 4 },
  winner: {
    node: "gen-1a-0",
    total: 491,
    tiedNodes: ["gen-1a-0"],
    runnerUp: {
      node: "gen-1b-1",
      feasible: true,
      total: 485,
      margin: 6,
      tied: false,
      plugins: { TaintToleration: diff(3, 300, 300, 0, 0), NodeResourcesFit: diff(1, 94, 89), NodeResourcesBalancedAllocation: diff(1, 97, 96) },
    },
  },
  compared: [
    { node: "gpu-1a", feasible: false, rejected: { plugin: "TaintToleration", code: "UnschedulableAndUnresolvable", reasons: ["node(s) had untolerated taint(s)"] }, fixes: ["tolerate nvidia.com/gpu=present:NoSchedule -> fits (checked)"] },
  ],
  rejected: [
    { plugin: "TaintToleration", code: "UnschedulableAndUnresolvable", reasons: ["node(s) had untolerated taint(s)"], count: 3, nodes: ["gpu-1a", "gpu-1b", "gpu-1c"] },
    { plugin: "NodeUnschedulable", code: "UnschedulableAndUnresolvable", reasons: ["node(s) were unschedulable"], count: 1, nodes: ["cordoned-1c"] },
  ],
  fixes: [
    {
      plugin: "TaintToleration",
      code: "UnschedulableAndUnresolvable",
      reasons: ["node(s) had untolerated taint(s)"],
      nodes: ["gpu-1a", "gpu-1b", "gpu-1c"],
      diagnosis: "untolerated taint(s): nvidia.com/gpu=present:NoSchedule",
      details: {},
      change: { kind: "tolerate", scope: "pod", description: "tolerate nvidia.com/gpu=present:NoSchedule" },
      verdict: "still-fails",
      passes: [],
      unchecked: [],
      thenFails: [
        {
          plugin: "NodeResourcesFit",
          code: "UnschedulableAndUnresolvable",
          reasons: ["Insufficient cpu"],
          nodes: ["gpu-1a"],
          next: [
            {
              plugin: "NodeResourcesFit",
              code: "UnschedulableAndUnresolvable",
              reasons: ["Insufficient cpu"],
              nodes: ["gpu-1a"],
              diagnosis: "needs 32 more CPU",
              details: {},
              change: { kind: "free-resources", scope: "node", description: "add 32 CPU of allocatable capacity to the node" },
              verdict: "fits",
              passes: ["gpu-1a"],
              unchecked: [],
              thenFails: [],
            },
          ],
        },
      ],
      feasibleNodesAfter: 20,
      moreFeasibleNodes: 3,
    },
  ],
  fixesOmitted: 0,
  suggestions: [],
  suggestionsOmitted: 0,
  checks: { run: 3, limit: 200, capped: false },
  scheduler: { allNodes: true, result: "Scheduled", selectedNode: "gen-1a-0", evaluatedNodes: 21 },
  notes: [],
};

function show(ex: Explanation) {
  return render(
    <MemoryRouter>
      <ExplainView ex={ex} replayId="r1" />
    </MemoryRouter>,
  );
}

describe("ExplainView", () => {
  it("explains the winner against the runner-up in words and in a chart", () => {
    show(base);
    expect(screen.getByRole("heading", { name: "Why gen-1a-0?" })).toBeInTheDocument();
    const block = screen.getAllByTestId("comparison")[0];
    expect(block).toHaveTextContent("gen-1a-0 scored 491 and gen-1b-1 485: gen-1a-0 is ahead by 6 points.");
    expect(block).toHaveTextContent("NodeResourcesFit gave gen-1a-0 5 more (94 against 89");
    expect(block).toHaveTextContent("Equal on TaintToleration.");
    const chart = within(block).getByRole("img");
    expect(chart.getAttribute("aria-label")).toContain("NodeResourcesFit: 94 vs 89");
    expect(within(block).getAllByTestId("bar-winner")).toHaveLength(3);
    expect(block.querySelector('[data-plugin="NodeResourcesFit"]')).toHaveTextContent("+5");
  });

  it("explains a chosen node that was rejected, with what would make it fit", () => {
    show(base);
    const block = screen.getAllByTestId("comparison")[1];
    expect(block).toHaveTextContent("gpu-1a was rejected by TaintToleration");
    expect(block).toHaveTextContent("tolerate nvidia.com/gpu=present:NoSchedule -> fits (checked)");
  });

  it("groups rejected nodes by reason and shows the checked changes as a tree", () => {
    show(base);
    const groups = screen.getAllByTestId("rejected-group");
    expect(groups.map((g) => g.firstChild?.textContent)).toEqual(["3", "1"]);
    expect(groups[0]).toHaveTextContent("gpu-1a, gpu-1b, gpu-1c");
    const fixes = screen.getAllByTestId("fix");
    expect(fixes[0]).toHaveTextContent("not enough alone");
    expect(fixes[0]).toHaveTextContent("20 feasible nodes after the change (+3)");
    expect(fixes[0]).toHaveTextContent("With this change alone, 1 node then fails NodeResourcesFit");
    expect(fixes[1]).toHaveTextContent("add 32 CPU of allocatable capacity to the node");
    expect(fixes[1]).toHaveTextContent("fits (checked)");
  });

  it("for an unschedulable pod shows the message and the ranked single changes", () => {
    show({
      ...base,
      result: "Unschedulable",
      message: "0/21 nodes are available: 17 Insufficient cpu.",
      winner: null,
      compared: [],
      suggestions: [
        { change: { kind: "lower-request", scope: "pod", description: "request at most 26 CPU (the pod requests 40)" }, feasibleNodes: 1, nodes: ["big-1c"] },
        { change: { kind: "free-resources", scope: "node", description: "add 14 CPU" }, feasibleNodes: 1, nodes: ["big-1c", "big-1b"] },
      ],
    });
    expect(screen.queryByRole("heading", { name: /^Why / })).toBeNull();
    expect(screen.getByText("0/21 nodes are available: 17 Insufficient cpu.")).toBeInTheDocument();
    const rows = screen.getAllByTestId("suggestion");
    expect(rows[0]).toHaveTextContent("request at most 26 CPU");
    expect(rows[1]).toHaveTextContent("any one of big-1c, big-1b");
  });

  it("words a tie", () => {
    const words = comparisonWords("a", { node: "b", feasible: true, total: 10, margin: 0, tied: true, plugins: { P: diff(1, 5, 5) } });
    expect(words[0]).toBe("a and b have the same total score (10): a wins because it comes first in snapshot order.");
  });
});
