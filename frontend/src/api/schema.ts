// The API's wire types, generated from /api/schema/ (schema.gen.ts: `npm run api:types`; a test fails when
// it drifts from the serializers), and the check that the explorer's own types say the same.

import type { components } from "./schema.gen";
import type {
  CycleDetail,
  CycleNode,
  CycleNodeInspection,
  CyclePod,
  CycleSummary,
  Explanation,
  FilterVerdict,
  Replay,
  Snapshot,
  SnapshotNode,
  SnapshotPod,
  TimelineCycle,
} from "./types";
import type {
  Divergences,
  LiveCluster,
  LiveComparison,
  LiveCycleRow,
  LiveExplanation,
  LiveHealth,
  LiveSummary,
  LiveWorker,
  StreamHealth,
} from "./live";

export type Schemas = components["schemas"];

/** true when A and B have the same field names; else the names one has and the other lacks. */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : { onlyInExplorer: Exclude<keyof A, keyof B>; onlyInApi: Exclude<keyof B, keyof A> };

/**
 * Compile-time: every type the explorer reads an answer with names exactly the fields the API documents.
 * A field added to, or removed from, a serializer fails `tsc` here until the explorer's type follows.
 */
export const WIRE_TYPES_MATCH: {
  Snapshot: SameKeys<Snapshot, Schemas["Snapshot"]>;
  SnapshotNode: SameKeys<SnapshotNode, Schemas["SnapshotNode"]>;
  SnapshotPod: SameKeys<SnapshotPod, Schemas["SnapshotPod"]>;
  Replay: SameKeys<Replay, Schemas["Replay"]>;
  CycleSummary: SameKeys<CycleSummary, Schemas["Cycle"]>;
  CycleNode: SameKeys<CycleNode, Schemas["CycleNode"]>;
  CycleDetail: SameKeys<CycleDetail, Schemas["CycleDetail"]>;
  Explanation: SameKeys<Explanation, Schemas["Explanation"]>;
  TimelineCycle: SameKeys<TimelineCycle, Schemas["TimelineCycle"]>;
  CyclePod: SameKeys<CyclePod, Schemas["CyclePod"]>;
  CycleNodeInspection: SameKeys<CycleNodeInspection, Schemas["CycleNodeInspection"]>;
  FilterVerdict: SameKeys<FilterVerdict, Schemas["FilterVerdict"]>;
  LiveCluster: SameKeys<LiveCluster, Schemas["LiveCluster"]>;
  LiveWorker: SameKeys<LiveWorker, Schemas["LiveWorker"]>;
  LiveSummary: SameKeys<LiveSummary, Schemas["LiveSummary"]>;
  LiveHealth: SameKeys<LiveHealth, Schemas["LiveHealth"]>;
  StreamHealth: SameKeys<StreamHealth, Schemas["StreamHealth"]>;
  LiveCycleRow: SameKeys<LiveCycleRow, Schemas["LiveCycle"]>;
  LiveComparison: SameKeys<LiveComparison, Schemas["LiveComparison"]>;
  Divergences: SameKeys<Divergences, Schemas["Divergences"]>;
  LiveExplanation: SameKeys<LiveExplanation, Schemas["LiveExplanation"]>;
} = {
  Snapshot: true,
  SnapshotNode: true,
  SnapshotPod: true,
  Replay: true,
  CycleSummary: true,
  CycleNode: true,
  CycleDetail: true,
  Explanation: true,
  TimelineCycle: true,
  CyclePod: true,
  CycleNodeInspection: true,
  FilterVerdict: true,
  LiveCluster: true,
  LiveWorker: true,
  LiveSummary: true,
  LiveHealth: true,
  StreamHealth: true,
  LiveCycleRow: true,
  LiveComparison: true,
  Divergences: true,
  LiveExplanation: true,
};
