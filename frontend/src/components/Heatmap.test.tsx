import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { HeatmapCallbacks, HeatmapState } from "./heatmapChart";
import { Heatmap } from "./Heatmap";

// the chart library draws on canvas, which jsdom lacks: a stand-in records what the component asks of it
const made: { state: () => HeatmapState; on: HeatmapCallbacks; canvas: HTMLCanvasElement; cells: number; redraws: number; sizes: [number, number][] }[] = [];
vi.mock("./heatmapChart", () => ({
  AXIS_H: 26,
  createHeatmapChart: (host: HTMLElement, _w: number, _h: number, state: () => HeatmapState, on: HeatmapCallbacks) => {
    const canvas = document.createElement("canvas");
    host.appendChild(canvas);
    const rec = { state, on, canvas, cells: 0, redraws: 0, sizes: [] as [number, number][] };
    made.push(rec);
    return {
      canvas,
      setCells: () => (rec.cells += 1),
      redraw: () => (rec.redraws += 1),
      setSize: (w: number, h: number) => rec.sizes.push([w, h]),
      destroy: () => canvas.remove(),
    };
  },
}));

const values = Float32Array.from([0.1, 0.2, 0.3, 0.4, Number.NaN, 1.5]);

describe("Heatmap", () => {
  it("hands its cells to the chart, names them on hover, picks columns and zooms through it", async () => {
    const onPick = vi.fn();
    const onZoom = vi.fn();
    const onReset = vi.fn();
    const describeCell = (r: number, c: number, v: number) => `row ${r} col ${c}: ${Number.isNaN(v) ? "none" : Math.round(v * 100)}`;
    const { rerender } = render(
      <Heatmap values={values} rows={2} cols={3} width={300} height={40} cursor={1} label="CPU allocation of 2 nodes over 2 cycles" describe={describeCell} onPickColumn={onPick} onZoom={onZoom} onResetZoom={onReset} colLabel={(c) => `c${c}`} />,
    );
    const canvas = await screen.findByRole("img", { name: /^CPU allocation of 2 nodes over 2 cycles\./ });
    const chart = made[made.length - 1];
    expect(chart.canvas).toBe(canvas);
    expect(chart.state()).toMatchObject({ rows: 2, cols: 3, cursor: 1, focus: null });
    expect(chart.state().colLabel(2)).toBe("c2");
    expect(chart.sizes.at(-1)).toEqual([300, 40]);
    act(() => chart.on.onHover([1, 2], 250, 30));
    expect(screen.getByRole("status")).toHaveTextContent("row 1 col 2: 150");
    act(() => chart.on.onHover(null, 0, 0));
    expect(screen.queryByRole("status")).toBeNull();
    act(() => chart.on.onPick(2));
    expect(onPick).toHaveBeenCalledWith(2);
    act(() => chart.on.onSelect({ rows: [0, 1], cols: [1, 3] }));
    expect(onZoom).toHaveBeenCalledWith({ rows: [0, 1], cols: [1, 3] });
    act(() => chart.on.onReset());
    expect(onReset).toHaveBeenCalled();
    // new cells: the image is made again; a new cursor: drawn again from it
    const before = { cells: chart.cells, redraws: chart.redraws };
    rerender(<Heatmap values={values.slice()} rows={2} cols={3} width={300} height={40} cursor={2} label="CPU allocation of 2 nodes over 2 cycles" describe={describeCell} />);
    await waitFor(() => expect(chart.cells).toBeGreaterThan(before.cells));
    expect(chart.redraws).toBeGreaterThan(before.redraws);
    expect(chart.state().cursor).toBe(2);
  });

  it("reads cells with the arrow keys and moves the cursor with Enter", async () => {
    const onPick = vi.fn();
    render(<Heatmap values={values} rows={2} cols={3} width={300} height={40} cursor={0} label="Map" describe={(r, c) => `cell ${r},${c}`} onPickColumn={onPick} />);
    const canvas = await screen.findByRole("img", { name: /^Map\./ });
    const chart = made[made.length - 1];
    fireEvent.keyDown(canvas, { key: "ArrowRight" });
    expect(screen.getByRole("status")).toHaveTextContent("cell 0,1");
    fireEvent.keyDown(canvas, { key: "ArrowDown" });
    expect(screen.getByRole("status")).toHaveTextContent("cell 1,1");
    expect(chart.state().focus).toEqual([1, 1]);
    fireEvent.keyDown(canvas, { key: "Enter" });
    expect(onPick).toHaveBeenCalledWith(1);
  });

  it("zooms with + around the cell read last, and shows the whole map again with -", async () => {
    const onZoom = vi.fn();
    const onReset = vi.fn();
    const many = new Float32Array(10 * 8);
    render(<Heatmap values={many} rows={10} cols={8} width={300} height={100} cursor={0} label="Map" describe={(r, c) => `cell ${r},${c}`} onZoom={onZoom} onResetZoom={onReset} />);
    const canvas = await screen.findByRole("img", { name: /\+ zooms in around it, - shows the whole map\.$/ });
    for (let k = 0; k < 9; k++) fireEvent.keyDown(canvas, { key: "ArrowDown" });
    fireEvent.keyDown(canvas, { key: "ArrowRight" });
    fireEvent.keyDown(canvas, { key: "+" });
    // rows 5-9 (the last half, as the cell is on the last row), columns 0-3 around column 1
    expect(onZoom).toHaveBeenCalledWith({ rows: [5, 10], cols: [0, 4] });
    fireEvent.keyDown(canvas, { key: "-" });
    expect(onReset).toHaveBeenCalled();
  });
});
