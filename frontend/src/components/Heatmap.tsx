import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { heatColor } from "../lib/colors";

export interface HeatmapProps {
  /** rows × cols values, row-major; NaN: no data. 0..1 is the colour scale, above 1 is over capacity. */
  values: Float32Array;
  rows: number;
  cols: number;
  width: number;
  height: number;
  /** A column to mark (the current cycle). */
  cursor?: number | null;
  describe: (row: number, col: number, value: number) => string;
  onPickColumn?: (col: number) => void;
  label: string;
  /** Rows where a new group of nodes starts: a line is drawn above each. */
  separators?: number[];
}

/** A canvas heatmap: one pixel per cell drawn off-screen, scaled up without smoothing. */
export function Heatmap({ values, rows, cols, width, height, cursor, describe, onPickColumn, label, separators }: HeatmapProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [tip, setTip] = useState<{ x: number; y: number; text: string } | null>(null);
  const [focusCell, setFocusCell] = useState<[number, number] | null>(null);

  useEffect(() => {
    const c = canvas.current;
    const ctx = c?.getContext?.("2d");
    if (!c || !ctx || rows <= 0 || cols <= 0) return;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const off = document.createElement("canvas");
    off.width = cols;
    off.height = rows;
    const octx = off.getContext("2d");
    if (!octx) return;
    const img = octx.createImageData(cols, rows);
    for (let r = 0; r < rows; r++) {
      for (let k = 0; k < cols; k++) {
        const [R, G, B] = heatColor(values[r * cols + k]);
        const o = (r * cols + k) * 4;
        img.data[o] = R;
        img.data[o + 1] = G;
        img.data[o + 2] = B;
        img.data[o + 3] = 255;
      }
    }
    octx.putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, width, height);
    ctx.drawImage(off, 0, 0, width, height);
    const cw = width / cols;
    const rh = height / rows;
    if (separators?.length) {
      ctx.fillStyle = "#ffffff";
      for (const r of separators) if (r > 0) ctx.fillRect(0, r * rh - 1, width, 2);
    }
    if (cursor !== null && cursor !== undefined && cursor >= 0 && cursor < cols) {
      ctx.fillStyle = "rgba(0,0,0,0.85)";
      ctx.fillRect(cursor * cw + cw / 2 - 1, 0, 2, height);
    }
    if (focusCell) {
      ctx.strokeStyle = "#1a73e8";
      ctx.lineWidth = 2;
      ctx.strokeRect(focusCell[1] * cw, focusCell[0] * rh, Math.max(cw, 3), Math.max(rh, 3));
    }
  }, [values, rows, cols, width, height, cursor, focusCell, separators]);

  const cellAt = (e: MouseEvent<HTMLCanvasElement>): [number, number, number, number] => {
    const rect = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const col = Math.min(cols - 1, Math.max(0, Math.floor((x / rect.width) * cols)));
    const row = Math.min(rows - 1, Math.max(0, Math.floor((y / rect.height) * rows)));
    return [row, col, x, y];
  };
  const onMove = (e: MouseEvent<HTMLCanvasElement>) => {
    const [row, col, x, y] = cellAt(e);
    setTip({ x, y, text: describe(row, col, values[row * cols + col]) });
  };
  const onKey = (e: KeyboardEvent<HTMLCanvasElement>) => {
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
    <div className="heatmap-wrap" style={{ width }}>
      <canvas
        ref={canvas}
        style={{ width, height }}
        tabIndex={0}
        role="img"
        aria-label={`${label}. Use the arrow keys to read cells; Enter moves the cycle cursor to the cell's column.`}
        onMouseMove={onMove}
        onMouseLeave={() => setTip(null)}
        onBlur={() => {
          setTip(null);
          setFocusCell(null);
        }}
        onClick={(e) => onPickColumn?.(cellAt(e)[1])}
        onKeyDown={onKey}
      />
      {tip ? (
        <div
          className="heatmap-tip"
          role="status"
          style={{ left: Math.min(tip.x + 12, width - 260), top: Math.max(0, tip.y - 30) }}
        >
          {tip.text}
        </div>
      ) : null}
    </div>
  );
}
