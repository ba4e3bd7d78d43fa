import { fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_QUERY, type NodeRow, type TableQuery } from "../lib/nodes";
import { NodeTable } from "./NodeTable";

const sc = (raw: number, normalized: number, weight: number) => ({ raw, normalized, weighted: normalized * weight });
const ROWS: NodeRow[] = [
  { index: 0, name: "alpha", verdict: "passed", code: "Success", plugin: "", reasons: [], scores: { Fit: sc(40, 40, 1), Taints: sc(0, 100, 3) }, total: 340, rank: 1 },
  { index: 1, name: "bravo", verdict: "passed", code: "Success", plugin: "", reasons: [], scores: { Fit: sc(90, 90, 1), Taints: sc(2, 50, 3) }, total: 240, rank: 2 },
  { index: 2, name: "charlie", verdict: "failed", code: "Unschedulable", plugin: "NodeResourcesFit", reasons: ["Insufficient cpu"], scores: null, total: null, rank: 3 },
  { index: 3, name: "delta", verdict: "failed", code: "UnschedulableAndUnresolvable", plugin: "TaintToleration", reasons: ["node(s) had untolerated taint(s)"], scores: null, total: null, rank: 4 },
  { index: 4, name: "echo", verdict: "not-evaluated", code: "", plugin: "", reasons: [], scores: null, total: null, rank: 5 },
];

function Harness({ onSelect = () => {}, initial = DEFAULT_QUERY }: { onSelect?: (n: string) => void; initial?: TableQuery }) {
  const [q, setQ] = useState<TableQuery>(initial);
  const [sel, setSel] = useState<string | null>(null);
  return (
    <NodeTable
      rows={ROWS}
      scorePlugins={["Fit", "Taints"]}
      weights={{ Fit: 1, Taints: 3 }}
      query={q}
      onQueryChange={setQ}
      selected={sel}
      onSelect={(n) => {
        setSel(n);
        onSelect(n);
      }}
      winner="alpha"
      tied={["alpha"]}
    />
  );
}

const names = () => screen.getAllByRole("row").filter((r) => r.dataset.node).map((r) => r.dataset.node);

describe("NodeTable", () => {
  it("lists every node in rank order with its verdict in words", () => {
    render(<Harness />);
    expect(names()).toEqual(["alpha", "bravo", "charlie", "delta", "echo"]);
    const charlie = screen.getAllByRole("row").find((r) => r.dataset.node === "charlie")!;
    expect(within(charlie).getByText("NodeResourcesFit")).toBeInTheDocument();
    expect(within(charlie).getByText("Insufficient cpu")).toBeInTheDocument();
    const grid = screen.getByRole("grid", { name: "Nodes of this cycle" });
    expect(within(grid).getByText("not evaluated")).toBeInTheDocument();
    expect(within(grid).getByText("selected")).toBeInTheDocument();
  });

  it("pins rank, node and verdict on the left and the total on the right; names every plugin in the legend", () => {
    render(<Harness />);
    const alpha = screen.getAllByRole("row").find((r) => r.dataset.node === "alpha")!;
    const cells = within(alpha).getAllByRole("gridcell");
    expect(cells.slice(0, 3).every((c) => c.classList.contains("pin-l"))).toBe(true);
    expect(cells[cells.length - 1].classList.contains("pin-r")).toBe(true);
    expect(cells[3].classList.contains("pin-l")).toBe(false);
    const legend = screen.getByLabelText("Score plugins and weights");
    expect(legend).toHaveTextContent("Fit ×1");
    expect(legend).toHaveTextContent("Taints ×3");
    const verdicts = screen.getByRole("list", { name: "Verdicts" });
    expect(verdicts).toHaveTextContent("UnschedulableAndUnresolvable: rejected; preempting pods cannot help");
    expect(verdicts).toHaveTextContent("Unschedulable: rejected by that plugin; preemption may free room");
  });

  it("searches, filters by verdict and by rejecting plugin", async () => {
    const user = userEvent.setup();
    render(<Harness />);
    await user.type(screen.getByRole("searchbox", { name: /search nodes/i }), "LT");
    expect(names()).toEqual(["delta"]);
    await user.clear(screen.getByRole("searchbox", { name: /search nodes/i }));
    await user.selectOptions(screen.getByRole("combobox", { name: /verdict/i }), "failed");
    expect(names()).toEqual(["charlie", "delta"]);
    await user.selectOptions(screen.getByRole("combobox", { name: /rejecting plugin/i }), "TaintToleration");
    expect(names()).toEqual(["delta"]);
    expect(screen.getByText("1 of 5 nodes")).toBeInTheDocument();
    await user.selectOptions(screen.getByRole("combobox", { name: /verdict/i }), "passed");
    expect(screen.getByText(/no node matches/i)).toBeInTheDocument();
  });

  it("sorts by a column header, and toggles the direction on a second click", async () => {
    const user = userEvent.setup();
    render(<Harness />);
    await user.click(screen.getByRole("button", { name: /Sort by Fit/ }));
    expect(names().slice(0, 2)).toEqual(["bravo", "alpha"]);
    expect(screen.getByRole("button", { name: /Sort by Fit/ }).closest("[role=columnheader]")).toHaveAttribute("aria-sort", "ascending");
    await user.click(screen.getByRole("button", { name: /Sort by Fit/ }));
    expect(names().slice(0, 2)).toEqual(["alpha", "bravo"]);
    await user.click(screen.getByRole("button", { name: "Sort by Node" }));
    expect(names()).toEqual(["alpha", "bravo", "charlie", "delta", "echo"]);
  });

  it("shows raw, normalized or weighted scores", async () => {
    const user = userEvent.setup();
    render(<Harness />);
    const bravo = () => screen.getAllByRole("row").find((r) => r.dataset.node === "bravo")!;
    expect(within(bravo()).getByLabelText("Taints weighted 150")).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Normalized" }));
    expect(within(bravo()).getByLabelText("Taints normalized 50")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Normalized" })).toHaveAttribute("aria-pressed", "true");
    await user.click(screen.getByRole("button", { name: "Raw" }));
    expect(within(bravo()).getByLabelText("Taints raw 2")).toBeInTheDocument();
    expect(within(bravo()).getByLabelText("Fit raw 90")).toBeInTheDocument();
  });

  it("moves with the arrow keys and opens a node with Enter or Space", () => {
    const onSelect = vi.fn();
    render(<Harness onSelect={onSelect} />);
    const grid = screen.getByRole("grid", { name: /nodes of this cycle/i });
    grid.focus();
    fireEvent.keyDown(grid, { key: "ArrowDown" });
    fireEvent.keyDown(grid, { key: "ArrowDown" });
    const active = document.getElementById(grid.getAttribute("aria-activedescendant")!)!;
    expect(active.dataset.node).toBe("charlie");
    fireEvent.keyDown(grid, { key: "Enter" });
    expect(onSelect).toHaveBeenLastCalledWith("charlie");
    fireEvent.keyDown(grid, { key: "End" });
    fireEvent.keyDown(grid, { key: " " });
    expect(onSelect).toHaveBeenLastCalledWith("echo");
    fireEvent.keyDown(grid, { key: "Home" });
    fireEvent.keyDown(grid, { key: "ArrowUp" });
    fireEvent.keyDown(grid, { key: "Enter" });
    expect(onSelect).toHaveBeenLastCalledWith("alpha");
    expect(screen.getAllByRole("row").find((r) => r.dataset.node === "alpha")).toHaveAttribute("aria-selected", "true");
  });

  it("shows the next cycle in the rows already on screen, and a click opens the node shown there", async () => {
    const user = userEvent.setup();
    const onSelect = vi.fn();
    const next: NodeRow[] = ROWS.map((r, i) => ({ ...r, name: `next-${i}`, rank: ROWS.length - i }));
    const props = { scorePlugins: ["Fit", "Taints"], weights: { Fit: 1, Taints: 3 }, query: DEFAULT_QUERY, onQueryChange: () => {}, selected: null };
    const { rerender } = render(<NodeTable {...props} rows={ROWS} onSelect={onSelect} winner="alpha" />);
    const first = screen.getAllByRole("row").filter((r) => r.dataset.node);
    rerender(<NodeTable {...props} rows={next} onSelect={(n) => onSelect(`new:${n}`)} winner="next-4" />);
    const rows = screen.getAllByRole("row").filter((r) => r.dataset.node);
    expect(rows.map((r) => r.dataset.node)).toEqual(["next-4", "next-3", "next-2", "next-1", "next-0"]);
    // the same elements, updated
    rows.forEach((r, k) => expect(r).toBe(first[k]));
    expect(within(rows[0]).getByText("selected")).toBeInTheDocument();
    expect(within(rows[4]).queryByText("selected")).toBeNull();
    expect(rows[4]).toHaveTextContent("5next-0");
    await user.click(rows[1]);
    expect(onSelect).toHaveBeenLastCalledWith("new:next-3");
  });

  it("renders only a window of a 5000-node cycle", () => {
    const many: NodeRow[] = Array.from({ length: 5000 }, (_, i) => ({ ...ROWS[0], index: i, name: `n-${i}`, rank: i + 1 }));
    render(
      <NodeTable rows={many} scorePlugins={["Fit"]} weights={{ Fit: 1 }} query={DEFAULT_QUERY} onQueryChange={() => {}} selected={null} onSelect={() => {}} />,
    );
    const rendered = names().length;
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(100);
    expect(screen.getByText("5,000 nodes")).toBeInTheDocument();
  });
});
