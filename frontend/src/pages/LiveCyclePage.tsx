import { useCallback, useMemo } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { ApiError, api } from "../api/client";
import { clusterApi, clusterUrl, liveCyclePath, livePath, liveWhyPath, type LiveCluster, type LiveComparison, type LiveCycleRow } from "../api/live";
import type { CycleDetail, Page } from "../api/types";
import { useApi, useLoader } from "../api/useApi";
import { ErrorView, Loading } from "../components/Feedback";
import { LiveComparisonPanel } from "../components/LiveComparison";
import { modelFromRest, type CycleModel } from "../lib/cycleModel";
import { paramsWithQuery, queryFromParams, type TableQuery } from "../lib/nodes";
import { CycleView, loadCyclePages } from "./CycleView";

export interface LiveCycleData {
  /** null: the decision was not replayed (409 `not_replayed`). */
  model: CycleModel | null;
  live: LiveComparison;
  /** Why it was not replayed. */
  reason: string | null;
}

/** A live cycle: the replay's cycle page with every node plus the comparison; a decision not replayed is its comparison alone. */
export async function loadLiveCycle(clusterId: string, seq: number, signal?: AbortSignal): Promise<LiveCycleData> {
  try {
    const { first, nodes } = await loadCyclePages<CycleDetail & { live: LiveComparison }>(clusterApi(clusterId, `cycles/${seq}/`), signal);
    return { model: modelFromRest(first, nodes), live: first.live, reason: null };
  } catch (e) {
    const live = e instanceof ApiError && e.code === "not_replayed" ? (e.details as { live?: LiveComparison } | null)?.live : undefined;
    if (live) return { model: null, live, reason: (e as ApiError).message };
    throw e;
  }
}

/** The last stored seq of a cluster's timeline (0: none). */
export function useLastSeq(clusterId: string) {
  return useLoader<number>(`last-${clusterId}`, async (signal) => {
    const p = await api.get<Page<LiveCycleRow>>(clusterApi(clusterId, "cycles/?page_size=1&page=last"), { signal });
    return p.results.length ? p.results[p.results.length - 1].seq : 0;
  });
}

export function LiveCrumbs({ clusterId, cluster, seq }: { clusterId: string; cluster: LiveCluster | undefined; seq?: number }) {
  return (
    <div className="crumbs">
      <Link to="/live">Live clusters</Link> / <Link to={livePath(clusterId)}>{cluster?.name || clusterId.slice(0, 8)}</Link> /
      {seq !== undefined ? (
        <>
          {" "}
          <Link to={liveCyclePath(clusterId, seq)}>cycle {seq}</Link> /
        </>
      ) : null}
    </div>
  );
}

export function LiveCyclePage() {
  const { id = "", seq: seqParam = "" } = useParams();
  const seq = Number.parseInt(seqParam, 10);
  const [sp, setSp] = useSearchParams();
  const cluster = useApi<LiveCluster>(clusterUrl(id));
  const last = useLastSeq(id);
  const data = useLoader<LiveCycleData>(Number.isFinite(seq) ? `${id}/${seq}` : null, (signal) => loadLiveCycle(id, seq, signal));
  const query = useMemo(() => queryFromParams(sp), [sp]);
  const setQuery = useCallback((q: TableQuery) => setSp(paramsWithQuery(sp, q), { replace: true }), [sp, setSp]);
  const selectedNode = sp.get("node");
  const setSelectedNode = useCallback(
    (n: string | null) => {
      const next = new URLSearchParams(sp);
      if (n) next.set("node", n);
      else next.delete("node");
      setSp(next);
    },
    [sp, setSp],
  );
  const d = data.data;
  const lastSeq = last.data ?? null;
  const keep = sp.toString() ? `?${sp.toString()}` : "";

  if (!Number.isFinite(seq)) return <ErrorView error={new Error(`${seqParam} is not a cycle number`)} title="No such cycle" />;
  const actualNode = d?.live.actual.node ?? null;
  return (
    <div className="stack live-cycle">
      <div className="page-head">
        <div className="grow">
          <LiveCrumbs clusterId={id} cluster={cluster.data} />
          <h1 style={{ margin: 0 }}>
            Decision {seq}
            {d ? (
              <>
                : <span className="mono" style={{ fontSize: 16 }}>{d.live.pod}</span>
              </>
            ) : null}
          </h1>
        </div>
        <nav className="row" aria-label="Other cycles">
          {seq > 1 ? (
            <Link className="button small" to={`${liveCyclePath(id, seq - 1)}${keep}`} aria-label="Previous cycle">
              ◀ {seq - 1}
            </Link>
          ) : null}
          {lastSeq === null || seq < lastSeq ? (
            <Link className="button small" to={`${liveCyclePath(id, seq + 1)}${keep}`} aria-label="Next cycle">
              {seq + 1} ▶
            </Link>
          ) : null}
          <Link className="button small" to={livePath(id)}>
            All decisions
          </Link>
        </nav>
      </div>
      {data.error && !d ? (
        <ErrorView
          error={data.error}
          title={`Could not load cycle ${seq}`}
          onRetry={data.error instanceof ApiError && data.error.status === 404 ? undefined : data.reload}
        />
      ) : !d ? (
        <Loading label={`Loading cycle ${seq}…`} />
      ) : (
        <>
          <LiveComparisonPanel
            live={d.live}
            whyHref={d.model ? liveWhyPath(id, seq) : undefined}
            nodeHref={
              d.model
                ? (node) => {
                    const next = new URLSearchParams(sp);
                    next.set("node", node);
                    return `?${next.toString()}`;
                  }
                : undefined
            }
          />
          {d.model ? (
            <CycleView
              replayId={id}
              seq={seq}
              live={null}
              names={[]}
              fetchDetail={false}
              model={d.model}
              query={query}
              onQueryChange={setQuery}
              selectedNode={selectedNode}
              onSelectNode={setSelectedNode}
              explainPath={(node) => liveWhyPath(id, seq, node && node !== d.model?.selectedNode && node !== actualNode ? [node] : [])}
              mark={actualNode ? { node: actualNode, label: "the cluster's choice" } : null}
              tableHeight="max(300px, calc(100vh - 300px))"
              animate={false}
            />
          ) : (
            <p className="warn-box">
              This decision was not replayed{d.reason ? `: ${d.reason}` : "."} There is no replayed cycle to show.
            </p>
          )}
        </>
      )}
    </div>
  );
}
