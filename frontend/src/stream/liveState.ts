// What the explorer keeps of a stream: node names, the cycle being streamed (stage by stage), the cycles
// completed during this connection, and the replay's status. `reduce` applies accepted messages in order.

import type { StageEntry } from "../api/types";
import type { ScoreMsg, SelectionMsg, ServerMsg, CycleEndMsg, PostFilterMsg } from "./protocol";

export interface LiveCycle {
  seq: number;
  pod: string;
  profile: string | null;
  startIndex: number;
  nodesToFind: number;
  filterPlugins: string[];
  reasons: string[][];
  stages: StageEntry[];
  /** Per node (snapshot order): -1 not evaluated (or not received yet), 0 passed, else the status code. */
  codes: Int8Array;
  plugins: Int16Array;
  reasonIds: Int32Array;
  verdictsReceived: number;
  postFilter: PostFilterMsg | null;
  score: ScoreMsg | null;
  selection: SelectionMsg | null;
  end: CycleEndMsg | null;
  /** Bumped on every change, for memoisation. */
  version: number;
}

export interface QueueEntry {
  seq: number;
  pod: string;
  result: string;
  node: string | null;
  message: string | null;
}

export interface LiveState {
  attempt: number | null;
  status: string | null;
  cyclesDone: number;
  cyclesTotal: number;
  reason: string;
  names: string[];
  cycle: LiveCycle | null;
  /** The last cycle that ended (what a fast stream shows: it is complete). */
  lastCompleted: LiveCycle | null;
  /** Cycles completed on this stream, in order (a cycle that started but did not end is not here). */
  completed: QueueEntry[];
  ended: boolean;
  /** Counts `end` messages (playback sends one each time it reaches the last cycle). */
  endCount: number;
  error: string | null;
}

export const INITIAL_LIVE: LiveState = {
  attempt: null,
  status: null,
  cyclesDone: 0,
  cyclesTotal: 0,
  reason: "",
  names: [],
  cycle: null,
  lastCompleted: null,
  completed: [],
  ended: false,
  endCount: 0,
  error: null,
};

function newCycle(n: number, m: Extract<ServerMsg, { type: "cycle.start" }>): LiveCycle {
  return {
    seq: m.pos[0],
    pod: m.pod,
    profile: m.profile,
    startIndex: m.startIndex,
    nodesToFind: m.nodesToFind,
    filterPlugins: m.filterPlugins,
    reasons: m.reasons,
    stages: [],
    codes: new Int8Array(n).fill(-1),
    plugins: new Int16Array(n).fill(-1),
    reasonIds: new Int32Array(n).fill(-1),
    verdictsReceived: 0,
    postFilter: null,
    score: null,
    selection: null,
    end: null,
    version: 0,
  };
}

/** Apply messages in order. The state object and a changed cycle are new objects; typed arrays are reused. */
export function reduce(state: LiveState, msgs: ServerMsg[]): LiveState {
  let s: LiveState = state;
  let cycle = s.cycle;
  let cycleChanged = false;
  let owned = false;
  // The first change to the current cycle in this call works on a copy: reduce never mutates its input.
  const own = (c: LiveCycle): LiveCycle => {
    if (owned) return c;
    owned = true;
    cycleChanged = true;
    cycle = {
      ...c,
      codes: c.codes.slice(),
      plugins: c.plugins.slice(),
      reasonIds: c.reasonIds.slice(),
      version: c.version + 1,
    };
    return cycle;
  };
  let completed = s.completed;
  // the first append in this call copies the list, later ones push onto that copy (a burst of cycles stays linear)
  let completedOwned = false;
  let stagesOwned = false;
  let lastCompleted = s.lastCompleted;
  let names = s.names;
  const patch: Partial<LiveState> = {};
  for (const m of msgs) {
    switch (m.type) {
      case "hello":
        if (s.attempt !== null && m.replay.attempt !== s.attempt) {
          cycle = null;
          lastCompleted = null;
          completed = [];
          completedOwned = true;
          cycleChanged = true;
        }
        Object.assign(patch, {
          attempt: m.replay.attempt,
          status: m.replay.status,
          cyclesDone: m.replay.cyclesDone,
          cyclesTotal: m.replay.cyclesTotal,
          ended: false,
          error: null,
        });
        s = { ...s, ...patch };
        break;
      case "nodes": {
        if (m.offset === 0) names = [...m.names];
        else {
          names = names.slice(0, m.offset);
          names.push(...m.names);
        }
        break;
      }
      case "cycle.start":
        patch.ended = false;
        cycle = newCycle(names.length, m);
        cycleChanged = true;
        owned = true;
        stagesOwned = true;
        break;
      case "stage":
        if (cycle && cycle.seq === m.pos[0]) {
          const c = own(cycle);
          if (!stagesOwned) {
            c.stages = c.stages.slice();
            stagesOwned = true;
          }
          c.stages.push({ point: m.point, plugin: m.plugin, code: m.code, reason: m.reason, durationMicros: m.durationMicros });
        }
        break;
      case "filter":
        if (cycle && cycle.seq === m.pos[0]) {
          const c = own(cycle);
          const n = c.codes.length;
          for (let k = 0; k < m.codes.length && m.offset + k < n; k++) {
            c.codes[m.offset + k] = m.codes[k];
            c.plugins[m.offset + k] = m.plugins[k] ?? -1;
            c.reasonIds[m.offset + k] = m.reasons[k] ?? -1;
          }
          c.verdictsReceived += m.codes.length;
        }
        break;
      case "postFilter":
        if (cycle && cycle.seq === m.pos[0]) own(cycle).postFilter = m;
        break;
      case "score":
        if (cycle && cycle.seq === m.pos[0]) own(cycle).score = m;
        break;
      case "selection":
        if (cycle && cycle.seq === m.pos[0]) own(cycle).selection = m;
        break;
      case "cycle.end":
        if (cycle && cycle.seq === m.pos[0]) {
          const c = own(cycle);
          c.end = m;
          lastCompleted = c;
          const entry: QueueEntry = { seq: m.pos[0], pod: c.pod, result: m.result, node: m.node, message: m.message };
          if (!completedOwned) {
            completed = completed.slice();
            completedOwned = true;
          }
          completed.push(entry);
          if (s.cyclesDone < entry.seq && s.status === "running") patch.cyclesDone = entry.seq;
        }
        break;
      case "status":
        Object.assign(patch, { status: m.status, cyclesDone: m.cyclesDone, cyclesTotal: m.cyclesTotal, reason: m.reason });
        s = { ...s, ...patch };
        break;
      case "end":
        patch.ended = true;
        patch.endCount = (patch.endCount ?? s.endCount) + 1;
        break;
      case "error":
        patch.error = m.message;
        break;
      default:
        break;
    }
  }
  return { ...s, ...patch, names, cycle: cycleChanged ? cycle : s.cycle, lastCompleted, completed };
}

/** The stage timeline's entries plus the stream's own markers. */
export function liveComplete(c: LiveCycle | null): boolean {
  return !!c?.end;
}
