import { useEffect, useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import { api, ApiError, fetchAll, qs } from "../api/client";
import type {
  CapacityResult,
  DrainResult,
  Plan,
  PlanKind,
  PlanListItem,
  PlanReplay,
  ScaleUpResult,
  ScaleUpTemplate,
  Utilization,
} from "../api/plans";
import { PLANS_URL, planUrl } from "../api/plans";
import type { Page, Snapshot } from "../api/types";
import { useLoader } from "../api/useApi";
import { StatusBadge } from "../components/Badges";
import { Async, Empty, ErrorView } from "../components/Feedback";
import { anyActive, isActive, type JobColumn, JobLink, JobList, usePolling } from "../components/JobList";
import { formatDate, formatPercent, plural } from "../lib/format";
import type { BarDatum, PlanForm } from "../lib/plans";
import { changedNodes, topBars, toQuestion, totalUsage } from "../lib/plans";
import "./plans.css";

const KINDS: { kind: PlanKind; label: string; help: string }[] = [
  { kind: "capacity", label: "Capacity", help: "How many more copies of a pod fit, where, and why not one more." },
  { kind: "drain", label: "Drain", help: "Cordon nodes, evict their pods as kubectl drain does, and see where the recreated pods go." },
  { kind: "scale-up", label: "Scale-up", help: "How many nodes of a shape make the pending pods schedulable, and which no node helps." },
];

const POLL_MS = 1500;

function splitPod(key: string): [string, string] {
  const i = key.indexOf("/");
  return i < 0 ? ["default", key] : [key.slice(0, i), key.slice(i + 1)];
}

/** Horizontal bars with their values, for counts (placements per zone, per node; pods per step). */
export function BarChart({ data, label, unit }: { data: BarDatum[]; label: string; unit: string }) {
  const max = Math.max(1, ...data.map((d) => d.value));
  return (
    <figure className="plan-chart" aria-label={label}>
      <figcaption>{label}</figcaption>
      <ul>
        {data.map((d) => (
          <li key={d.label} title={`${d.label}: ${d.value} ${unit}`}>
            <span className="plan-bar-label">{d.label}</span>
            <span className="plan-bar-track">
              <span className="plan-bar-fill" style={{ width: `${(100 * d.value) / max}%` }} />
            </span>
            <span className="plan-bar-value">{d.value}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}

function PercentPair({ before, after }: { before: number | null; after: number | null }) {
  const w = (p: number | null) => `${Math.min(100, p ?? 0)}%`;
  return (
    <span className="plan-pair">
      <span className="plan-bar-track" title={`before: ${formatPercent(before, 1)}`}>
        <span className="plan-bar-fill before" style={{ width: w(before) }} />
      </span>
      <span className="plan-bar-track" title={`after: ${formatPercent(after, 1)}`}>
        <span className="plan-bar-fill" style={{ width: w(after) }} />
      </span>
      <span className="small">
        {formatPercent(before, 1)} → {formatPercent(after, 1)}
      </span>
    </span>
  );
}

export function UtilizationView({ u }: { u: Utilization }) {
  const rows = totalUsage(u);
  const nodes = changedNodes(u);
  return (
    <section className="panel" aria-label="Utilization before and after">
      <h2>Requests against allocatable, before and after</h2>
      <p className="small muted">Grey: before the plan; blue: after it.</p>
      <table className="data">
        <tbody>
          {rows.map((r) => (
            <tr key={r.resource}>
              <th scope="row">{r.label}</th>
              <td>
                <PercentPair before={r.before} after={r.after} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {nodes.length > 0 ? (
        <details>
          <summary>
            CPU on the {plural(nodes.length, "node")} that changed most
          </summary>
          <table className="data">
            <tbody>
              {nodes.map((n) => (
                <tr key={n.node}>
                  <th scope="row">{n.node}</th>
                  <td>
                    <PercentPair before={n.before} after={n.after} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
    </section>
  );
}

/** A pod of a plan's replay: its cycle in the usual cycle view, and Why here?. */
export function PodLinks({ replay, pod }: { replay: PlanReplay | undefined; pod: string }) {
  const [ns, name] = splitPod(pod);
  const seq = useLoader<number | null>(replay ? `seq-${replay.replay}-${pod}` : null, async (signal) => {
    const page = await api.get<Page<{ seq: number }>>(`/api/v1/replays/${replay!.replay}/cycles/${qs({ pod })}`, { signal });
    return page.results.length ? page.results[page.results.length - 1].seq : null;
  });
  const { reload } = seq;
  const waiting = replay !== undefined && seq.data === null;
  useEffect(() => {
    // the plan's replay may still be running: look again until its cycle is stored
    if (!waiting || seq.loading) return;
    const t = setTimeout(reload, 2000);
    return () => clearTimeout(t);
  }, [waiting, reload, seq.loading]);
  if (!replay) return <span className="small muted">(not replayed)</span>;
  return (
    <span className="row" style={{ gap: 8 }}>
      {seq.data != null ? <Link to={`/replays/${replay.replay}/cycles/${seq.data}`}>cycle</Link> : null}
      <Link to={`/replays/${replay.replay}/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`}>Why here?</Link>
    </span>
  );
}

function CapacityView({ result, replay }: { result: CapacityResult; replay: PlanReplay | undefined }) {
  const stop = result.stop;
  const verdicts = stop ? Object.entries(stop.nodes) : [];
  return (
    <>
      <section className="panel">
        <h2>
          {result.replicas} more {result.replicas === 1 ? "copy fits" : "copies fit"}
        </h2>
        {result.pods.length > 1 ? (
          <p className="muted">
            {result.order}: {result.pods.map((p) => `${p.pod} ${p.replicas}`).join(", ")}
          </p>
        ) : null}
        <div className="plan-charts">
          <BarChart data={topBars(result.perZone)} label="Copies per zone" unit="copies" />
          <BarChart data={topBars(result.perNode)} label="Copies per node" unit="copies" />
        </div>
      </section>
      {stop ? (
        <section className="panel">
          <h2>Why not one more</h2>
          {stop.reason === "max" ? (
            <p>Every copy fit up to the limit of {result.max}.</p>
          ) : (
            <>
              <p>
                The next copy, <code>{stop.pod}</code>, is {stop.result}:{" "}
                {stop.pod ? <PodLinks replay={replay} pod={stop.pod} /> : null}
              </p>
              <p className="plan-message">{stop.message}</p>
              {verdicts.length > 0 ? (
                <details>
                  <summary>Every node's verdict ({verdicts.length})</summary>
                  <table className="data">
                    <tbody>
                      {verdicts.slice(0, 200).map(([node, v]) => (
                        <tr key={node}>
                          <th scope="row">{node}</th>
                          <td>{v}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </details>
              ) : null}
            </>
          )}
        </section>
      ) : null}
      {result.utilization ? <UtilizationView u={result.utilization} /> : null}
    </>
  );
}

function DrainView({ result, replay }: { result: DrainResult; replay: PlanReplay | undefined }) {
  const s = result.summary;
  return (
    <>
      <section className="panel">
        <h2>
          Drain {result.nodes.join(", ")}: {s.recreated} recreated, {s.unschedulable} unschedulable
        </h2>
        <p className="muted">
          {plural(s.pods, "pod")}: {s.evicted} evicted, {s.deleted} deleted without a controller, {s.stay} stay.
        </p>
        {result.pods.length === 0 ? (
          <Empty>No pod runs on these nodes.</Empty>
        ) : (
          <div className="table-wrap">
            <table className="data">
              <thead>
                <tr>
                  <th>Pod</th>
                  <th>Node</th>
                  <th>What happens</th>
                  <th>Recreated as</th>
                  <th>Result</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {result.pods.map((o) => (
                  <tr key={o.pod} className={o.result && o.result !== "Scheduled" ? "plan-bad" : undefined}>
                    <td>{o.pod}</td>
                    <td>{o.node}</td>
                    <td>
                      {o.action}
                      {o.reason ? <div className="small muted">{o.reason}</div> : null}
                    </td>
                    <td>{o.replacement ?? ""}</td>
                    <td>
                      {o.result ? `${o.result}${o.selectedNode ? ` on ${o.selectedNode}` : ""}` : ""}
                      {o.result && o.result !== "Scheduled" && o.message ? <div className="small">{o.message}</div> : null}
                    </td>
                    <td>{o.replacement ? <PodLinks replay={replay} pod={o.replacement} /> : null}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {result.budgets.some((b) => b.evicted.length || b.blocked.length) ? (
          <>
            <h2>PodDisruptionBudgets</h2>
            <ul>
              {result.budgets
                .filter((b) => b.evicted.length || b.blocked.length)
                .map((b) => (
                  <li key={b.name}>
                    {b.name}: {b.violated ? "violated" : "respected"} (healthy {b.currentHealthy} of {b.desiredHealthy} desired;{" "}
                    {b.evicted.length} evicted, {b.blocked.length} blocked)
                  </li>
                ))}
            </ul>
          </>
        ) : null}
      </section>
      {result.utilization ? <UtilizationView u={result.utilization} /> : null}
    </>
  );
}

function TemplateView({ t, replay }: { t: ScaleUpTemplate; replay: PlanReplay | undefined }) {
  const verdict =
    t.nodesNeeded !== null
      ? `${plural(t.nodesNeeded, "node")} ${t.nodesNeeded === 1 ? "makes" : "make"} all ${t.pendingPods} pending pods schedulable`
      : `${plural(t.nodesAdded, "node")} added: ${t.scheduled} of ${t.pendingPods} pending pods schedulable (${t.stop})`;
  return (
    <section className="panel">
      <h2>
        {t.template}: {verdict}
      </h2>
      <BarChart
        data={t.steps.map((s) => ({ label: `${plural(s.nodes, "node")} added`, value: s.scheduled }))}
        label="Pending pods scheduled"
        unit="pods"
      />
      {t.helpless.length > 0 ? (
        <>
          <h3>{t.stop === "no-progress" ? "Pods no number of such nodes helps" : "Pods still pending"}</h3>
          <table className="data">
            <tbody>
              {t.helpless.map((h) => (
                <tr key={h.pod}>
                  <th scope="row">{h.pod}</th>
                  <td>{h.why}</td>
                  <td>
                    <PodLinks replay={replay} pod={h.pod} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      {t.utilization ? <UtilizationView u={t.utilization} /> : null}
    </section>
  );
}

function ScaleUpView({ result, replays }: { result: ScaleUpResult; replays: PlanReplay[] }) {
  return (
    <>
      {result.templates.length > 1 ? (
        <section className="panel">
          <h2>Side by side</h2>
          <table className="data">
            <thead>
              <tr>
                <th>Template</th>
                <th>Nodes needed</th>
                <th>Scheduled</th>
                <th>Stopped</th>
              </tr>
            </thead>
            <tbody>
              {result.templates.map((t) => (
                <tr key={t.template}>
                  <td>{t.template}</td>
                  <td>{t.nodesNeeded ?? "–"}</td>
                  <td>
                    {t.scheduled} of {t.pendingPods}
                  </td>
                  <td>{t.stop}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
      {result.templates.map((t, i) => (
        <TemplateView key={t.template} t={t} replay={replays[i]} />
      ))}
    </>
  );
}

function PlanResultView({ plan }: { plan: Plan }) {
  const r = plan.result;
  if (!r) return null;
  if (r.kind === "CapacityPlan") return <CapacityView result={r} replay={plan.replays[0]} />;
  if (r.kind === "DrainPlan") return <DrainView result={r} replay={plan.replays[0]} />;
  return <ScaleUpView result={r} replays={plan.replays} />;
}

export function PlanPage() {
  const { id = "" } = useParams();
  const plan = useLoader<Plan>(`plan-${id}`, (signal) => api.get<Plan>(planUrl(id), { signal }));
  usePolling(plan.data !== undefined && isActive(plan.data), plan.reload, POLL_MS);
  return (
    <div className="stack">
      <Async state={plan} label="Loading the plan…">
        {(p) => (
          <>
            <div className="page-head">
              <div className="grow">
                <h1>{p.name || `${p.kind} plan`}</h1>
                <p className="muted">
                  {p.kind} on <Link to={`/snapshots/${p.snapshot}`}>{p.snapshot_name}</Link> · {formatDate(p.created)}{" "}
                  <StatusBadge status={p.status} />
                </p>
              </div>
              <div className="row" style={{ gap: 8 }}>
                {p.replays.map((r) => (
                  <Link key={r.replay} className="button" to={`/replays/${r.replay}`}>
                    {p.replays.length > 1 ? `Replay (${r.label})` : "Open the plan's replay"}
                  </Link>
                ))}
                <Link className="button" to="/plans">
                  All plans
                </Link>
              </div>
            </div>
            {p.error ? <ErrorView error={new Error(p.error)} title={p.status === "failed" ? "The plan failed" : "Note"} /> : null}
            {isActive(p) ? <p className="muted">Replaying…</p> : null}
            <PlanResultView plan={p} />
          </>
        )}
      </Async>
    </div>
  );
}

function emptyForm(kind: PlanKind): PlanForm {
  return {
    kind,
    snapshot: "",
    pods: [""],
    order: "round-robin",
    max: "",
    nodes: "",
    selector: "",
    respectPdb: false,
    templates: "",
    templateManifest: "",
    maxNodes: "10",
    allNodes: false,
  };
}

export function NewPlan({ snapshots }: { snapshots: Snapshot[] }) {
  const navigate = useNavigate();
  const [form, setForm] = useState<PlanForm>(() => ({ ...emptyForm("capacity"), snapshot: snapshots[0]?.id ?? "" }));
  const [problem, setProblem] = useState<{ field: string; problem: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<PlanForm>) => setForm((f) => ({ ...f, ...patch }));
  const submit = async () => {
    const q = toQuestion(form);
    if ("problem" in q) {
      setProblem(q);
      return;
    }
    setProblem(null);
    setBusy(true);
    try {
      const plan = await api.post<Plan>(PLANS_URL, q.question);
      navigate(`/plans/${plan.id}`);
    } catch (e) {
      const err = e as ApiError;
      const details = (err.details ?? {}) as { field?: string };
      setProblem({ field: details.field ?? "", problem: err.message });
    } finally {
      setBusy(false);
    }
  };
  const help = KINDS.find((k) => k.kind === form.kind)?.help;
  return (
    <section className="panel" aria-label="New plan">
      <h2>Ask a question</h2>
      <div className="segmented" role="group" aria-label="Question">
        {KINDS.map((k) => (
          <button key={k.kind} type="button" aria-pressed={form.kind === k.kind} onClick={() => set({ kind: k.kind })}>
            {k.label}
          </button>
        ))}
      </div>
      <p className="muted">{help}</p>
      <div className="form-grid">
        <label className="field" htmlFor="plan-snapshot">
          Snapshot
        </label>
        <select id="plan-snapshot" value={form.snapshot} onChange={(e) => set({ snapshot: e.target.value })}>
          {snapshots.length === 0 ? <option value="">(upload a snapshot first)</option> : null}
          {snapshots.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name || s.id.slice(0, 8)} ({s.node_count} nodes)
            </option>
          ))}
        </select>
        {form.kind === "capacity" ? (
          <>
            {form.pods.map((text, i) => (
              <PodField
                key={i}
                index={i}
                text={text}
                onChange={(v) => set({ pods: form.pods.map((p, j) => (j === i ? v : p)) })}
                onRemove={form.pods.length > 1 ? () => set({ pods: form.pods.filter((_, j) => j !== i) }) : undefined}
              />
            ))}
            <span />
            <div className="row" style={{ gap: 12 }}>
              <button type="button" onClick={() => set({ pods: [...form.pods, ""] })}>
                Add a pod (an application)
              </button>
              {form.pods.length > 1 ? (
                <label className="choice">
                  <span>Order</span>
                  <select value={form.order} onChange={(e) => set({ order: e.target.value as PlanForm["order"] })}>
                    <option value="round-robin">round-robin (one of each per round)</option>
                    <option value="in-order">in order (all of the first, then the next)</option>
                  </select>
                </label>
              ) : null}
            </div>
            <label className="field" htmlFor="plan-max">
              At most
            </label>
            <input id="plan-max" inputMode="numeric" placeholder="100000" value={form.max} onChange={(e) => set({ max: e.target.value })} />
          </>
        ) : null}
        {form.kind === "drain" ? (
          <>
            <label className="field" htmlFor="plan-nodes">
              Nodes
            </label>
            <input id="plan-nodes" placeholder="node-a, node-b" value={form.nodes} onChange={(e) => set({ nodes: e.target.value })} />
            <label className="field" htmlFor="plan-selector">
              or a label selector
            </label>
            <input id="plan-selector" placeholder="pool=old" value={form.selector} onChange={(e) => set({ selector: e.target.value })} />
            <span />
            <label className="choice">
              <input type="checkbox" checked={form.respectPdb} onChange={(e) => set({ respectPdb: e.target.checked })} />
              <span>Respect PodDisruptionBudgets (else evict and report the budgets broken)</span>
            </label>
          </>
        ) : null}
        {form.kind === "scale-up" ? (
          <>
            <label className="field" htmlFor="plan-templates">
              Clone nodes
            </label>
            <input
              id="plan-templates"
              placeholder="node-a (several: compared side by side)"
              value={form.templates}
              onChange={(e) => set({ templates: e.target.value })}
            />
            <label className="field" htmlFor="plan-template-manifest">
              or a Node manifest
            </label>
            <textarea
              id="plan-template-manifest"
              rows={6}
              spellCheck={false}
              value={form.templateManifest}
              onChange={(e) => set({ templateManifest: e.target.value })}
            />
            <label className="field" htmlFor="plan-max-nodes">
              At most
            </label>
            <input id="plan-max-nodes" inputMode="numeric" value={form.maxNodes} onChange={(e) => set({ maxNodes: e.target.value })} />
          </>
        ) : null}
        <span />
        <label className="choice">
          <input type="checkbox" checked={form.allNodes} onChange={(e) => set({ allNodes: e.target.checked })} />
          <span>Evaluate every node (no sampling)</span>
        </label>
      </div>
      {problem ? (
        <p className="error-box" role="alert">
          {problem.field ? <strong>{problem.field}: </strong> : null}
          {problem.problem}
        </p>
      ) : null}
      <button type="button" className="primary" onClick={submit} disabled={busy}>
        {busy ? "Asking…" : "Plan"}
      </button>
    </section>
  );
}

function PodField({ index, text, onChange, onRemove }: { index: number; text: string; onChange: (v: string) => void; onRemove?: () => void }) {
  const id = `plan-pod-${index}`;
  return (
    <>
      <label className="field" htmlFor={id}>
        Pod {index + 1} (YAML or JSON)
      </label>
      <div>
        <textarea id={id} rows={8} spellCheck={false} value={text} onChange={(e) => onChange(e.target.value)} />
        {onRemove ? (
          <button type="button" className="small" onClick={onRemove}>
            Remove
          </button>
        ) : null}
      </div>
    </>
  );
}

export function PlansPage() {
  const snaps = useLoader<Snapshot[]>("snapshots", (signal) => fetchAll<Snapshot>("/api/v1/snapshots/", { signal, pageSize: 200 }));
  const plans = useLoader<PlanListItem[]>("plans", (signal) => fetchAll<PlanListItem>(PLANS_URL, { signal, pageSize: 200 }));
  usePolling(anyActive(plans.data), plans.reload, POLL_MS * 2);
  const columns: JobColumn<PlanListItem>[] = [
    { header: "Plan", cell: (p) => <JobLink job={p} base="/plans" /> },
    { header: "Question", cell: (p) => p.kind },
    { header: "Snapshot", cell: (p) => <Link to={`/snapshots/${p.snapshot}`}>{p.snapshot_name}</Link> },
    { header: "Status", cell: (p) => <StatusBadge status={p.status} /> },
    { header: "Answer", cell: (p) => p.headline || p.error },
    { header: "Asked", cell: (p) => formatDate(p.created) },
  ];
  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <h1>Plans</h1>
          <p className="muted">
            Capacity, drains and scale-ups answered by the scheduler itself: each plan is a replay, and each of its cycles opens in the
            cycle view.
          </p>
        </div>
      </div>
      <Async state={snaps} label="Loading snapshots…">
        {(items) => <NewPlan snapshots={items} />}
      </Async>
      <section className="panel">
        <h2>Plans</h2>
        <JobList state={plans} label="Loading plans…" empty="No plan yet." columns={columns} />
      </section>
    </div>
  );
}
