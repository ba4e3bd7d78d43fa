import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { api, qs } from "../api/client";
import {
  clusterApi,
  clusterUrl,
  decisionFromRow,
  liveCyclePath,
  matchesFilter,
  mergeDecisions,
  type Decision,
  type DecisionFilter,
  type Divergences,
  type LiveCluster,
  type LiveCycleRow,
  type LiveHealth,
  type LiveSummary,
} from "../api/live";
import type { Page } from "../api/types";
import { useApi, useLoader } from "../api/useApi";
import { ClusterHealthPanel } from "../components/ClusterHealth";
import { DecisionList } from "../components/DecisionList";
import { ErrorView, Loading } from "../components/Feedback";
import { AgreementBadge, ClusterStatusBadge, CodeChip, CODE_TEXT } from "../components/LiveBadges";
import { SnapshotNow } from "../components/SnapshotNow";
import { formatDate } from "../lib/format";
import { useClusterStream } from "../stream/useClusterStream";
import { Connection } from "./ReplayPage";
import { WorkerCell } from "./LiveClustersPage";

const HISTORY_PAGE = 50;
const HEALTH_MS = 5000;

function filterFromParams(sp: URLSearchParams): DecisionFilter {
  return { agreement: sp.get("agreement") ?? "", namespace: sp.get("namespace") ?? "", divergence: sp.get("code") ?? "", search: sp.get("q") ?? "" };
}

function paramsWithFilter(sp: URLSearchParams, f: DecisionFilter): URLSearchParams {
  const out = new URLSearchParams(sp);
  const set = (k: string, v: string) => (v ? out.set(k, v) : out.delete(k));
  set("agreement", f.agreement);
  set("namespace", f.namespace);
  set("code", f.divergence);
  set("q", f.search);
  return out;
}

interface History {
  key: string;
  decisions: Decision[];
  /** Matching decisions stored when the newest page was loaded. */
  total: number | null;
  /** The next older page to load (0: none left). */
  next: number;
  loading: boolean;
  error: Error | null;
}

/** The stored decisions matching the API-side filters, newest first, a page at a time (the API lists oldest first). */
function useHistory(clusterId: string, f: Pick<DecisionFilter, "agreement" | "namespace" | "divergence">) {
  const base = clusterApi(clusterId, `cycles/${qs({ agreement: f.agreement, namespace: f.namespace, divergence: f.divergence, page_size: HISTORY_PAGE })}`);
  const [h, setH] = useState<History>({ key: "", decisions: [], total: null, next: 0, loading: true, error: null });
  const ctrl = useRef<AbortController | null>(null);
  const fetchPage = useCallback(
    async (page: number | "last", signal: AbortSignal) => {
      const p = await api.get<Page<LiveCycleRow>>(`${base}&page=${page}`, { signal });
      return { count: p.count, decisions: p.results.map(decisionFromRow).reverse() };
    },
    [base],
  );
  useEffect(() => {
    ctrl.current?.abort();
    const c = new AbortController();
    ctrl.current = c;
    setH({ key: base, decisions: [], total: null, next: 0, loading: true, error: null });
    (async () => {
      const last = await fetchPage("last", c.signal);
      const pages = Math.max(1, Math.ceil(last.count / HISTORY_PAGE));
      let decisions = last.decisions;
      let next = pages - 1;
      // a nearly empty newest page: show the one before it too
      if (decisions.length < HISTORY_PAGE / 2 && next >= 1) {
        decisions = [...decisions, ...(await fetchPage(next, c.signal)).decisions];
        next -= 1;
      }
      if (!c.signal.aborted) setH({ key: base, decisions, total: last.count, next, loading: false, error: null });
    })().catch((e: unknown) => {
      if (!c.signal.aborted) setH((prev) => ({ ...prev, loading: false, error: e as Error }));
    });
    return () => c.abort();
  }, [base, fetchPage]);
  const loadOlder = useCallback(() => {
    if (h.loading || h.next < 1) return;
    const c = new AbortController();
    ctrl.current = c;
    const page = h.next;
    setH((prev) => ({ ...prev, loading: true, error: null }));
    fetchPage(page, c.signal)
      .then((p) => {
        if (!c.signal.aborted) setH((prev) => ({ ...prev, decisions: [...prev.decisions, ...p.decisions], next: page - 1, loading: false }));
      })
      .catch((e: unknown) => {
        if (!c.signal.aborted) setH((prev) => ({ ...prev, loading: false, error: e as Error }));
      });
  }, [h.loading, h.next, fetchPage]);
  return { history: h, loadOlder };
}

function SummaryStrip({ summary, onAgreement, onCode }: { summary: LiveSummary; onAgreement: (a: string) => void; onCode: (c: string) => void }) {
  const agreements: [string, number][] = [
    ["match", summary.match],
    ["tie", summary.tie],
    ["diverged", summary.diverged],
    ["skipped", summary.skipped],
  ];
  const codes = Object.entries(summary.byCode).sort((a, b) => b[1] - a[1]);
  return (
    <section className="panel summary-strip" aria-label="Summary">
      <div className="stat" data-testid="summary-cycles">
        <span className="n">{summary.cycles.toLocaleString()}</span> decisions
      </div>
      {agreements.map(([a, n]) => (
        <button key={a} type="button" className="stat-button" onClick={() => onAgreement(a)} title={`Show the ${a} decisions`} data-summary={a}>
          <AgreementBadge agreement={a} /> <span className="n">{n.toLocaleString()}</span>
        </button>
      ))}
      <span className="divider" aria-hidden="true" />
      <div className="by-code" aria-label="Ties and divergences by explanation">
        {codes.length ? (
          codes.map(([code, n]) => (
            <button key={code} type="button" className="stat-button" onClick={() => onCode(code)} title={`${CODE_TEXT[code] ?? code}: show them`} data-code-count={code}>
              <CodeChip code={code} /> <span className="n">{n}</span>
            </button>
          ))
        ) : (
          <span className="small muted">no divergence</span>
        )}
      </div>
      <span className="spacer" style={{ flex: 1 }} />
      <span className="small muted">last decision {formatDate(summary.lastCycleAt)}</span>
    </section>
  );
}

function DivergencesPanel({ clusterId, data, onCode }: { clusterId: string; data: Divergences; onCode: (c: string) => void }) {
  return (
    <section className="panel divergences" aria-labelledby="div-title">
      <h2 id="div-title">
        Recent divergences <span className="small muted">(the {data.recent.length} latest that did not match)</span>
      </h2>
      {data.recent.length === 0 ? (
        <p className="small muted">Every decision so far matched the replay.</p>
      ) : (
        <div className="divergences-wrap">
          <table className="data" aria-label="Recent divergences">
            <thead>
              <tr>
                <th className="num">#</th>
                <th>Pod</th>
                <th>Cluster → replay</th>
                <th>Why</th>
              </tr>
            </thead>
            <tbody>
              {data.recent.map((r) => (
                <tr key={r.seq} data-seq={r.seq}>
                  <td className="num">
                    <Link to={liveCyclePath(clusterId, r.seq)}>{r.seq}</Link>
                  </td>
                  <td className="mono small ellipsis" style={{ maxWidth: 130 }} title={r.pod}>
                    {r.pod}
                  </td>
                  <td className="small mono">
                    {r.actual_node || r.actual_result} → {r.node || r.result || "–"}
                  </td>
                  <td>
                    {r.divergence ? (
                      <button type="button" className="linklike code-link" onClick={() => onCode(r.divergence)} title={r.explanations[0]?.message}>
                        <CodeChip code={r.divergence} />
                      </button>
                    ) : (
                      <AgreementBadge agreement={r.agreement} />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function LiveClusterPage() {
  const { id = "" } = useParams();
  const [sp, setSp] = useSearchParams();
  const filter = useMemo(() => filterFromParams(sp), [sp]);
  const setFilter = useCallback((f: DecisionFilter) => setSp(paramsWithFilter(sp, f), { replace: true }), [sp, setSp]);

  const cluster = useApi<LiveCluster>(clusterUrl(id));
  const health = useApi<LiveHealth>(clusterApi(id, "health/"));
  const divergences = useApi<Divergences>(clusterApi(id, "divergences/"));
  // the last stored decision when the page opened: the websocket follows what comes after it
  const tail = useLoader<number>(`tail-${id}`, async (signal) => {
    const p = await api.get<Page<LiveCycleRow>>(clusterApi(id, "cycles/?page_size=1&page=last"), { signal });
    return p.results.length ? p.results[p.results.length - 1].seq : 0;
  });
  const stream = useClusterStream(tail.data !== undefined && !!cluster.data, id, tail.data ?? null);
  const st = stream.state;
  const { history, loadOlder } = useHistory(id, filter);

  // the health: every few seconds, and when the stream says the cluster changed
  const { reload: reloadHealth } = health;
  const { reload: reloadDivergences } = divergences;
  useEffect(() => {
    const t = setInterval(reloadHealth, HEALTH_MS);
    return () => clearInterval(t);
  }, [reloadHealth]);
  useEffect(() => {
    if (st.statusCount > 0) {
      reloadHealth();
      reloadDivergences();
    }
  }, [st.statusCount, reloadHealth, reloadDivergences]);

  // decisions after this seq came over the websocket (none while the tail is loading)
  const after = tail.data ?? Number.POSITIVE_INFINITY;
  const streamed = useMemo(() => st.decisions.filter((d) => matchesFilter(d, { ...filter, search: "" })), [st.decisions, filter]);
  const decisions = useMemo(
    () => mergeDecisions(streamed, history.decisions).filter((d) => matchesFilter(d, filter)),
    [streamed, history.decisions, filter],
  );
  // the API's count when the newest page loaded, plus what matched since
  const counted = Math.max(history.decisions.length ? history.decisions[0].seq : 0, tail.data ?? 0);
  const total = history.total === null ? null : history.total + streamed.filter((d) => d.seq > counted).length;

  const seenNs = useRef(new Set<string>());
  for (const d of history.decisions) seenNs.current.add(d.namespace);
  for (const d of st.decisions) seenNs.current.add(d.namespace);
  if (filter.namespace) seenNs.current.add(filter.namespace);
  const namespaces = [...seenNs.current].filter(Boolean).sort();

  const c = cluster.data;
  const summary = st.cluster?.summary ?? c?.summary;
  const codes = useMemo(() => {
    const s = new Set(Object.keys(summary?.byCode ?? {}));
    if (filter.divergence) s.add(filter.divergence);
    return [...s].sort();
  }, [summary, filter.divergence]);

  if (cluster.error && !c) return <ErrorView error={cluster.error} title="Could not load the cluster" onRetry={cluster.reload} />;
  if (!c || !summary) return <Loading label="Loading the cluster…" />;

  const status = st.cluster?.status ?? c.status;
  const message = st.cluster ? st.cluster.message : c.status_message;
  const worker = st.cluster ? { ...c.worker, alive: st.cluster.workerAlive } : c.worker;
  return (
    <div className="live-page">
      <div className="page-head">
        <div className="grow">
          <div className="crumbs">
            <Link to="/live">Live clusters</Link> /
          </div>
          <div className="row" style={{ gap: 10 }}>
            <h1 style={{ margin: 0 }}>{c.name || c.id.slice(0, 8)}</h1>
            <ClusterStatusBadge status={status} />
            {!c.enabled ? <span className="badge outline">disabled</span> : null}
            <Connection state={stream.connection} detail={stream.detail} live />
          </div>
          <div className="row small muted" style={{ marginTop: 4, gap: 10 }}>
            <span className="mono">{c.server}</span>
            <WorkerCell worker={worker} />
            <span>{c.all_nodes ? "every node evaluated" : "scheduler's node sampling"}</span>
            <span>
              configuration: {c.config_source === "configmap" ? c.config_map : c.config_source === "uploaded" ? "uploaded" : "v1.35 defaults"}
            </span>
          </div>
          {message ? (
            <p className="small status-message-box" style={{ margin: "6px 0 0" }} data-testid="status-message">
              {message}
            </p>
          ) : null}
        </div>
        <SnapshotNow clusterId={id} disabled={!worker.alive} />
      </div>
      {st.gone ? <p className="error-box">This cluster was deleted: its timeline is gone.</p> : st.error ? <p className="warn-box small">Stream: {st.error}</p> : null}

      <SummaryStrip
        summary={summary}
        onAgreement={(a) => setFilter({ ...filter, agreement: filter.agreement === a ? "" : a })}
        onCode={(code) => setFilter({ ...filter, divergence: filter.divergence === code ? "" : code })}
      />

      <div className="live-layout">
        <section className="panel" aria-labelledby="decisions-title">
          <h2 id="decisions-title">
            Decisions{" "}
            <span className="small muted" style={{ fontWeight: 400 }}>
              newest first{st.received ? ` · ${st.received} arrived since you opened the page (green edge)` : ""}
              {st.current ? ` · replaying ${st.current.pod}…` : ""}
            </span>
          </h2>
          {history.error ? <ErrorView error={history.error} title="Could not load the decisions" /> : null}
          {history.loading && !history.decisions.length ? <Loading label="Loading the decisions…" /> : null}
          <DecisionList
            clusterId={id}
            decisions={decisions}
            streamedAfter={after}
            filter={filter}
            onFilterChange={setFilter}
            namespaces={namespaces}
            codes={codes}
            olderLoading={history.loading}
            hasOlder={history.next >= 1}
            onLoadOlder={loadOlder}
            total={filter.search ? null : total}
          />
        </section>
        <aside className="stack" aria-label="Cluster health and divergences">
          {health.data ? (
            <ClusterHealthPanel health={health.data} />
          ) : health.error ? (
            <ErrorView error={health.error} title="Could not load the health" onRetry={health.reload} />
          ) : (
            <Loading label="Loading the health…" />
          )}
          {divergences.data ? (
            <DivergencesPanel clusterId={id} data={divergences.data} onCode={(code) => setFilter({ ...filter, divergence: code })} />
          ) : divergences.error ? (
            <ErrorView error={divergences.error} title="Could not load the divergences" onRetry={divergences.reload} />
          ) : null}
        </aside>
      </div>
    </div>
  );
}
