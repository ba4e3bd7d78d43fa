import { useMemo } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { api, qs } from "../api/client";
import type { CycleDetail, CyclePod, Explanation, Replay } from "../api/types";
import { useApi, useLoader } from "../api/useApi";
import { ErrorView, Loading } from "../components/Feedback";
import { ExplainView } from "../components/ExplainView";
import { NodePicker } from "../components/NodePicker";
import { PodSpecSummary } from "../components/PodSpec";
import { loadCyclePages } from "./CycleView";

export function ExplainPage() {
  const { id = "", ns = "", name = "" } = useParams();
  const pod = `${ns}/${name}`;
  const [sp] = useSearchParams();
  const nodes = sp.getAll("node");
  const replay = useApi<Replay>(`/api/v1/replays/${id}/`);
  const url = `/api/v1/replays/${id}/explain/${qs({ pod, node: nodes })}`;
  const ex = useLoader<Explanation>(url, (signal) => api.get<Explanation>(url, { signal }));
  const seq = ex.data?.seq ?? null;
  // node names for the picker: every node of the cycle (page by page past the first thousand), by name
  const cycleNodes = useLoader<string[]>(seq ? `${id}-${seq}-names` : null, async (signal) => {
    const { nodes } = await loadCyclePages<CycleDetail>(`/api/v1/replays/${id}/cycles/${seq}/`, signal);
    return nodes.map((n) => n.name).sort();
  });
  const names = useMemo(() => cycleNodes.data ?? [], [cycleNodes.data]);
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <div className="crumbs">
            <Link to="/replays">Replays</Link> / <Link to={`/replays/${id}`}>{replay.data?.name || id.slice(0, 8)}</Link>
            {seq ? (
              <>
                {" "}
                / <Link to={`/replays/${id}/cycles/${seq}`}>cycle {seq}</Link>
              </>
            ) : null}{" "}
            /
          </div>
          <h1>
            {ex.data && ex.data.result !== "Scheduled" && ex.data.result !== "Waiting" ? "Why is it not scheduled?" : "Why here?"} {pod}
          </h1>
          <p className="muted small">
            The pod&apos;s cycle is run again with every node filtered and scored; the winner is compared with the runner-up and with
            any node you choose, and the rejected nodes are diagnosed.
          </p>
        </div>
      </div>
      <section className="panel" aria-label="Compare with nodes">
        <NodePicker names={names} />
      </section>
      {ex.error ? (
        <ErrorView error={ex.error} title="Could not explain this pod" onRetry={ex.reload} />
      ) : !ex.data ? (
        <Loading label="Replaying up to the pod's cycle and checking what would change the outcome…" />
      ) : (
        <>
          {ex.loading ? <Loading label="Updating…" /> : null}
          <PodSpecPanel replayId={id} seq={ex.data.seq} pod={ex.data.pod} />
          <ExplainView ex={ex.data} replayId={id} />
        </>
      )}
    </div>
  );
}

/** The pod as the scheduler reads it, from its stored cycle. */
function PodSpecPanel({ replayId, seq, pod }: { replayId: string; seq: number; pod: string }) {
  const spec = useApi<CyclePod>(`/api/v1/replays/${replayId}/cycles/${seq}/pod/`);
  if (!spec.data || spec.data.pod !== pod) return null;
  return (
    <section className="panel" aria-label="The pod">
      <PodSpecSummary pod={spec.data} />
    </section>
  );
}
