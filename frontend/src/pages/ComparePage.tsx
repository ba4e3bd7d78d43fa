import { useEffect, useMemo, useState } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router-dom";
import { api, fetchAll } from "../api/client";
import type { Comparison, Configuration, Replay } from "../api/types";
import { replayLabel } from "../lib/replayLabel";
import { useApi, useLoader } from "../api/useApi";
import { ResultBadge, StatusBadge } from "../components/Badges";
import { ProgressBar } from "../components/Bars";
import { ClusterEffectPanel, MovedRow } from "../components/CompareEffect";
import { Async, Empty, ErrorView, Loading } from "../components/Feedback";
import { podPath } from "./CycleView";

const ACTIVE = new Set(["queued", "running"]);
const CHANGE_TEXT: Record<string, string> = {
  unchanged: "unchanged",
  moved: "moved",
  newlyUnschedulable: "newly unschedulable",
  newlyScheduled: "newly scheduled",
  resultChanged: "result changed",
  onlyInA: "only in A",
  onlyInB: "only in B",
};

function Picker() {
  const [sp] = useSearchParams();
  const navigate = useNavigate();
  const replays = useLoader<Replay[]>("replays-all", (signal) => fetchAll<Replay>("/api/v1/replays/", { signal, pageSize: 200 }));
  const [a, setA] = useState(sp.get("a") ?? "");
  const [b, setB] = useState(sp.get("b") ?? "");
  const configs = useLoader<Configuration[]>("configs-all", (signal) => fetchAll<Configuration>("/api/v1/configurations/", { signal, pageSize: 200 }));
  const configNames = Object.fromEntries((configs.data ?? []).map((c) => [c.id, c.name]));
  const all = replays.data ?? [];
  const ra = all.find((r) => r.id === a);
  const candidates = all.filter((r) => r.id !== a && (!ra || r.snapshot === ra.snapshot));
  return (
    <section className="panel" aria-labelledby="pick-title">
      <h2 id="pick-title">Choose two replays of the same snapshot</h2>
      <Async state={replays} label="Loading replays…">
        {() => (
          <form
            className="row"
            style={{ alignItems: "flex-end" }}
            onSubmit={(e) => {
              e.preventDefault();
              if (a && b) navigate(`/compare/${a}/${b}`);
            }}
          >
            <label className="field">
              <span>A: the reference (baseline)</span>
              <select value={a} onChange={(e) => setA(e.target.value)} style={{ minWidth: 260, maxWidth: "44vw" }}>
                <option value="">Choose…</option>
                {all.map((r) => (
                  <option key={r.id} value={r.id}>
                    {replayLabel(r, configNames)}
                  </option>
                ))}
              </select>
            </label>
            <label className="field">
              <span>B: the candidate</span>
              <select value={b} onChange={(e) => setB(e.target.value)} style={{ minWidth: 260, maxWidth: "44vw" }} disabled={!a}>
                <option value="">Choose…</option>
                {candidates.map((r) => (
                  <option key={r.id} value={r.id}>
                    {replayLabel(r, configNames)}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" className="primary" disabled={!a || !b}>
              Compare
            </button>
            {a && !candidates.length ? <span className="small muted">No other replay of this snapshot yet: start a what-if replay from Configurations.</span> : null}
          </form>
        )}
      </Async>
    </section>
  );
}

function ShiftBar({ delta, max }: { delta: number | null; max: number }) {
  if (delta === null) return <span className="muted">–</span>;
  const w = 60;
  const x = Math.min(1, Math.abs(delta) / Math.max(1, max)) * w;
  return (
    <svg width={w * 2 + 40} height={14} role="img" aria-label={`delta ${delta}`}>
      <line x1={w} x2={w} y1={0} y2={14} stroke="#9aa3af" />
      <rect x={delta >= 0 ? w : w - x} y={3} width={x} height={8} fill={delta >= 0 ? "#0072B2" : "#D55E00"} />
      <text x={w * 2 + 4} y={11} fontSize={11}>
        {delta > 0 ? `+${delta}` : delta}
      </text>
    </svg>
  );
}

function CompareResult({ c, a, b }: { c: Comparison; a: Replay; b: Replay }) {
  const [filter, setFilter] = useState("changed");
  const pods = useMemo(
    () => c.pods.filter((p) => (filter === "changed" ? p.change !== "unchanged" : !filter || p.change === filter)),
    [c.pods, filter],
  );
  const maxShift = Math.max(1, ...c.scoreShifts.map((s) => Math.abs(s.delta ?? 0)));
  const explainB = (pod: string) => podPath(b.id, pod);
  const cards: [string, number, string][] = [
    ["compared", c.counts.compared ?? 0, "grey"],
    ["unchanged", c.counts.unchanged ?? 0, "blue"],
    ["moved", c.counts.moved ?? 0, "orange"],
    ["newlyUnschedulable", c.counts.newlyUnschedulable ?? 0, "vermillion"],
    ["newlyScheduled", c.counts.newlyScheduled ?? 0, "green"],
    ["resultChanged", c.counts.resultChanged ?? 0, "purple"],
  ];
  return (
    <div className="stack">
      <section className="panel" aria-label="Summary">
        <div className="row">
          {cards.map(([k, n, cls]) => (
            <div key={k} className={`badge ${cls}`} style={{ fontSize: 13, padding: "4px 10px" }}>
              {n} {CHANGE_TEXT[k] ?? k}
            </div>
          ))}
          {c.counts.onlyInA || c.counts.onlyInB ? (
            <span className="small muted">
              {c.counts.onlyInA} only in A, {c.counts.onlyInB} only in B
            </span>
          ) : null}
        </div>
        <p className="small muted" style={{ marginTop: 6 }}>
          A = <Link to={`/replays/${a.id}`}>{a.name || a.id.slice(0, 8)}</Link>, B = <Link to={`/replays/${b.id}`}>{b.name || b.id.slice(0, 8)}</Link>.{" "}
          {c.counts.changed ? `${c.counts.changed} pods placed differently.` : "Every pod is placed the same way."}
        </p>
      </section>

      <ClusterEffectPanel a={a} b={b} newlyUnschedulable={c.counts.newlyUnschedulable ?? 0} />

      {c.newlyUnschedulable.length ? (
        <section className="panel" aria-labelledby="nu-title">
          <h2 id="nu-title">Newly unschedulable</h2>
          <table className="data">
            <thead>
              <tr>
                <th>Pod</th>
                <th>In A</th>
                <th>kube-scheduler&apos;s message in B</th>
              </tr>
            </thead>
            <tbody>
              {c.newlyUnschedulable.map((p) => (
                <tr key={p.pod}>
                  <td>
                    <Link className="mono" to={explainB(p.pod)}>
                      {p.pod}
                    </Link>
                  </td>
                  <td>
                    <ResultBadge result={p.previousResult} /> {p.previousNode ?? ""}
                  </td>
                  <td className="small mono">{p.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}

      {c.moved.length ? (
        <section className="panel" aria-labelledby="moved-title">
          <h2 id="moved-title">Placement changes</h2>
          <table className="data">
            <thead>
              <tr>
                <th>Pod</th>
                <th>A: node (total)</th>
                <th>B: node (total)</th>
                <th>Why it moved</th>
              </tr>
            </thead>
            <tbody>
              {c.moved.map((p) => (
                <MovedRow
                  key={p.pod}
                  a={a.id}
                  b={b.id}
                  p={p}
                  podLink={
                    <Link className="mono" to={explainB(p.pod)}>
                      {p.pod}
                    </Link>
                  }
                />
              ))}
            </tbody>
          </table>
        </section>
      ) : null}

      {c.newlyScheduled.length || c.resultChanged.length ? (
        <section className="panel" aria-labelledby="other-title">
          <h2 id="other-title">Other result changes</h2>
          <table className="data">
            <thead>
              <tr>
                <th>Pod</th>
                <th>A</th>
                <th>B</th>
                <th>Message</th>
              </tr>
            </thead>
            <tbody>
              {c.newlyScheduled.map((p) => (
                <tr key={p.pod}>
                  <td>
                    <Link className="mono" to={explainB(p.pod)}>
                      {p.pod}
                    </Link>
                  </td>
                  <td>
                    <ResultBadge result={p.previousResult} />
                  </td>
                  <td>
                    <ResultBadge result="Scheduled" /> {p.node}
                  </td>
                  <td className="small mono">{p.previousMessage}</td>
                </tr>
              ))}
              {c.resultChanged.map((p) => (
                <tr key={p.pod}>
                  <td className="mono">{p.pod}</td>
                  <td>
                    <ResultBadge result={p.from} /> {p.previousNode ?? ""}
                  </td>
                  <td>
                    <ResultBadge result={p.to} /> {p.node ?? ""}
                  </td>
                  <td className="small mono">{p.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}

      {c.scoreShifts.length ? (
        <section className="panel" aria-labelledby="shift-title">
          <h2 id="shift-title">Score shifts</h2>
          <p className="small muted">Pods placed and scored in both replays whose winner or winning total differs (B − A).</p>
          <div className="table-wrap" style={{ maxHeight: 420 }}>
            <table className="data">
              <thead>
                <tr>
                  <th>Pod</th>
                  <th>A: winner (total)</th>
                  <th>B: winner (total)</th>
                  <th>Δ total</th>
                  <th className="num" title="What A's winner scored under B">A&apos;s winner in B</th>
                  <th className="num" title="What B's winner scored under A">B&apos;s winner in A</th>
                </tr>
              </thead>
              <tbody>
                {c.scoreShifts.map((s) => (
                  <tr key={s.pod}>
                    <td>
                      <Link className="mono" to={explainB(s.pod)}>
                        {s.pod}
                      </Link>
                    </td>
                    <td>
                      {s.aNode} <span className="muted">({s.aTotal ?? "–"})</span>
                    </td>
                    <td>
                      {s.bNode} <span className="muted">({s.bTotal ?? "–"})</span>
                    </td>
                    <td>
                      <ShiftBar delta={s.delta} max={maxShift} />
                    </td>
                    <td className="num">{s.aNodeTotalInB ?? "–"}</td>
                    <td className="num">{s.bNodeTotalInA ?? "–"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}

      <section className="panel" aria-labelledby="all-title">
        <div className="row">
          <h2 id="all-title" style={{ margin: 0 }}>
            Every pod
          </h2>
          <select aria-label="Show pods" value={filter} onChange={(e) => setFilter(e.target.value)}>
            <option value="changed">Changed only</option>
            <option value="">All</option>
            {Object.entries(CHANGE_TEXT).map(([k, t]) => (
              <option key={k} value={k}>
                {t}
              </option>
            ))}
          </select>
        </div>
        {pods.length === 0 ? (
          <Empty>No pod here.</Empty>
        ) : (
          <div className="table-wrap" style={{ maxHeight: 420 }}>
            <table className="data">
              <thead>
                <tr>
                  <th>Pod</th>
                  <th>Change</th>
                  <th>A</th>
                  <th>B</th>
                </tr>
              </thead>
              <tbody>
                {pods.map((p) => (
                  <tr key={p.pod}>
                    <td className="mono">{p.pod}</td>
                    <td>{CHANGE_TEXT[p.change] ?? p.change}</td>
                    <td>{p.a ? <><ResultBadge result={p.a.result} /> {p.a.node ?? ""}</> : "–"}</td>
                    <td>{p.b ? <><ResultBadge result={p.b.result} /> {p.b.node ?? ""}</> : "–"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}

function ReplayState({ label, r }: { label: string; r: Replay }) {
  return (
    <div className="row small">
      <strong>{label}</strong> <Link to={`/replays/${r.id}`}>{r.name || r.id.slice(0, 8)}</Link> <StatusBadge status={r.status} />
      {ACTIVE.has(r.status) ? <ProgressBar value={r.progress} label={`${label} progress`} /> : null}
    </div>
  );
}

function Compared({ a, b }: { a: string; b: string }) {
  const ra = useApi<Replay>(`/api/v1/replays/${a}/`);
  const rb = useApi<Replay>(`/api/v1/replays/${b}/`);
  const ready = ra.data?.status === "succeeded" && rb.data?.status === "succeeded";
  const waiting = !!ra.data && !!rb.data && (ACTIVE.has(ra.data.status) || ACTIVE.has(rb.data.status));
  const { reload: reloadA } = ra;
  const { reload: reloadB } = rb;
  useEffect(() => {
    if (!waiting) return;
    const t = setInterval(() => {
      reloadA();
      reloadB();
    }, 2000);
    return () => clearInterval(t);
  }, [waiting, reloadA, reloadB]);
  const cmp = useLoader<Comparison>(ready ? `cmp-${a}-${b}` : null, (signal) => api.get<Comparison>(`/api/v1/replays/${a}/compare/${b}/`, { signal }));
  if (ra.error) return <ErrorView error={ra.error} title="Replay A" onRetry={ra.reload} />;
  if (rb.error) return <ErrorView error={rb.error} title="Replay B" onRetry={rb.reload} />;
  if (!ra.data || !rb.data) return <Loading />;
  return (
    <div className="stack">
      <section className="panel">
        <ReplayState label="A" r={ra.data} />
        <ReplayState label="B" r={rb.data} />
        {waiting ? <p className="small muted" style={{ marginTop: 6 }}>The comparison appears when both replays have finished.</p> : null}
        {!ready && !waiting ? (
          <p className="warn-box small" style={{ marginTop: 6 }}>
            Both replays must have succeeded to be compared.
          </p>
        ) : null}
      </section>
      {ready ? (
        <Async state={cmp} label="Comparing…">
          {(c) => <CompareResult c={c} a={ra.data as Replay} b={rb.data as Replay} />}
        </Async>
      ) : null}
    </div>
  );
}

export function ComparePage() {
  const { a, b } = useParams();
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <h1>Compare two replays</h1>
          <p className="muted">Placement changes, newly unschedulable pods and score shifts between two replays of one snapshot.</p>
        </div>
      </div>
      {a && b ? <Compared a={a} b={b} /> : <Picker />}
    </div>
  );
}
