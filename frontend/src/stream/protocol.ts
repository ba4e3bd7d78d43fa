// Messages of the replay websocket (docs/streaming.md).

export type Pos = [number, number];

export interface HelloMsg {
  type: "hello";
  replay: { id: string; status: string; attempt: number; cyclesTotal: number; cyclesDone: number; nodeCount: number };
  mode: "live" | "playback";
  resumeAfter: string;
}
export interface NodesMsg {
  type: "nodes";
  offset: number;
  names: string[];
}
export interface CycleStartMsg {
  type: "cycle.start";
  pos: Pos;
  pod: string;
  profile: string | null;
  startIndex: number;
  nodesToFind: number;
  filterPlugins: string[];
  reasons: string[][];
}
export interface StageMsg {
  type: "stage";
  pos: Pos;
  point: string;
  plugin: string;
  code: string;
  reason: string;
  durationMicros: number;
}
export interface FilterMsg {
  type: "filter";
  pos: Pos;
  offset: number;
  codes: number[];
  plugins: number[];
  reasons: number[];
}
export interface PostFilterMsg {
  type: "postFilter";
  pos: Pos;
  message: string;
  nominatedNode: string | null;
  victims: string[];
  details: Record<string, unknown>;
}
export interface ScoreMsg {
  type: "score";
  pos: Pos;
  plugins: string[];
  weights: number[] | Record<string, number>;
  skipped: string[];
  feasible: number;
  top: { node: number; total: number; raw: number[]; normalized: number[] }[];
  aggregates: Record<string, { min: number; max: number; mean: number }>;
}
export interface SelectionMsg {
  type: "selection";
  pos: Pos;
  node: number;
  tied: number;
  tiedNodes: number[];
  total: number | null;
}
export interface CycleEndMsg {
  type: "cycle.end";
  pos: Pos;
  result: string;
  node: string | null;
  message: string | null;
  nominatedNode: string | null;
  error?: string | null;
}
export interface StatusMsg {
  type: "status";
  status: string;
  cyclesDone: number;
  cyclesTotal: number;
  reason: string;
}
export interface EndMsg {
  type: "end";
  after: string;
}
export interface ErrorMsg {
  type: "error";
  code: string;
  message: string;
}
export interface PongMsg {
  type: "pong";
}

export type PositionedMsg = CycleStartMsg | StageMsg | FilterMsg | PostFilterMsg | ScoreMsg | SelectionMsg | CycleEndMsg;
export type ServerMsg = HelloMsg | NodesMsg | PositionedMsg | StatusMsg | EndMsg | ErrorMsg | PongMsg;

export type ClientMsg =
  | { action: "play"; speed: number }
  | { action: "pause" }
  | { action: "step" }
  | { action: "seek"; cycle: number }
  | { action: "ping" };

export function hasPos(m: ServerMsg): m is PositionedMsg {
  return Array.isArray((m as { pos?: unknown }).pos);
}

/** -1, 0, 1 */
export function comparePos(a: Pos, b: Pos): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

/** The `after` query value: "12.3", or "12" for "after all of cycle 12"; "" for the start. */
export function formatAfter(p: Pos): string {
  if (p[0] <= 0 && p[1] < 0) return "";
  return p[1] === Number.POSITIVE_INFINITY ? String(p[0]) : `${p[0]}.${p[1]}`;
}

export function parseAfter(text: string | undefined | null): Pos {
  if (!text) return [0, -1];
  const [c, p] = text.split(".");
  const cycle = Number.parseInt(c, 10);
  if (!Number.isFinite(cycle)) return [0, -1];
  if (p === undefined || p === "") return [cycle, Number.POSITIVE_INFINITY];
  const part = Number.parseInt(p, 10);
  return [cycle, Number.isFinite(part) ? part : Number.POSITIVE_INFINITY];
}

export const CLOSE_BAD_REQUEST = 4400;
export const CLOSE_UNAUTHENTICATED = 4401;
export const CLOSE_NOT_FOUND = 4404;
