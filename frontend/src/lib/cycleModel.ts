// One cycle as the cycle view shows it, from the REST detail or from the stream.

import type { CycleDetail, CycleNode, PostFilterDetails, StageEntry } from "../api/types";
import type { LiveCycle } from "../stream/liveState";
import { rowsFromRest, rowsFromStream, type NodeRow } from "./nodes";

export interface CycleModel {
  seq: number;
  pod: string;
  profile: string | null;
  /** null while the cycle is still streaming */
  result: string | null;
  selectedNode: string | null;
  tiedNodes: string[];
  tiedCount: number;
  winnerTotal: number | null;
  message: string | null;
  nominatedNode: string | null;
  victims: string[];
  postFilter: PostFilterDetails | null;
  error: string | null;
  stages: StageEntry[];
  complete: boolean;
  scorePlugins: string[];
  weights: Record<string, number>;
  skipped: string[];
  rows: NodeRow[];
  counts: { passed: number; failed: number; notEvaluated: number };
  /** Streamed: only the top-K nodes carry scores. */
  partial: boolean;
  startIndex: number | null;
  nodesToFind: number | null;
  evaluatedNodes: number | null;
  source: "rest" | "stream";
}

export function modelFromRest(d: CycleDetail, nodes: CycleNode[]): CycleModel {
  const rows = rowsFromRest(nodes);
  const winner = d.selectedNode ? rows.find((r) => r.name === d.selectedNode) : undefined;
  const pf = (d.postFilter ?? null) as PostFilterDetails | null;
  return {
    seq: d.seq,
    pod: d.pod,
    profile: d.profile,
    result: d.result,
    selectedNode: d.selectedNode,
    tiedNodes: d.tiedNodes ?? [],
    tiedCount: d.tiedNodes?.length ?? 0,
    winnerTotal: winner?.total ?? null,
    message: d.message,
    nominatedNode: d.nominatedNode,
    victims: pf?.victims ?? [],
    postFilter: pf,
    error: d.error ?? null,
    stages: d.stages ?? [],
    complete: true,
    scorePlugins: d.scored ? d.scorePlugins : [],
    weights: d.scoreWeights ?? {},
    skipped: d.skippedScorePlugins ?? [],
    rows,
    counts: d.nodeCounts,
    partial: false,
    startIndex: d.startIndex ?? null,
    nodesToFind: d.nodesToFind ?? null,
    evaluatedNodes: d.evaluatedNodes ?? null,
    source: "rest",
  };
}

export function weightsMap(plugins: string[], weights: number[] | Record<string, number>): Record<string, number> {
  if (!Array.isArray(weights)) return { ...weights };
  const out: Record<string, number> = {};
  plugins.forEach((p, k) => {
    out[p] = weights[k] ?? 1;
  });
  return out;
}

export function modelFromLive(c: LiveCycle, names: string[]): CycleModel {
  const score = c.score;
  const weights = score ? weightsMap(score.plugins, score.weights) : {};
  const rows = rowsFromStream(
    names,
    c.verdictsReceived > 0
      ? { filterPlugins: c.filterPlugins, reasons: c.reasons, codes: c.codes, plugins: c.plugins, reasonIds: c.reasonIds }
      : null,
    score ? { plugins: score.plugins, weights: score.plugins.map((p) => weights[p] ?? 1), top: score.top } : null,
  );
  let passed = 0;
  let failed = 0;
  let notEvaluated = 0;
  for (let i = 0; i < c.codes.length; i++) {
    const v = c.codes[i];
    if (v === 0) passed++;
    else if (v > 0) failed++;
    else notEvaluated++;
  }
  const sel = c.selection;
  const selectedNode = c.end?.node ?? (sel ? (names[sel.node] ?? null) : null);
  const pf = c.postFilter;
  return {
    seq: c.seq,
    pod: c.pod,
    profile: c.profile,
    result: c.end?.result ?? null,
    selectedNode,
    tiedNodes: sel ? sel.tiedNodes.map((i) => names[i] ?? String(i)) : [],
    tiedCount: sel?.tied ?? 0,
    winnerTotal: sel?.total ?? null,
    message: c.end?.message ?? pf?.message ?? null,
    nominatedNode: c.end?.nominatedNode ?? pf?.nominatedNode ?? null,
    victims: pf?.victims ?? [],
    postFilter: (pf?.details as PostFilterDetails | undefined) ?? null,
    error: c.end?.error ?? null,
    stages: c.stages,
    complete: !!c.end,
    scorePlugins: score?.plugins ?? [],
    weights,
    skipped: score?.skipped ?? [],
    rows,
    counts: { passed, failed, notEvaluated },
    partial: !!score && score.top.length < score.feasible,
    startIndex: c.startIndex,
    nodesToFind: c.nodesToFind,
    evaluatedNodes: c.verdictsReceived ? passed + failed : null,
    source: "stream",
  };
}
