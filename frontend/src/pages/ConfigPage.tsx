import { useEffect, useMemo, useRef, useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import { ApiError, api, fetchAll } from "../api/client";
import type { ConfigValidation, Configuration, Replay, Snapshot } from "../api/types";
import { useLoader } from "../api/useApi";
import { Async, Empty, ErrorView, Loading } from "../components/Feedback";
import { LineEditor, type LineEditorHandle } from "../components/LineEditor";
import { lineForPath, parseConfigProblem } from "../lib/problems";
import { formatDate } from "../lib/format";

export const TEMPLATE = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesBalancedAllocation
        weight: 2
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
`;

export function ValidationResult({
  result,
  text,
  onJump,
}: {
  result: ConfigValidation;
  text: string;
  onJump: (line: number) => void;
}) {
  if (!result.valid) {
    return (
      <div className="error-box" role="alert">
        <strong>
          {result.problems.length} problem{result.problems.length === 1 ? "" : "s"}
        </strong>
        <ul className="problems" aria-label="Configuration problems">
          {result.problems.map((p, k) => {
            const cp = parseConfigProblem(p);
            const line = cp.path ? lineForPath(text, cp.path) : null;
            return (
              <li key={k} className="small">
                {cp.path ? (
                  <span className="where">
                    <code>{cp.path}</code>
                    {line ? (
                      <>
                        {" "}
                        (<button type="button" className="linklike small" onClick={() => onJump(line)} aria-label={`Go to line ${line}`}>
                          line {line}
                        </button>)
                      </>
                    ) : null}
                    :{" "}
                  </span>
                ) : null}
                {cp.message}
              </li>
            );
          })}
        </ul>
      </div>
    );
  }
  return (
    <div className="notice" role="status">
      <strong>Valid.</strong>{" "}
      {result.profiles?.length === 1 ? "1 profile" : `${result.profiles?.length ?? 0} profiles`}
      {result.percentageOfNodesToScore ? ` · percentageOfNodesToScore ${result.percentageOfNodesToScore}` : ""}
      {(result.profiles ?? []).map((p) => (
        <details key={p.schedulerName} style={{ marginTop: 6 }}>
          <summary>
            <strong>{p.schedulerName}</strong>: score{" "}
            {(p.plugins.score ?? p.plugins.Score ?? []).map((s) => `${s.name}×${s.weight}`).join(", ") || "none"}
          </summary>
          <table className="data small">
            <tbody>
              {Object.entries(p.plugins).map(([point, refs]) => (
                <tr key={point}>
                  <th>{point}</th>
                  <td>{refs.map((r) => (r.weight ? `${r.name} (${r.weight})` : r.name)).join(", ") || "–"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ))}
    </div>
  );
}

function WhatIf({ config, dirty }: { config: Configuration | null; dirty: boolean }) {
  const navigate = useNavigate();
  const snaps = useLoader<Snapshot[]>("snapshots", (signal) => fetchAll<Snapshot>("/api/v1/snapshots/", { signal, pageSize: 200 }));
  const [snapshot, setSnapshot] = useState("");
  const [allNodes, setAllNodes] = useState(true);
  const [baseline, setBaseline] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const snapId = snapshot || snaps.data?.[0]?.id || "";
  const replays = useLoader<Replay[]>(snapId ? `replays-of-${snapId}` : null, (signal) =>
    fetchAll<Replay>(`/api/v1/replays/?snapshot=${snapId}`, { signal, pageSize: 100 }),
  );
  const baselines = (replays.data ?? []).filter((r) => r.status === "succeeded" && r.configuration !== config?.id);
  const run = async () => {
    if (!config || !snapId) return;
    setBusy(true);
    setError(null);
    try {
      const r = await api.post<Replay>("/api/v1/replays/", {
        snapshot: snapId,
        configuration: config.id,
        all_nodes: allNodes,
        name: `What if: ${config.name || "configuration"}`,
      });
      navigate(baseline ? `/compare/${baseline}/${r.id}` : `/replays/${r.id}`);
    } catch (e) {
      setError(e as Error);
      setBusy(false);
    }
  };
  return (
    <section className="panel" aria-labelledby="whatif-title">
      <h2 id="whatif-title">What if?</h2>
      <p className="small muted">Replay a snapshot under this configuration, and compare it with a replay under the current one.</p>
      {snaps.error ? <ErrorView error={snaps.error} onRetry={snaps.reload} /> : null}
      <div className="row" style={{ alignItems: "flex-end" }}>
        <label className="field">
          <span>Snapshot</span>
          <select value={snapId} onChange={(e) => setSnapshot(e.target.value)} style={{ maxWidth: 260 }}>
            {(snaps.data ?? []).map((s) => (
              <option key={s.id} value={s.id}>
                {s.name || s.id.slice(0, 8)} ({s.pending_count} pending · {s.id.slice(0, 6)})
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Compare with (baseline)</span>
          <select value={baseline} onChange={(e) => setBaseline(e.target.value)} style={{ maxWidth: 260 }}>
            <option value="">No comparison</option>
            {baselines.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name || r.id.slice(0, 8)}
              </option>
            ))}
          </select>
        </label>
        <label className="row" style={{ gap: 6 }}>
          <input type="checkbox" checked={allNodes} onChange={(e) => setAllNodes(e.target.checked)} />
          Every node
        </label>
        <button type="button" className="primary" disabled={!config || dirty || busy || !snapId} onClick={run}>
          {busy ? "Starting…" : "Run what-if replay"}
        </button>
      </div>
      {!config ? <p className="small muted">Save the configuration first.</p> : dirty ? <p className="small muted">Save your changes first.</p> : null}
      {error ? <ErrorView error={error} title="Could not start the replay" /> : null}
    </section>
  );
}

export function ConfigPage() {
  const { id } = useParams();
  const navigate = useNavigate();
  const list = useLoader<Configuration[]>("configs", (signal) => fetchAll<Configuration>("/api/v1/configurations/", { signal, pageSize: 200 }));
  const current = useLoader<Configuration | null>(id ? `config-${id}` : "config-new", async (signal) =>
    id ? api.get<Configuration>(`/api/v1/configurations/${id}/`, { signal }) : null,
  );
  const [name, setName] = useState("");
  const [text, setText] = useState(TEMPLATE);
  const [saved, setSaved] = useState<{ name: string; text: string } | null>(null);
  const [validation, setValidation] = useState<ConfigValidation | null>(null);
  const [validating, setValidating] = useState(false);
  const [saveError, setSaveError] = useState<Error | null>(null);
  const [saving, setSaving] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const editor = useRef<LineEditorHandle>(null);

  useEffect(() => {
    if (current.data === undefined) return;
    const c = current.data;
    setName(c?.name ?? "");
    setText(c?.text ?? TEMPLATE);
    setSaved(c ? { name: c.name, text: c.text } : null);
    setSaveError(null);
    setNotice(null);
  }, [current.data]);

  // validate as you type (debounced); a newer text aborts the older request
  useEffect(() => {
    if (!text.trim()) {
      setValidation(null);
      return;
    }
    const ctrl = new AbortController();
    const t = setTimeout(() => {
      setValidating(true);
      api
        .post<ConfigValidation>("/api/v1/configurations/validate/", { text }, { signal: ctrl.signal })
        .then((v) => setValidation(v))
        .catch((e: Error) => {
          if (e.name !== "AbortError") setValidation({ valid: false, problems: [e.message] });
        })
        .finally(() => {
          if (!ctrl.signal.aborted) setValidating(false);
        });
    }, 500);
    return () => {
      clearTimeout(t);
      ctrl.abort();
    };
  }, [text]);

  const badLines = useMemo(() => {
    if (!validation || validation.valid) return [];
    return validation.problems
      .map((p) => parseConfigProblem(p).path)
      .filter(Boolean)
      .map((path) => lineForPath(text, path))
      .filter((l): l is number => l !== null);
  }, [validation, text]);

  const dirty = !saved || saved.name !== name || saved.text !== text;
  const save = async () => {
    setSaving(true);
    setSaveError(null);
    setNotice(null);
    try {
      const body = { name: name.trim() || "Untitled configuration", text };
      const c = id
        ? await api.patch<Configuration>(`/api/v1/configurations/${id}/`, body)
        : await api.post<Configuration>("/api/v1/configurations/", body);
      setSaved({ name: c.name, text: c.text });
      setName(c.name);
      setNotice("Saved.");
      list.reload();
      if (!id) navigate(`/configurations/${c.id}`, { replace: true });
    } catch (e) {
      const err = e as Error;
      if (err instanceof ApiError && err.code === "invalid_config") {
        const problems = (err.details as { problems?: string[] } | null)?.problems ?? [err.message];
        setValidation({ valid: false, problems });
      }
      setSaveError(err);
    } finally {
      setSaving(false);
    }
  };
  const remove = async () => {
    if (!id || !window.confirm(`Delete configuration “${name}”?`)) return;
    try {
      await api.del(`/api/v1/configurations/${id}/`);
      list.reload();
      navigate("/configurations");
    } catch (e) {
      setSaveError(e as Error);
    }
  };

  return (
    <div className="stack">
      <div className="page-head">
        <div className="grow">
          <h1>Scheduler configurations</h1>
          <p className="muted">
            A <code>KubeSchedulerConfiguration</code> (<code>kubescheduler.config.k8s.io/v1</code>), checked as kube-scheduler v1.35
            checks it.
          </p>
        </div>
      </div>
      <div style={{ display: "grid", gridTemplateColumns: "240px minmax(0, 1fr)", gap: 12, alignItems: "start" }}>
        <nav className="panel" aria-label="Saved configurations">
          <div className="row" style={{ marginBottom: 6 }}>
            <h2 style={{ margin: 0, flex: 1 }}>Saved</h2>
            <Link className="button small" to="/configurations">
              New
            </Link>
          </div>
          <Async state={list} label="Loading…">
            {(items) =>
              items.length === 0 ? (
                <Empty>None yet.</Empty>
              ) : (
                <ul style={{ listStyle: "none", padding: 0, margin: 0 }}>
                  {items.map((c) => (
                    <li key={c.id} style={{ padding: "4px 0", borderBottom: "1px solid var(--line)" }}>
                      <Link to={`/configurations/${c.id}`} aria-current={c.id === id ? "page" : undefined} style={{ fontWeight: c.id === id ? 700 : 400 }}>
                        {c.name || c.id.slice(0, 8)}
                      </Link>
                      <div className="small muted">{formatDate(c.updated)}</div>
                    </li>
                  ))}
                </ul>
              )
            }
          </Async>
        </nav>
        <div className="stack">
          {current.error ? <ErrorView error={current.error} title="Could not load the configuration" onRetry={current.reload} /> : null}
          {current.data === undefined && !current.error ? <Loading /> : null}
          <section className="panel" aria-labelledby="editor-title">
            <h2 id="editor-title" className="sr-only">
              Editor
            </h2>
            <div className="row" style={{ marginBottom: 8, alignItems: "flex-end" }}>
              <label className="field" style={{ flex: "1 1 260px" }}>
                <span>Name</span>
                <input type="text" value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. bin-packing" />
              </label>
              <button type="button" className="primary" onClick={save} disabled={saving || !dirty}>
                {saving ? "Saving…" : id ? "Save changes" : "Save"}
              </button>
              {id ? (
                <button type="button" className="danger" onClick={remove}>
                  Delete
                </button>
              ) : null}
              <span className="small muted" role="status">
                {validating ? "checking…" : notice ?? (dirty && saved ? "unsaved changes" : "")}
              </span>
            </div>
            <LineEditor ref={editor} value={text} onChange={setText} badLines={badLines} label="KubeSchedulerConfiguration (YAML or JSON)" height={340} />
            <div style={{ marginTop: 8 }} aria-live="polite">
              {validation ? <ValidationResult result={validation} text={text} onJump={(l) => editor.current?.goToLine(l)} /> : null}
            </div>
            {saveError && !(saveError instanceof ApiError && saveError.code === "invalid_config") ? (
              <ErrorView error={saveError} title="Could not save" />
            ) : null}
          </section>
          <WhatIf config={id && current.data ? current.data : null} dirty={dirty} />
        </div>
      </div>
    </div>
  );
}
