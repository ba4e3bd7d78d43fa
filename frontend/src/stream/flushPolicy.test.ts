import { describe, expect, it } from "vitest";
import { COMPLETE_GAP_MS, flushDueAt, MIN_FLUSH_MS, PARTIAL_MS, type FlushState } from "./flushPolicy";

const NEVER = Number.NEGATIVE_INFINITY;
const state = (over: Partial<FlushState>): FlushState => ({ pending: true, complete: false, partialSince: null, lastFlush: NEVER, ...over });

describe("flushDueAt", () => {
  it("has nothing to do with an empty buffer", () => {
    expect(flushDueAt(state({ pending: false, complete: true, partialSince: 5 }))).toBe(Number.POSITIVE_INFINITY);
  });

  it("draws a complete cycle at once when the last render is older than a frame", () => {
    expect(flushDueAt(state({ complete: true }))).toBe(NEVER);
    expect(flushDueAt(state({ complete: true, lastFlush: 1000 }))).toBe(1000 + COMPLETE_GAP_MS);
    // a cycle still arriving in the same buffer does not hold back the complete one
    expect(flushDueAt(state({ complete: true, partialSince: 990, lastFlush: 900 }))).toBe(900 + COMPLETE_GAP_MS);
  });

  it("after a render, waits as long as that render took (within bounds) before the next complete cycle", () => {
    expect(flushDueAt(state({ complete: true, lastFlush: 1000, lastCost: 40 }))).toBe(1040);
    expect(flushDueAt(state({ complete: true, lastFlush: 1000, lastCost: 3 }))).toBe(1000 + COMPLETE_GAP_MS);
    expect(flushDueAt(state({ complete: true, lastFlush: 1000, lastCost: 900 }))).toBe(1000 + MIN_FLUSH_MS);
  });

  it("replaces a render of part of a cycle at once", () => {
    expect(flushDueAt(state({ complete: true, lastFlush: 1000, lastCost: 40, lastPartial: true }))).toBe(NEVER);
    // a cycle still arriving after a partial render is throttled as usual
    expect(flushDueAt(state({ partialSince: 1000, lastFlush: 1010, lastPartial: true }))).toBe(1010 + MIN_FLUSH_MS);
  });

  it("does not wait for the partial-cycle throttle when a cycle completes right after a render", () => {
    const lastFlush = 1000;
    const due = flushDueAt(state({ complete: true, lastFlush }));
    expect(due - lastFlush).toBeLessThan(MIN_FLUSH_MS);
    expect(due - lastFlush).toBe(COMPLETE_GAP_MS);
  });

  it("draws a cycle still arriving once its first message is PARTIAL_MS old and the last render MIN_FLUSH_MS old", () => {
    expect(flushDueAt(state({ partialSince: 1000 }))).toBe(1000 + PARTIAL_MS);
    expect(flushDueAt(state({ partialSince: 1000, lastFlush: 1050 }))).toBe(1050 + MIN_FLUSH_MS);
    expect(flushDueAt(state({ partialSince: 1000, lastFlush: 800 }))).toBe(1000 + PARTIAL_MS);
  });
});
