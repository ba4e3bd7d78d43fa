import { useMemo } from "react";
import { useParams, useSearchParams } from "react-router-dom";
import { ApiError, api, qs } from "../api/client";
import { clusterApi, clusterUrl, liveCyclePath, type LiveCluster, type LiveComparison, type LiveExplanation } from "../api/live";
import type { CycleDetail } from "../api/types";
import { useApi, useLoader } from "../api/useApi";
import { ExplainView } from "../components/ExplainView";
import { ErrorView, Loading } from "../components/Feedback";
import { LiveComparisonPanel } from "../components/LiveComparison";
import { NodePicker } from "../components/NodePicker";
import { LiveCrumbs } from "./LiveCyclePage";

interface CycleNames {
  live: LiveComparison;
  names: string[];
  /** The decision was not replayed: why. */
  notReplayed: string | null;
}

/** Codes the explain endpoint answers when a decision has no explanation (docs/live.md). */
const NO_EXPLANATION = new Set(["not_replayed", "no_explanation", "not_found"]);

export function LiveExplainPage() {
  const { id = "", seq: seqParam = "" } = useParams();
  const seq = Number.parseInt(seqParam, 10);
  const [sp] = useSearchParams();
  const cluster = useApi<LiveCluster>(clusterUrl(id));
  // the cycle's comparison (which node the cluster chose) and its node names, for the picker
  const cycle = useLoader<CycleNames>(Number.isFinite(seq) ? `${id}/${seq}/names` : null, async (signal) => {
    try {
      const d = await api.get<CycleDetail & { live: LiveComparison }>(clusterApi(id, `cycles/${seq}/?sort=name&page_size=1000`), { signal });
      return { live: d.live, names: d.nodes.results.map((n) => n.name), notReplayed: null };
    } catch (e) {
      const live = e instanceof ApiError && e.code === "not_replayed" ? (e.details as { live?: LiveComparison } | null)?.live : undefined;
      if (live) return { live, names: [], notReplayed: (e as ApiError).message };
      throw e;
    }
  });
  const live = cycle.data?.live;
  // the cluster's node, when the replay chose another, is always compared
  const clusterNode = live && live.actual.node && live.actual.node !== live.replay.node ? live.actual.node : null;
  const chosenKey = sp.getAll("node").join("\n");
  const nodes = useMemo(() => {
    const chosen = chosenKey ? chosenKey.split("\n") : [];
    return clusterNode && !chosen.includes(clusterNode) ? [clusterNode, ...chosen] : chosen;
  }, [clusterNode, chosenKey]);
  const url = cycle.data && !cycle.data.notReplayed ? clusterApi(id, `cycles/${seq}/explain/${qs({ node: nodes })}`) : null;
  const ex = useLoader<LiveExplanation>(url, (signal) => api.get<LiveExplanation>(url as string, { signal }));
  const titles = useMemo(() => (clusterNode ? { [clusterNode]: "The cluster's node" } : undefined), [clusterNode]);

  if (!Number.isFinite(seq)) return <ErrorView error={new Error(`${seqParam} is not a cycle number`)} title="No such cycle" />;
  const noExplanation = ex.error instanceof ApiError && NO_EXPLANATION.has(ex.error.code);
  const comparison = ex.data?.live ?? live;
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <LiveCrumbs clusterId={id} cluster={cluster.data} seq={seq} />
          <h1>Why here? {live ? <span className="mono" style={{ fontSize: 16 }}>{live.pod}</span> : null}</h1>
          <p className="muted small" style={{ margin: 0 }}>
            The pod&apos;s cycle is replayed on the cluster&apos;s state just before the decision, with every node filtered and scored; the replay&apos;s
            winner is compared with the runner-up, with the node the cluster chose and with any node you add, and the rejected nodes are diagnosed.
          </p>
        </div>
      </div>
      {cycle.error ? (
        <ErrorView error={cycle.error} title={`Could not load cycle ${seq}`} onRetry={cycle.error instanceof ApiError && cycle.error.status === 404 ? undefined : cycle.reload} />
      ) : !comparison ? (
        <Loading label={`Loading cycle ${seq}…`} />
      ) : (
        <LiveComparisonPanel live={comparison} cycleHref={liveCyclePath(id, seq)} heading="The cluster's decision against the replay's" />
      )}
      {cycle.data?.notReplayed ? (
        <p className="warn-box">This decision was not replayed, so there is nothing to explain: {cycle.data.notReplayed}</p>
      ) : cycle.data ? (
        <>
          <section className="panel" aria-label="Compare with nodes">
            <NodePicker names={cycle.data.names} fixed={clusterNode ? [{ node: clusterNode, label: "the cluster's node" }] : []} />
          </section>
          {noExplanation ? (
            <p className="warn-box" data-testid="no-explanation">
              No explanation is available for this decision: {(ex.error as ApiError).message}
            </p>
          ) : ex.error ? (
            <ErrorView error={ex.error} title="Could not explain this decision" onRetry={ex.reload} />
          ) : !ex.data ? (
            <Loading label="Replaying the pod's cycle and checking what would change the outcome…" />
          ) : (
            <>
              {ex.loading ? <Loading label="Updating…" /> : null}
              <ExplainView ex={ex.data} replayId={id} cycleHref={liveCyclePath(id, seq)} titles={titles} />
            </>
          )}
        </>
      ) : null}
    </div>
  );
}
