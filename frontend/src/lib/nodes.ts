// The node table's model: one row per node of a cycle, built from the REST cycle page or from the stream,
// and the pure sort / filter / search the table applies.

import type { CycleNode, FilterStatus } from "../api/types";

export type Verdict = "passed" | "failed" | "not-evaluated";
export type ScoreMode = "raw" | "normalized" | "weighted";
export const SCORE_MODES: ScoreMode[] = ["raw", "normalized", "weighted"];

/** Upstream framework status codes (pkg/scheduler/framework/interface.go), as the stream sends them. */
export const CODE_NAMES: Record<number, string> = {
  0: "Success",
  1: "Error",
  2: "Unschedulable",
  3: "UnschedulableAndUnresolvable",
  4: "Wait",
  5: "Skip",
  6: "Pending",
};

export interface ScoreCell {
  raw: number;
  normalized: number;
  weighted: number;
}

export interface NodeRow {
  /** Position in snapshot order (stream) or in the order the server ranked them (REST). */
  index: number;
  name: string;
  verdict: Verdict;
  /** "Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error", or "" when not evaluated. */
  code: string;
  plugin: string;
  reasons: string[];
  /** Per score plugin; null when the node was not scored (or its scores were not streamed). */
  scores: Record<string, ScoreCell> | null;
  total: number | null;
  rank: number;
}

export function verdictOf(filter: FilterStatus | null | undefined, evaluated = true): Verdict {
  if (!evaluated || !filter) return "not-evaluated";
  return filter.code === "Success" ? "passed" : "failed";
}

/** Rows from the REST cycle page (`nodes.results`). */
export function rowsFromRest(nodes: CycleNode[]): NodeRow[] {
  return nodes.map((n, i) => {
    let scores: Record<string, ScoreCell> | null = null;
    if (n.scores) {
      scores = {};
      for (const [plugin, s] of Object.entries(n.scores)) {
        if ("skipped" in s) continue;
        scores[plugin] = { raw: s.raw, normalized: s.normalized, weighted: s.weighted };
      }
    }
    const verdict = verdictOf(n.filter, n.evaluated);
    return {
      index: i,
      name: n.name,
      verdict,
      code: n.filter?.code ?? "",
      plugin: verdict === "failed" ? (n.filter?.plugin ?? "") : "",
      reasons: verdict === "failed" ? (n.filter?.reasons ?? []) : [],
      scores,
      total: n.total ?? null,
      rank: n.rank,
    };
  });
}

export interface StreamScore {
  plugins: string[];
  weights: number[];
  top: { node: number; total: number; raw: number[]; normalized: number[] }[];
}

export interface StreamVerdicts {
  filterPlugins: string[];
  reasons: string[][];
  codes: ArrayLike<number>;
  plugins: ArrayLike<number>;
  reasonIds: ArrayLike<number>;
}

/** Shared by the rows without a reason (most of them): read, never changed. */
const NO_REASONS: string[] = [];

/** Rows from the streamed messages of a cycle: every node's verdict, scores for the top-K nodes only. */
export function rowsFromStream(names: string[], v: StreamVerdicts | null, score: StreamScore | null): NodeRow[] {
  const top = new Map<number, { total: number; scores: Record<string, ScoreCell> }>();
  if (score) {
    for (const t of score.top) {
      const scores: Record<string, ScoreCell> = {};
      score.plugins.forEach((p, k) => {
        const normalized = t.normalized[k] ?? 0;
        scores[p] = { raw: t.raw[k] ?? 0, normalized, weighted: normalized * (score.weights[k] ?? 1) };
      });
      top.set(t.node, { total: t.total, scores });
    }
  }
  const rows: NodeRow[] = names.map((name, i) => {
    const code = v && i < v.codes.length ? v.codes[i] : -1;
    const verdict: Verdict = code === 0 ? "passed" : code > 0 ? "failed" : "not-evaluated";
    const pid = v ? v.plugins[i] : -1;
    const rid = v ? v.reasonIds[i] : -1;
    const t = top.get(i);
    return {
      index: i,
      name,
      verdict,
      code: code >= 0 ? (CODE_NAMES[code] ?? String(code)) : "",
      plugin: verdict === "failed" && v && pid >= 0 ? (v.filterPlugins[pid] ?? "") : "",
      reasons: verdict === "failed" && v && rid >= 0 ? (v.reasons[rid] ?? NO_REASONS) : NO_REASONS,
      scores: t ? t.scores : null,
      total: t ? t.total : null,
      rank: 0,
    };
  });
  assignRanks(rows);
  return rows;
}

const VERDICT_ORDER: Record<Verdict, number> = { passed: 0, failed: 1, "not-evaluated": 2 };

/**
 * Rank as the server does: passed nodes by total (desc), then rejected, then not evaluated; ties by index.
 * Linear but for the scored rows (a streamed cycle scores its top K only): rows without a total keep index order.
 */
export function assignRanks(rows: NodeRow[]): void {
  const scored: NodeRow[][] = [[], [], []];
  const rest: NodeRow[][] = [[], [], []];
  const inOrder = [true, true, true];
  for (const r of rows) {
    const v = VERDICT_ORDER[r.verdict];
    if (r.total !== null) scored[v].push(r);
    else {
      const bucket = rest[v];
      if (bucket.length && bucket[bucket.length - 1].index > r.index) inOrder[v] = false;
      bucket.push(r);
    }
  }
  let rank = 1;
  for (let v = 0; v < 3; v++) {
    const s = scored[v];
    if (s.length > 1) s.sort((a, b) => (b.total as number) - (a.total as number) || a.index - b.index);
    for (const r of s) r.rank = rank++;
    const u = rest[v];
    if (!inOrder[v]) u.sort((a, b) => a.index - b.index);
    for (const r of u) r.rank = rank++;
  }
}

/** Rows in rank order when their ranks are distinct positive integers (as assignRanks and the server give), else null. */
export function inRankOrder(rows: NodeRow[]): NodeRow[] | null {
  let max = 0;
  for (const r of rows) {
    if (!Number.isInteger(r.rank) || r.rank < 1) return null;
    if (r.rank > max) max = r.rank;
  }
  if (max > 4 * rows.length + 1024) return null;
  const slots: (NodeRow | undefined)[] = new Array(max + 1);
  for (const r of rows) {
    if (slots[r.rank] !== undefined) return null;
    slots[r.rank] = r;
  }
  const out: NodeRow[] = [];
  for (let k = 1; k <= max; k++) {
    const r = slots[k];
    if (r !== undefined) out.push(r);
  }
  return out;
}

// ----- sort / filter / search -----

export type SortKey = "rank" | "name" | "verdict" | "total" | `score:${string}`;

export interface TableQuery {
  sort: SortKey;
  desc: boolean;
  verdict: "" | Verdict;
  plugin: string;
  search: string;
  mode: ScoreMode;
}

export const DEFAULT_QUERY: TableQuery = { sort: "rank", desc: false, verdict: "", plugin: "", search: "", mode: "weighted" };

/** Per node, the text a search looks in besides its name: its labels as "key=value", lower-cased. */
export type LabelIndex = Map<string, string>;

export function labelIndex(nodes: { name: string; labels: Record<string, string> }[]): LabelIndex {
  const out: LabelIndex = new Map();
  for (const n of nodes) {
    out.set(
      n.name,
      Object.entries(n.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join("\n")
        .toLowerCase(),
    );
  }
  return out;
}

/**
 * Whether a node matches a search: every word of it is in the node's name or in one of its labels
 * ("zone-b" finds a label value, "pool=gpu" a label, "gpu node-1" both), case-insensitive.
 */
export function matchesSearch(name: string, needle: string, labels?: LabelIndex): boolean {
  const words = needle.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const lname = name.toLowerCase();
  const ltext = labels?.get(name) ?? "";
  return words.every((w) => lname.includes(w) || ltext.includes(w));
}

export function filterRows(rows: NodeRow[], q: Pick<TableQuery, "verdict" | "plugin" | "search">, labels?: LabelIndex): NodeRow[] {
  const needle = q.search.trim();
  if (!q.verdict && !q.plugin && !needle) return rows.slice();
  return rows.filter(
    (r) =>
      (!q.verdict || r.verdict === q.verdict) &&
      (!q.plugin || (r.verdict === "failed" && r.plugin === q.plugin)) &&
      (!needle || matchesSearch(r.name, needle, labels)),
  );
}

function scoreValue(r: NodeRow, plugin: string, mode: ScoreMode): number | null {
  const s = r.scores?.[plugin];
  return s ? s[mode] : null;
}

/** A stable sort; rows without a value (not scored) always come last, whatever the direction. */
export function sortRows(rows: NodeRow[], sort: SortKey, desc: boolean, mode: ScoreMode = "weighted"): NodeRow[] {
  const dir = desc ? -1 : 1;
  const byRank = (a: NodeRow, b: NodeRow) => a.rank - b.rank;
  let cmp: (a: NodeRow, b: NodeRow) => number;
  if (sort === "name") {
    cmp = (a, b) => dir * a.name.localeCompare(b.name, undefined, { numeric: true }) || byRank(a, b);
  } else if (sort === "verdict") {
    cmp = (a, b) =>
      dir * (VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict]) ||
      dir * a.plugin.localeCompare(b.plugin) ||
      byRank(a, b);
  } else if (sort === "total" || sort.startsWith("score:")) {
    const plugin = sort.startsWith("score:") ? sort.slice(6) : "";
    const value = (r: NodeRow) => (plugin ? scoreValue(r, plugin, mode) : r.total);
    cmp = (a, b) => {
      const va = value(a);
      const vb = value(b);
      if (va === null && vb === null) return byRank(a, b);
      if (va === null) return 1;
      if (vb === null) return -1;
      // Highest first is the natural order for scores: "ascending" here lists the best first.
      return dir * (vb - va) || byRank(a, b);
    };
  } else {
    // rank order is the default view: placed by rank in linear time, not sorted
    const ranked = inRankOrder(rows);
    if (ranked) return desc ? ranked.reverse() : ranked;
    cmp = (a, b) => dir * (a.rank - b.rank);
  }
  return [...rows].sort(cmp);
}

export function applyQuery(rows: NodeRow[], q: TableQuery, labels?: LabelIndex): NodeRow[] {
  // sortRows returns a new array and leaves its input alone: without a filter, no copy is needed first
  const filtered = q.verdict || q.plugin || q.search.trim() ? filterRows(rows, q, labels) : rows;
  return sortRows(filtered, q.sort, q.desc, q.mode);
}

/** Rejecting plugins with their counts, most first. */
export function rejectingPlugins(rows: NodeRow[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const r of rows) if (r.verdict === "failed") counts.set(r.plugin, (counts.get(r.plugin) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

export function queryFromParams(sp: URLSearchParams): TableQuery {
  const sort = (sp.get("sort") ?? "rank") as SortKey;
  const verdict = sp.get("verdict") ?? "";
  const mode = sp.get("mode") ?? "weighted";
  return {
    sort: ["rank", "name", "verdict", "total"].includes(sort) || sort.startsWith("score:") ? sort : "rank",
    desc: sp.get("desc") === "1",
    verdict: (["passed", "failed", "not-evaluated"].includes(verdict) ? verdict : "") as TableQuery["verdict"],
    plugin: sp.get("plugin") ?? "",
    search: sp.get("q") ?? "",
    mode: (SCORE_MODES as string[]).includes(mode) ? (mode as ScoreMode) : "weighted",
  };
}

/** Write the query into search params (defaults left out, so URLs stay short); other params are kept. */
export function paramsWithQuery(sp: URLSearchParams, q: TableQuery): URLSearchParams {
  const out = new URLSearchParams(sp);
  const set = (k: string, v: string, dflt: string) => (v && v !== dflt ? out.set(k, v) : out.delete(k));
  set("sort", q.sort, "rank");
  set("desc", q.desc ? "1" : "", "");
  set("verdict", q.verdict, "");
  set("plugin", q.plugin, "");
  set("q", q.search, "");
  set("mode", q.mode, "weighted");
  return out;
}
