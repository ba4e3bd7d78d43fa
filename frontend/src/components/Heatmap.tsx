import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { CellRange } from "../lib/heatmap";
import type { HeatmapChart, HeatmapState } from "./heatmapChart";

export interface HeatmapProps {
  /** rows × cols values, row-major; NaN: no data. 0..1 is the colour scale, above 1 is over capacity. */
  values: Float32Array;
  rows: number;
  cols: number;
  width: number;
  /** The height of the cells; the column axis is drawn below them. */
  height: number;
  /** A column to mark (the current cycle). */
  cursor?: number | null;
  describe: (row: number, col: number, value: number) => string;
  onPickColumn?: (col: number) => void;
  label: string;
  /** Rows where a new group of nodes starts: a line is drawn above each. */
  separators?: number[];
  /** The label of a column on the axis below the map (default: its index). */
  colLabel?: (col: number) => string;
  /** A drag over the map selected these cells. */
  onZoom?: (cells: CellRange) => void;
  /** A double-click on the map: back to the whole of it. */
  onResetZoom?: () => void;
}

type ChartModule = typeof import("./heatmapChart");
let chartModule: Promise<ChartModule> | null = null;
function loadChart(): Promise<ChartModule> {
  chartModule ??= import("./heatmapChart");
  return chartModule;
}

/**
 * A heatmap drawn on canvas by the chart library (loaded on first use): hover names a cell, a click picks its
 * column, a drag zooms to the cells it covers; the arrow keys read cells one by one.
 */
export function Heatmap(props: HeatmapProps) {
  const { values, rows, cols, width, height, cursor, describe, onPickColumn, label, separators } = props;
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<HeatmapChart | null>(null);
  const [ready, setReady] = useState(false);
  const [failed, setFailed] = useState(false);
  const [tip, setTip] = useState<{ x: number; y: number; text: string } | null>(null);
  const [focusCell, setFocusCell] = useState<[number, number] | null>(null);
  // the chart's hooks read the latest props through this ref
  const latest = useRef({ props, focusCell });
  latest.current = { props, focusCell };
  const state = (): HeatmapState => {
    const p = latest.current.props;
    return {
      values: p.values,
      rows: p.rows,
      cols: p.cols,
      cursor: p.cursor ?? null,
      separators: p.separators,
      focus: latest.current.focusCell,
      colLabel: p.colLabel ?? String,
    };
  };

  useEffect(() => {
    let alive = true;
    loadChart()
      .then((mod) => {
        if (!alive || !host.current) return;
        const p = latest.current.props;
        chart.current = mod.createHeatmapChart(host.current, p.width, p.height, state, {
          onHover: (cell, x, y) => {
            const q = latest.current.props;
            if (!cell) setTip(null);
            else setTip({ x, y, text: q.describe(cell[0], cell[1], q.values[cell[0] * q.cols + cell[1]]) });
          },
          onPick: (col) => latest.current.props.onPickColumn?.(col),
          onSelect: (cells) => {
            setTip(null);
            latest.current.props.onZoom?.(cells);
          },
          onReset: () => latest.current.props.onResetZoom?.(),
        });
        setReady(true);
      })
      .catch(() => {
        if (alive) setFailed(true);
      });
    return () => {
      alive = false;
      chart.current?.destroy();
      chart.current = null;
    };
    // the chart is made once; the effects below keep it in step with the props
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const canvas = chart.current?.canvas;
  const zoomable = !!props.onZoom;
  useEffect(() => {
    if (!canvas) return;
    canvas.setAttribute("role", "img");
    const zoom = zoomable ? "; + zooms in around it, - shows the whole map" : "";
    canvas.setAttribute("aria-label", `${label}. Use the arrow keys to read cells; Enter moves the cycle cursor to the cell's column${zoom}.`);
    canvas.tabIndex = 0;
  }, [canvas, label, zoomable]);
  useEffect(() => {
    setFocusCell(null);
    chart.current?.setCells();
  }, [ready, values, rows, cols]);
  useEffect(() => {
    chart.current?.setSize(width, height);
  }, [ready, width, height]);
  useEffect(() => {
    chart.current?.redraw();
  }, [ready, cursor, separators, focusCell]);

  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const [r, c] = focusCell ?? [0, cursor ?? 0];
    let next: [number, number] | null = null;
    if (e.key === "ArrowUp") next = [Math.max(0, r - 1), c];
    else if (e.key === "ArrowDown") next = [Math.min(rows - 1, r + 1), c];
    else if (e.key === "ArrowLeft") next = [r, Math.max(0, c - 1)];
    else if (e.key === "ArrowRight") next = [r, Math.min(cols - 1, c + 1)];
    else if ((e.key === "Enter" || e.key === " ") && onPickColumn) {
      onPickColumn(c);
      e.preventDefault();
      return;
    } else if ((e.key === "+" || e.key === "=") && props.onZoom) {
      // the keyboard's zoom: half the rows and half the columns, around the cell read last
      const half = (at: number, n: number): [number, number] => {
        const w = Math.max(1, Math.ceil(n / 2));
        const lo = Math.max(0, Math.min(n - w, at - Math.floor(w / 2)));
        return [lo, lo + w];
      };
      props.onZoom({ rows: half(r, rows), cols: half(c, cols) });
      setTip(null);
      e.preventDefault();
      return;
    } else if ((e.key === "-" || e.key === "0") && props.onResetZoom) {
      props.onResetZoom();
      setTip(null);
      e.preventDefault();
      return;
    }
    if (!next) return;
    e.preventDefault();
    setFocusCell(next);
    setTip({
      x: ((next[1] + 0.5) / cols) * width,
      y: ((next[0] + 0.5) / rows) * height,
      text: describe(next[0], next[1], values[next[0] * cols + next[1]]),
    });
  };
  return (
    <div
      className="heatmap-wrap"
      style={{ width }}
      onKeyDown={onKey}
      onBlur={() => {
        setTip(null);
        setFocusCell(null);
      }}
    >
      <div ref={host} style={{ minHeight: height }} data-testid="heatmap" data-rows={rows} data-cols={cols} />
      {failed ? <p className="small problem">The chart could not be loaded: reload the page.</p> : null}
      {tip ? (
        <div
          className="heatmap-tip"
          role="status"
          // on the pointer's left in the right half of the map, so that it never runs past the map's edge
          style={tip.x > width / 2 ? { right: Math.max(0, width - tip.x + 12), top: Math.max(0, tip.y - 30) } : { left: tip.x + 12, top: Math.max(0, tip.y - 30) }}
        >
          {tip.text}
        </div>
      ) : null}
    </div>
  );
}
