import { act, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { HeatmapCallbacks, HeatmapState } from "../components/heatmapChart";
import { TimelinePage } from "./TimelinePage";

// jsdom has no canvas: the chart is a stand-in that hands the test what the page gives the chart
const charts: { state: () => HeatmapState; on: HeatmapCallbacks }[] = [];
vi.mock("../components/heatmapChart", () => ({
  AXIS_H: 26,
  createHeatmapChart: (host: HTMLElement, _w: number, _h: number, state: () => HeatmapState, on: HeatmapCallbacks) => {
    const canvas = document.createElement("canvas");
    host.appendChild(canvas);
    charts.push({ state, on });
    return { canvas, setCells: () => {}, redraw: () => {}, setSize: () => {}, destroy: () => canvas.remove() };
  },
}));

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });
}

const node = (name: string, zone: string, used: number) => ({
  name,
  zone,
  region: "r",
  allocatable: { cpu: 1000, pods: 10 },
  requested: { cpu: used, pods: 1 },
  nonZeroRequested: {},
  podCount: 1,
  taints: [],
  unschedulable: false,
  labels: {},
});
// snapshot order mixes the zones: grouped, z-a holds a1 a2 a3 and z-b b1 b2 b3
const nodes = [node("b1", "z-b", 0), node("a1", "z-a", 100), node("a2", "z-a", 0), node("b2", "z-b", 500), node("a3", "z-a", 0), node("b3", "z-b", 0)];
const cycles = [
  { seq: 1, pod: "p1", result: "Scheduled", node: "a1", requests: { cpu: 400 } },
  { seq: 2, pod: "p2", result: "Scheduled", node: "b2", requests: { cpu: 200 } },
  { seq: 3, pod: "p3", result: "Unschedulable", node: null, requests: { cpu: 9000 } },
];

beforeEach(() => {
  charts.length = 0;
  // the queue strip draws on a canvas of its own: nothing to draw on here
  vi.spyOn(HTMLCanvasElement.prototype, "getContext").mockReturnValue(null);
  vi.stubGlobal(
    "fetch",
    vi.fn(async (input: RequestInfo | URL) => {
      const url = String(input);
      if (url.startsWith("/api/v1/replays/r1/timeline/")) return json({ replay: "r1", cycles });
      if (url.startsWith("/api/v1/replays/r1/latency/")) return json({ plugins: [] });
      if (url.startsWith("/api/v1/snapshots/s1/nodes/")) return json({ count: nodes.length, next: null, previous: null, results: nodes });
      if (url.startsWith("/api/v1/replays/r1/")) return json({ id: "r1", name: "r", snapshot: "s1", status: "succeeded", attempt: 1, cycles_done: 3, cycles_total: 3, options: {}, summary: {} });
      return new Response("{}", { status: 404 });
    }),
  );
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function renderAt(url: string) {
  return render(
    <MemoryRouter initialEntries={[url]}>
      <Routes>
        <Route path="/replays/:id/timeline" element={<TimelinePage />} />
      </Routes>
    </MemoryRouter>,
  );
}

describe("Cluster over time", () => {
  it("groups the rows by zone, names the cell under the pointer, and zooms to the nodes and cycles dragged over", async () => {
    renderAt("/replays/r1/timeline?group=zone");
    const groups = await screen.findByRole("list", { name: "Node groups" });
    expect([...groups.querySelectorAll("[role=listitem]")].map((g) => g.textContent)).toEqual(["z-a (3)", "z-b (3)"]);
    await waitFor(() => expect(charts.length).toBe(1));
    const chart = charts[0];
    expect(chart.state()).toMatchObject({ rows: 6, cols: 4, separators: [0, 3] });
    expect([0, 1, 2, 3].map((c) => chart.state().colLabel(c))).toEqual(["0", "1", "2", "3"]);
    // a1 after cycle 1: 100m + 400m of 1000m
    act(() => chart.on.onHover([0, 1], 20, 5));
    expect(screen.getByRole("status")).toHaveTextContent("z-a · a1 · after cycle 1: 50%");
    act(() => chart.on.onHover([4, 3], 20, 5));
    expect(screen.getByRole("status")).toHaveTextContent("z-b · b2 · after cycle 3: 70%");

    // a drag over rows 4-5 (b2, b3) and columns 1-2 (after cycles 1 and 2)
    act(() => chart.on.onSelect({ rows: [4, 6], cols: [1, 3] }));
    const note = screen.getByTestId("heatmap-zoom");
    expect(note).toHaveAttribute("data-zoomed", "true");
    expect(note).toHaveTextContent("Zoomed to nodes 5–6 of 6, cycles 1–2");
    await waitFor(() => expect(chart.state()).toMatchObject({ rows: 2, cols: 2 }));
    expect([0, 1].map((c) => chart.state().colLabel(c))).toEqual(["1", "2"]);
    act(() => chart.on.onHover([0, 1], 20, 5));
    expect(screen.getByRole("status")).toHaveTextContent("z-b · b2 · after cycle 2: 70%");
    // one node: its name
    act(() => chart.on.onSelect({ rows: [1, 2], cols: [0, 2] }));
    expect(screen.getByTestId("heatmap-zoom")).toHaveTextContent("Zoomed to node b3, cycles 1–2");

    await userEvent.click(screen.getByRole("button", { name: "Show all" }));
    expect(screen.getByTestId("heatmap-zoom")).toHaveAttribute("data-zoomed", "false");
    await waitFor(() => expect(chart.state()).toMatchObject({ rows: 6, cols: 4 }));
    // a double-click on the map asks for the whole map too
    act(() => chart.on.onSelect({ rows: [0, 3], cols: [0, 4] }));
    expect(screen.getByTestId("heatmap-zoom")).toHaveTextContent("Zoomed to nodes 1–3 of 6, cycles 0–3");
    act(() => chart.on.onReset());
    expect(screen.getByTestId("heatmap-zoom")).toHaveAttribute("data-zoomed", "false");
  });

  it("sorts by utilization at the end of the replay, busiest first, and a click on a column moves the cursor", async () => {
    renderAt("/replays/r1/timeline?group=utilization&cycle=0");
    await waitFor(() => expect(charts.length).toBe(1));
    const chart = charts[0];
    await waitFor(() => expect(chart.state().rows).toBe(6));
    act(() => chart.on.onHover([0, 3], 20, 5));
    expect(screen.getByRole("status")).toHaveTextContent(/^b2 · after cycle 3: 70%$/);
    act(() => chart.on.onHover([1, 3], 20, 5));
    expect(screen.getByRole("status")).toHaveTextContent(/^a1 · after cycle 3: 50%$/);
    expect(chart.state().cursor).toBe(0);
    act(() => chart.on.onPick(2));
    await waitFor(() => expect(chart.state().cursor).toBe(2));
    expect(screen.getByRole("slider", { name: "Cycle" })).toHaveValue("2");
  });
});
