// The heatmap's drawing, on uPlot's canvas: loaded on demand (import("./heatmapChart")) by the pages that show
// a heatmap, so that the library stays out of the main chunk.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { cellAt, cellsIn, heatPixels, type CellRange } from "../lib/heatmap";

export interface HeatmapState {
  values: Float32Array;
  rows: number;
  cols: number;
  cursor: number | null;
  separators: number[] | undefined;
  focus: [number, number] | null;
  /** The label of column k on the time axis. */
  colLabel: (col: number) => string;
}

export interface HeatmapCallbacks {
  onHover: (cell: [number, number] | null, x: number, y: number) => void;
  onPick: (col: number) => void;
  onSelect: (cells: CellRange) => void;
  onReset: () => void;
}

export interface HeatmapChart {
  /** New cells (values, rows or columns): the image is rebuilt. */
  setCells: () => void;
  /** The same cells, new marks (cursor, separators, focus): a redraw from the image. */
  redraw: () => void;
  setSize: (width: number, plotHeight: number) => void;
  canvas: HTMLCanvasElement;
  destroy: () => void;
}

export const AXIS_H = 26;

/**
 * A heatmap as a uPlot chart: the x scale runs over the columns, the y scale over the rows (row 0 on top);
 * the cells are drawn as an image, one pixel per cell scaled without smoothing, under the axes; a drag selects
 * cells (the page zooms to them), a double-click asks for the whole map again.
 */
export function createHeatmapChart(
  host: HTMLElement,
  width: number,
  plotHeight: number,
  state: () => HeatmapState,
  on: HeatmapCallbacks,
): HeatmapChart {
  let image: HTMLCanvasElement | null = null;
  let selecting = false;
  const buildImage = () => {
    const { values, rows, cols } = state();
    image = null;
    if (rows <= 0 || cols <= 0 || values.length < rows * cols) return;
    const off = document.createElement("canvas");
    off.width = cols;
    off.height = rows;
    const octx = off.getContext("2d");
    if (!octx) return;
    const img = octx.createImageData(cols, rows);
    img.data.set(heatPixels(values.subarray(0, rows * cols)));
    octx.putImageData(img, 0, 0);
    image = off;
  };

  const drawCells = (u: uPlot) => {
    if (!image) return;
    const { left, top, width: w, height: h } = u.bbox;
    const x0 = u.scales.x.min ?? 0;
    const x1 = u.scales.x.max ?? image.width;
    const y0 = u.scales.y.min ?? 0;
    const y1 = u.scales.y.max ?? image.height;
    u.ctx.save();
    u.ctx.imageSmoothingEnabled = false;
    u.ctx.drawImage(image, x0, y0, x1 - x0, y1 - y0, left, top, w, h);
    u.ctx.restore();
  };

  const drawMarks = (u: uPlot) => {
    const { cursor, separators, focus, rows, cols } = state();
    const ctx = u.ctx;
    const { left, top, width: w, height: h } = u.bbox;
    const px = uPlot.pxRatio;
    const x = (col: number) => u.valToPos(col, "x", true);
    const y = (row: number) => u.valToPos(row, "y", true);
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, w, h);
    ctx.clip();
    if (separators?.length) {
      ctx.fillStyle = "#ffffff";
      for (const r of separators) if (r > 0 && r < rows) ctx.fillRect(left, y(r) - px, w, 2 * px);
    }
    if (cursor !== null && cursor >= 0 && cursor < cols) {
      ctx.fillStyle = "rgba(0,0,0,0.85)";
      ctx.fillRect(x(cursor + 0.5) - px, top, 2 * px, h);
    }
    if (focus) {
      ctx.strokeStyle = "#1a73e8";
      ctx.lineWidth = 2 * px;
      const fx = x(focus[1]);
      const fy = y(focus[0]);
      ctx.strokeRect(fx, fy, Math.max(x(focus[1] + 1) - fx, 3 * px), Math.max(y(focus[0] + 1) - fy, 3 * px));
    }
    ctx.restore();
  };

  const opts: uPlot.Options = {
    width,
    height: plotHeight + AXIS_H,
    padding: [0, 0, 0, 0],
    legend: { show: false },
    scales: {
      x: { time: false, auto: false, range: () => [0, state().cols] },
      y: { auto: false, dir: -1, range: () => [0, state().rows] },
    },
    axes: [
      {
        scale: "x",
        size: AXIS_H,
        gap: 3,
        space: 70,
        grid: { show: false },
        ticks: { size: 4, stroke: "#9aa3af", width: 1 },
        stroke: "#5b6573",
        font: "11px system-ui, sans-serif",
        splits: (u) => {
          const lo = Math.ceil(u.scales.x.min ?? 0);
          const hi = Math.floor((u.scales.x.max ?? 1) - 1e-9);
          const n = Math.max(1, Math.floor(u.bbox.width / uPlot.pxRatio / 70));
          const step = Math.max(1, Math.ceil((hi - lo + 1) / n));
          const out: number[] = [];
          for (let k = lo; k <= hi; k += step) out.push(k + 0.5);
          return out;
        },
        values: (_u, splits) => splits.map((v) => state().colLabel(Math.floor(v))),
      },
      { scale: "y", show: false },
    ],
    series: [{}, { scale: "y", show: true, stroke: "transparent", width: 0, points: { show: false } }],
    cursor: {
      x: false,
      y: false,
      points: { show: false },
      drag: { x: true, y: true, uni: 12, setScale: false },
    },
    hooks: {
      drawClear: [drawCells],
      draw: [drawMarks],
      setCursor: [
        (u) => {
          const { left, top } = u.cursor;
          if (left === undefined || top === undefined || left < 0 || top < 0) {
            on.onHover(null, 0, 0);
            return;
          }
          const { rows, cols } = state();
          on.onHover(cellAt(u.posToVal(left, "x"), u.posToVal(top, "y"), rows, cols), left, top);
        },
      ],
      setSelect: [
        (u) => {
          const { left, top, width: w, height: h } = u.select;
          if (w < 3 && h < 3) return;
          selecting = true;
          const { rows, cols } = state();
          const cells = cellsIn(u.posToVal(left, "x"), u.posToVal(left + w, "x"), u.posToVal(top, "y"), u.posToVal(top + h, "y"), rows, cols);
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          on.onSelect(cells);
        },
      ],
    },
  };
  buildImage();
  const u = new uPlot(opts, [[0, state().cols], [null, null]], host);
  const over = u.over;
  const onClick = (e: MouseEvent) => {
    if (selecting) {
      selecting = false;
      return;
    }
    const r = over.getBoundingClientRect();
    const { rows, cols } = state();
    const [, col] = cellAt(u.posToVal(e.clientX - r.left, "x"), u.posToVal(e.clientY - r.top, "y"), rows, cols);
    on.onPick(col);
  };
  const onDblClick = () => on.onReset();
  const onDown = () => {
    selecting = false;
  };
  over.addEventListener("mousedown", onDown);
  over.addEventListener("click", onClick);
  over.addEventListener("dblclick", onDblClick);
  const full = () => {
    const { rows, cols } = state();
    u.batch(() => {
      u.setScale("x", { min: 0, max: cols });
      u.setScale("y", { min: 0, max: rows });
    });
  };
  return {
    setCells: () => {
      buildImage();
      u.setData([[0, state().cols], [null, null]], false);
      full();
      u.redraw(false, true);
    },
    redraw: () => u.redraw(false),
    setSize: (w, h) => {
      u.setSize({ width: w, height: h + AXIS_H });
      full();
    },
    canvas: u.ctx.canvas,
    destroy: () => {
      over.removeEventListener("mousedown", onDown);
      over.removeEventListener("click", onClick);
      over.removeEventListener("dblclick", onDblClick);
      u.destroy();
    },
  };
}
