import { heatColor } from "./colors";

/** Steps of the colour scale between 0 and 1: neighbouring steps differ by at most one unit of a channel. */
const STEPS = 1024;

interface Lut {
  scale: Uint32Array;
  none: number;
  over: number;
}

let lut: Lut | null = null;

/** An RGBA pixel packed as ImageData's bytes read as one little-endian 32-bit word. */
function pack([r, g, b]: [number, number, number]): number {
  return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

function colours(): Lut {
  if (!lut) {
    const scale = new Uint32Array(STEPS);
    for (let k = 0; k < STEPS; k++) scale[k] = pack(heatColor(k / (STEPS - 1)));
    lut = { scale, none: pack(heatColor(Number.NaN)), over: pack(heatColor(2)) };
  }
  return lut;
}

/**
 * The heatmap's cells as RGBA pixels, one per cell (row-major, as `values`), in heatColor's scale: NaN or
 * negative is "none allocatable", above 1 (by more than rounding) is over capacity.
 */
export function heatPixels(values: Float32Array): Uint8ClampedArray {
  const { scale, none, over } = colours();
  const px = new Uint8ClampedArray(values.length * 4);
  const words = new Uint32Array(px.buffer);
  const top = STEPS - 1;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    words[i] = !(v >= 0) || v === Infinity ? none : v > 1.0001 ? over : scale[Math.round((v < 1 ? v : 1) * top)];
  }
  return px;
}

/** The cell under a point given in the chart's scale units (x: columns, y: rows), clamped to the map. */
export function cellAt(x: number, y: number, rows: number, cols: number): [number, number] {
  const clamp = (v: number, n: number) => Math.min(n - 1, Math.max(0, Math.floor(v)));
  return [clamp(y, rows), clamp(x, cols)];
}

export interface CellRange {
  /** First row and the row after the last. */
  rows: [number, number];
  /** First column and the column after the last. */
  cols: [number, number];
}

/** The cells a selection touches, from its corners in scale units: at least one row and one column. */
export function cellsIn(x0: number, x1: number, y0: number, y1: number, rows: number, cols: number): CellRange {
  const span = (a: number, b: number, n: number): [number, number] => {
    const lo = Math.min(n - 1, Math.max(0, Math.floor(Math.min(a, b))));
    const hi = Math.max(lo + 1, Math.min(n, Math.ceil(Math.max(a, b))));
    return [lo, hi];
  };
  return { rows: span(y0, y1, rows), cols: span(x0, x1, cols) };
}
