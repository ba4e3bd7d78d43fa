// What the live cluster page keeps of `/ws/clusters/<id>/` (docs/live.md): the cluster's state (from `hello` and
// `status`), the node set (`nodes`, replaced whenever the server sends a new one), the cycle being streamed, and
// the decisions completed on this connection (`live.verdict`), newest first. `reduceCluster` is pure.

import { decisionFromComparison, type Decision, type LiveComparison, type LiveSummary } from "../api/live";
import type { NodesMsg, Pos, ServerMsg } from "./protocol";

export interface ClusterInfo {
  id: string;
  name: string;
  status: string;
  message: string;
  /** The last stored cycle's seq. */
  cyclesDone: number;
  summary: LiveSummary;
  workerAlive: boolean;
}

export interface ClusterHelloMsg {
  type: "hello";
  cluster: ClusterInfo;
  mode: "live" | "playback";
  resumeAfter: string;
}

export interface ClusterStatusMsg {
  type: "status";
  status: string;
  message: string;
  cyclesDone: number;
  summary: LiveSummary;
  workerAlive: boolean;
}

export interface ClusterNodesMsg extends NodesMsg {
  nodeSet?: number;
}

export interface LiveVerdictMsg extends Omit<LiveComparison, "seq"> {
  type: "live.verdict";
  pos: Pos;
}

type Replaced = "hello" | "status" | "nodes";
export type ClusterMsg = Exclude<ServerMsg, { type: Replaced }> | ClusterHelloMsg | ClusterStatusMsg | ClusterNodesMsg | LiveVerdictMsg;

/** The replay's side of the cycle being streamed, before its verdict. */
export interface StreamingCycle {
  seq: number;
  pod: string;
  profile: string | null;
  feasible: number | null;
  /** The replay's choice, resolved from `selection`'s node index with the node set of the time. */
  node: string | null;
  total: number | null;
  tied: number;
  result: string | null;
}

export interface ClusterStreamState {
  cluster: ClusterInfo | null;
  /** Counts `status` messages: the page refreshes the health when it changes. */
  statusCount: number;
  nodeSet: number | null;
  names: string[];
  current: StreamingCycle | null;
  /** Decisions completed on this connection, newest first, at most `limit`. */
  decisions: Decision[];
  /** Every verdict received (the list keeps only the newest). */
  received: number;
  error: string | null;
  /** The cluster was deleted while the page followed it. */
  gone: boolean;
}

export const INITIAL_CLUSTER_STREAM: ClusterStreamState = {
  cluster: null,
  statusCount: 0,
  nodeSet: null,
  names: [],
  current: null,
  decisions: [],
  received: 0,
  error: null,
  gone: false,
};

export const DECISIONS_KEPT = 1000;

/** Apply messages in order; never mutates its input. */
export function reduceCluster(state: ClusterStreamState, msgs: ClusterMsg[], limit = DECISIONS_KEPT): ClusterStreamState {
  let s = state;
  let fresh: Decision[] = [];
  for (const m of msgs) {
    switch (m.type) {
      case "hello":
        s = { ...s, cluster: { ...m.cluster }, error: null, gone: false };
        break;
      case "status": {
        const base: ClusterInfo = s.cluster ?? { id: "", name: "", status: "", message: "", cyclesDone: 0, summary: m.summary, workerAlive: false };
        s = {
          ...s,
          statusCount: s.statusCount + 1,
          cluster: { ...base, status: m.status, message: m.message, cyclesDone: m.cyclesDone, summary: m.summary, workerAlive: m.workerAlive },
        };
        break;
      }
      case "nodes": {
        const names = m.offset === 0 ? [...m.names] : [...s.names.slice(0, m.offset), ...m.names];
        s = { ...s, names, nodeSet: m.nodeSet ?? s.nodeSet };
        break;
      }
      case "cycle.start":
        s = {
          ...s,
          current: { seq: m.pos[0], pod: m.pod, profile: m.profile, feasible: null, node: null, total: null, tied: 0, result: null },
        };
        break;
      case "score":
        if (s.current && s.current.seq === m.pos[0]) s = { ...s, current: { ...s.current, feasible: m.feasible } };
        break;
      case "selection":
        if (s.current && s.current.seq === m.pos[0]) {
          s = { ...s, current: { ...s.current, node: s.names[m.node] ?? null, total: m.total, tied: m.tied } };
        }
        break;
      case "cycle.end":
        if (s.current && s.current.seq === m.pos[0]) {
          s = { ...s, current: { ...s.current, result: m.result, node: m.node ?? s.current.node } };
        }
        break;
      case "live.verdict": {
        const seq = m.pos[0];
        const cur = s.current && s.current.seq === seq ? s.current : null;
        const { type: _type, pos: _pos, ...rest } = m;
        const d = decisionFromComparison({ ...rest, seq }, { feasible: cur?.feasible ?? null, winnerTotal: cur?.total ?? null });
        fresh = [d, ...fresh.filter((x) => x.seq !== seq)];
        const cluster = s.cluster && s.cluster.cyclesDone < seq ? { ...s.cluster, cyclesDone: seq } : s.cluster;
        s = { ...s, current: cur ? null : s.current, received: s.received + 1, cluster };
        break;
      }
      case "error":
        s = { ...s, error: m.message, gone: m.code === "gone" || s.gone };
        break;
      default:
        break;
    }
  }
  if (fresh.length) {
    const seqs = new Set(fresh.map((d) => d.seq));
    const merged = [...fresh, ...s.decisions.filter((d) => !seqs.has(d.seq))];
    merged.sort((a, b) => b.seq - a.seq);
    s = { ...s, decisions: merged.length > limit ? merged.slice(0, limit) : merged };
  }
  return s;
}
