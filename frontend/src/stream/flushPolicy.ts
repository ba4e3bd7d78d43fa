// When the buffered messages of a stream are applied and drawn (see useReplayStream).
//
// A complete cycle (its `cycle.end` is in), or news that is not part of a cycle, is drawn at once, unless the last
// render ended less than a gap ago: a burst of cycles ending faster than they can be drawn. The gap is as long as that
// render took (at least COMPLETE_GAP_MS, at most MIN_FLUSH_MS), so that rendering leaves the page at least half of its
// time for painting and for the messages; the cycles that end meanwhile are drawn once, the newest. A last render
// that drew only part of a cycle imposes no gap.
// A cycle still arriving is drawn only when its first buffered message is PARTIAL_MS old and the last render is
// MIN_FLUSH_MS old: a cycle whose messages come together is drawn once, complete.

/** At most this often for cycles still arriving (a 5000-node cycle costs tens of milliseconds to draw). */
export const MIN_FLUSH_MS = 100;
/** How long a cycle may be arriving before what is in is drawn. */
export const PARTIAL_MS = 100;
/** Between two renders of complete cycles, at least: about a frame, so that each one drawn can be painted. */
export const COMPLETE_GAP_MS = 16;

export interface FlushState {
  /** Something is buffered. */
  pending: boolean;
  /** The buffer holds a cycle's end, or a message that is not part of a cycle. */
  complete: boolean;
  /** When the first buffered message of a cycle still arriving came in (null: none). */
  partialSince: number | null;
  /** When the last render ended (-Infinity: never). */
  lastFlush: number;
  /** How long the last render took (ms). */
  lastCost?: number;
  /** The last render drew only part of a cycle (default: no): the complete cycle replaces it at once. */
  lastPartial?: boolean;
}

/** When the buffer should be applied: a time (same clock as the state's), or +Infinity for "not yet". */
export function flushDueAt(s: FlushState): number {
  if (!s.pending) return Number.POSITIVE_INFINITY;
  if (s.complete) {
    if (s.lastPartial) return Number.NEGATIVE_INFINITY;
    return s.lastFlush + Math.min(MIN_FLUSH_MS, Math.max(COMPLETE_GAP_MS, s.lastCost ?? 0));
  }
  if (s.partialSince === null) return Number.POSITIVE_INFINITY;
  return Math.max(s.lastFlush + MIN_FLUSH_MS, s.partialSince + PARTIAL_MS);
}
