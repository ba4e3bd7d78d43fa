import { describe, expect, it } from "vitest";
import { heatColor } from "./colors";
import { cellAt, cellsIn, heatPixels } from "./heatmap";

describe("heatmap pixels", () => {
  it("colours every cell as heatColor does, to within one unit a channel", () => {
    const values = Float32Array.from([0, 0.1, 0.25, 0.333, 0.5, 0.77, 0.999, 1, 1.00005, 1.2, Number.NaN, -1, Infinity]);
    const px = heatPixels(values);
    expect(px.length).toBe(values.length * 4);
    values.forEach((v, i) => {
      const want = heatColor(v);
      for (let k = 0; k < 3; k++) expect(Math.abs(px[i * 4 + k] - want[k])).toBeLessThanOrEqual(1);
      expect(px[i * 4 + 3]).toBe(255);
    });
  });
  it("keeps over capacity and none allocatable apart from the scale", () => {
    const px = heatPixels(Float32Array.from([1.5, Number.NaN]));
    expect(Array.from(px.slice(0, 3))).toEqual(heatColor(1.5));
    expect(Array.from(px.slice(4, 7))).toEqual(heatColor(Number.NaN));
  });
  it("colours 5000 rows by 600 columns", () => {
    const values = new Float32Array(5000 * 600).map((_, i) => (i % 97) / 80);
    const px = heatPixels(values);
    expect(px.length).toBe(5000 * 600 * 4);
    expect(Array.from(px.slice(96 * 4, 96 * 4 + 3))).toEqual(heatColor(96 / 80));
  });
});

describe("cells under the pointer", () => {
  it("finds the cell under a point in scale units, clamped to the map", () => {
    expect(cellAt(0.2, 0.9, 10, 20)).toEqual([0, 0]);
    expect(cellAt(19.99, 9.5, 10, 20)).toEqual([9, 19]);
    expect(cellAt(25, -3, 10, 20)).toEqual([0, 19]);
  });
  it("turns a selection into the rows and columns it touches, at least one of each", () => {
    expect(cellsIn(2.5, 7.2, 1.1, 3.9, 10, 20)).toEqual({ rows: [1, 4], cols: [2, 8] });
    // corners in either order, beyond the map
    expect(cellsIn(30, -4, 12, 8.5, 10, 20)).toEqual({ rows: [8, 10], cols: [0, 20] });
    expect(cellsIn(3.2, 3.4, 5.5, 5.5, 10, 20)).toEqual({ rows: [5, 6], cols: [3, 4] });
  });
});
