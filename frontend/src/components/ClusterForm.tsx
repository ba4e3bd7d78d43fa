import { useId, useState, type FormEvent, type ReactNode } from "react";
import { ApiError, api } from "../api/client";
import { clustersUrl, type KubeContexts, type LiveCluster } from "../api/live";
import { formatSize } from "../lib/format";
import { DropZone } from "./DropZone";
import "./ClusterForm.css";

type Source = "kubeconfig" | "path" | "in-cluster";
type ConfigSource = "default" | "uploaded" | "configmap";

/** The form field an API error detail belongs to. */
const FIELD_OF: Record<string, string> = {
  kubeconfig: "kubeconfig",
  kubeconfig_text: "kubeconfig",
  config: "config",
  config_file: "config",
  problems: "config",
};
const FIELDS = ["name", "source", "kubeconfig", "context", "path", "config_source", "config", "config_map", "config_map_key", "all_nodes", "enabled", "verify", "team"];

/** An API error's `details` by form field (`{"kubeconfig": [...]}`, `{"problems": [...]}` for a configuration). */
export function fieldErrors(err: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!(err instanceof ApiError) || !err.details || typeof err.details !== "object" || Array.isArray(err.details)) return out;
  for (const [key, value] of Object.entries(err.details as Record<string, unknown>)) {
    const field = FIELD_OF[key] ?? key;
    const list = Array.isArray(value) ? value.map(String) : typeof value === "string" ? [value] : [];
    if (list.length) out[field] = [...(out[field] ?? []), ...list];
  }
  return out;
}

function FieldError({ id, errors }: { id: string; errors?: string[] }) {
  if (!errors?.length) return null;
  return (
    <ul id={id} className="field-error" role="alert">
      {errors.map((e, k) => (
        <li key={k}>{e}</li>
      ))}
    </ul>
  );
}

function Radio<T extends string>({ name, value, current, onChange, children }: { name: string; value: T; current: T; onChange: (v: T) => void; children: ReactNode }) {
  return (
    <label className="choice">
      <input type="radio" name={name} value={value} checked={current === value} onChange={() => onChange(value)} />
      <span>{children}</span>
    </label>
  );
}

const bool = (b: boolean) => (b ? "true" : "false");

export function AddClusterForm({ onCreated, onCancel }: { onCreated: (c: LiveCluster) => void; onCancel?: () => void }) {
  const uid = useId();
  const fid = (f: string) => `${uid}-${f}`;
  const [name, setName] = useState("");
  const [source, setSource] = useState<Source>("kubeconfig");
  const [kubeFile, setKubeFile] = useState<File | null>(null);
  const [kubeText, setKubeText] = useState("");
  const [contexts, setContexts] = useState<KubeContexts | null>(null);
  const [contextsBusy, setContextsBusy] = useState(false);
  const [context, setContext] = useState("");
  const [path, setPath] = useState("");
  const [pathContext, setPathContext] = useState("");
  const [configSource, setConfigSource] = useState<ConfigSource>("default");
  const [configText, setConfigText] = useState("");
  const [configMap, setConfigMap] = useState("");
  const [configMapKey, setConfigMapKey] = useState("");
  const [allNodes, setAllNodes] = useState(true);
  const [verify, setVerify] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [ctxError, setCtxError] = useState<Error | null>(null);

  const errors = fieldErrors(error);
  // the contexts could not be read: why, next to the kubeconfig
  const kubeErrors = [...(errors.kubeconfig ?? []), ...(ctxError ? (fieldErrors(ctxError).kubeconfig ?? [ctxError.message]) : [])];
  const shownFields = new Set(["name", "source", "config_source", "all_nodes", "verify"]);
  if (source === "kubeconfig") ["kubeconfig", "context"].forEach((f) => shownFields.add(f));
  if (source === "path") ["path", "context"].forEach((f) => shownFields.add(f));
  if (configSource === "uploaded") shownFields.add("config");
  if (configSource === "configmap") ["config_map", "config_map_key"].forEach((f) => shownFields.add(f));
  // details the form cannot show next to a field are listed in the summary
  const elsewhere = Object.entries(errors).filter(([f]) => !shownFields.has(f) || !FIELDS.includes(f));
  const invalid = (f: string) => ((f === "kubeconfig" ? kubeErrors : errors[f])?.length ? { "aria-invalid": true, "aria-describedby": fid(`${f}-error`) } : {});

  const readContexts = async (file: File | null, text: string) => {
    setContexts(null);
    setContext("");
    setCtxError(null);
    if (!file && !text.trim()) return;
    setContextsBusy(true);
    setCtxError(null);
    try {
      let body: FormData | { kubeconfig_text: string };
      if (file) {
        body = new FormData();
        body.append("kubeconfig", file);
      } else {
        body = { kubeconfig_text: text };
      }
      const res = await api.post<KubeContexts>(`${clustersUrl}kubeconfig-contexts/`, body);
      setContexts(res);
      const usable = res.contexts.filter((c) => c.usable);
      const current = usable.find((c) => c.name === res.current);
      setContext((current ?? usable[0])?.name ?? "");
    } catch (e) {
      setCtxError(e as Error);
    } finally {
      setContextsBusy(false);
    }
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const fd = new FormData();
    if (name.trim()) fd.append("name", name.trim());
    fd.append("source", source);
    if (source === "kubeconfig") {
      if (kubeFile) fd.append("kubeconfig", kubeFile);
      else if (kubeText.trim()) fd.append("kubeconfig_text", kubeText);
      if (context) fd.append("context", context);
    } else if (source === "path") {
      fd.append("path", path.trim());
      if (pathContext.trim()) fd.append("context", pathContext.trim());
    }
    fd.append("config_source", configSource);
    if (configSource === "uploaded") fd.append("config", configText);
    if (configSource === "configmap") {
      fd.append("config_map", configMap.trim());
      if (configMapKey.trim()) fd.append("config_map_key", configMapKey.trim());
    }
    fd.append("all_nodes", bool(allNodes));
    fd.append("verify", bool(verify));
    try {
      const created = await api.post<LiveCluster>(clustersUrl, fd);
      onCreated(created);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="cluster-form stack" onSubmit={submit} aria-label="Add a cluster" noValidate>
      {error ? (
        <div className="error-box" role="alert" data-testid="form-error">
          <strong>The cluster was not added:</strong> {error.message}
          {elsewhere.length ? (
            <ul className="small" style={{ margin: "4px 0 0" }}>
              {elsewhere.map(([f, list]) => (
                <li key={f}>
                  <code>{f}</code>: {list.join("; ")}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}

      <div className="form-grid">
        <label className="field" htmlFor={fid("name")}>
          <span>Name</span>
        </label>
        <div>
          <input id={fid("name")} type="text" value={name} onChange={(e) => setName(e.target.value)} placeholder="default: the context's name" style={{ width: 320 }} {...invalid("name")} />
          <FieldError id={fid("name-error")} errors={errors.name} />
        </div>

        <span className="label" id={fid("source-label")}>
          Credentials
        </span>
        <div role="radiogroup" aria-labelledby={fid("source-label")} {...invalid("source")}>
          <div className="row" style={{ gap: 16 }}>
            <Radio name={fid("source")} value="kubeconfig" current={source} onChange={setSource}>
              Upload a kubeconfig
            </Radio>
            <Radio name={fid("source")} value="path" current={source} onChange={setSource}>
              A kubeconfig on the server
            </Radio>
            <Radio name={fid("source")} value="in-cluster" current={source} onChange={setSource}>
              In-cluster (SchedViz&apos;s ServiceAccount)
            </Radio>
          </div>
          <FieldError id={fid("source-error")} errors={errors.source} />
        </div>

        {source === "kubeconfig" ? (
          <>
            <span className="label" id={fid("kubeconfig-label")}>
              Kubeconfig
            </span>
            <div className="stack" style={{ gap: 6 }} {...invalid("kubeconfig")} aria-labelledby={fid("kubeconfig-label")} role="group">
              {kubeFile ? (
                <div className="row small">
                  <span>
                    <strong>{kubeFile.name}</strong> ({formatSize(kubeFile.size)})
                  </span>
                  <button
                    type="button"
                    className="small"
                    onClick={() => {
                      setKubeFile(null);
                      setContexts(null);
                      setContext("");
                    }}
                  >
                    Remove
                  </button>
                </div>
              ) : (
                <>
                  <DropZone
                    label="Choose a kubeconfig file"
                    title="Drop a kubeconfig here"
                    hint="Token, client certificate or basic auth. Exec plugins, auth-providers and file references are refused."
                    onFile={(f) => {
                      setKubeFile(f);
                      setKubeText("");
                      void readContexts(f, "");
                    }}
                  />
                  <label className="field">
                    <span>…or paste it</span>
                    <textarea
                      value={kubeText}
                      onChange={(e) => {
                        setKubeText(e.target.value);
                        setContexts(null);
                      }}
                      rows={5}
                      spellCheck={false}
                      className="mono"
                      placeholder="apiVersion: v1&#10;kind: Config&#10;…"
                      aria-label="Kubeconfig text"
                    />
                  </label>
                  <div>
                    <button type="button" className="small" disabled={!kubeText.trim() || contextsBusy} onClick={() => void readContexts(null, kubeText)}>
                      Read its contexts
                    </button>
                  </div>
                </>
              )}
              <FieldError id={fid("kubeconfig-error")} errors={kubeErrors} />
            </div>

            <span className="label" id={fid("context-label")}>
              Context
            </span>
            <div>
              {contextsBusy ? (
                <span className="small muted">Reading the contexts…</span>
              ) : contexts ? (
                <div role="radiogroup" aria-labelledby={fid("context-label")} className="contexts" {...invalid("context")}>
                  {contexts.contexts.map((c) => (
                    <label key={c.name} className={`context${c.usable ? "" : " unusable"}`} data-context={c.name}>
                      <input type="radio" name={fid("context")} value={c.name} checked={context === c.name} disabled={!c.usable} onChange={() => setContext(c.name)} />
                      <span>
                        <strong>{c.name}</strong>
                        {c.name === contexts.current ? <span className="badge grey" style={{ marginLeft: 6 }}>current</span> : null}
                        <span className="small muted mono" style={{ display: "block" }}>
                          {c.server || "no server"} · user {c.user || "–"}
                          {c.namespace ? ` · namespace ${c.namespace}` : ""}
                        </span>
                        {!c.usable && c.problem ? <span className="small problem">cannot be used: {c.problem}</span> : null}
                      </span>
                    </label>
                  ))}
                  {!contexts.contexts.some((c) => c.usable) ? <p className="small problem">No context of this kubeconfig can be used.</p> : null}
                </div>
              ) : (
                <span className="small muted">Upload or paste a kubeconfig to choose one of its contexts (default: its current context).</span>
              )}
              <FieldError id={fid("context-error")} errors={errors.context} />
            </div>
          </>
        ) : null}

        {source === "path" ? (
          <>
            <label className="field" htmlFor={fid("path")}>
              <span>Path</span>
            </label>
            <div>
              <input id={fid("path")} type="text" value={path} onChange={(e) => setPath(e.target.value)} placeholder="/etc/schedviz/kubeconfigs/prod.yaml" style={{ width: 420 }} className="mono" {...invalid("path")} />
              <div className="small muted">A kubeconfig on the SchedViz server, under SCHEDVIZ_KUBECONFIG_DIRS.</div>
              <FieldError id={fid("path-error")} errors={errors.path} />
            </div>
            <label className="field" htmlFor={fid("path-context")}>
              <span>Context</span>
            </label>
            <div>
              <input id={fid("path-context")} type="text" value={pathContext} onChange={(e) => setPathContext(e.target.value)} placeholder="default: the current one" style={{ width: 240 }} {...invalid("context")} />
              <FieldError id={fid("context-error")} errors={errors.context} />
            </div>
          </>
        ) : null}

        <span className="label" id={fid("config-label")}>
          Scheduler configuration
        </span>
        <div>
          <div role="radiogroup" aria-labelledby={fid("config-label")} className="row" style={{ gap: 16 }}>
            <Radio name={fid("config-source")} value="default" current={configSource} onChange={setConfigSource}>
              v1.35 defaults
            </Radio>
            <Radio name={fid("config-source")} value="uploaded" current={configSource} onChange={setConfigSource}>
              Uploaded
            </Radio>
            <Radio name={fid("config-source")} value="configmap" current={configSource} onChange={setConfigSource}>
              From a ConfigMap
            </Radio>
          </div>
          <FieldError id={fid("config_source-error")} errors={errors.config_source} />
          {configSource === "uploaded" ? (
            <div className="stack" style={{ marginTop: 6 }}>
              <textarea
                value={configText}
                onChange={(e) => setConfigText(e.target.value)}
                rows={6}
                spellCheck={false}
                className="mono"
                aria-label="KubeSchedulerConfiguration"
                placeholder="apiVersion: kubescheduler.config.k8s.io/v1&#10;kind: KubeSchedulerConfiguration&#10;…"
                style={{ width: "100%" }}
                {...invalid("config")}
              />
              <label className="small">
                …or read a file:{" "}
                <input
                  type="file"
                  accept=".yaml,.yml,.json"
                  onChange={(e) => {
                    const f = e.target.files?.[0];
                    if (f) void f.text().then(setConfigText);
                    e.target.value = "";
                  }}
                />
              </label>
              <FieldError id={fid("config-error")} errors={errors.config} />
            </div>
          ) : null}
          {configSource === "configmap" ? (
            <div className="row" style={{ marginTop: 6, alignItems: "flex-start" }}>
              <label className="field">
                <span>ConfigMap (namespace/name)</span>
                <input type="text" value={configMap} onChange={(e) => setConfigMap(e.target.value)} placeholder="kube-system/kube-scheduler-config" style={{ width: 280 }} {...invalid("config_map")} />
                <FieldError id={fid("config_map-error")} errors={errors.config_map} />
              </label>
              <label className="field">
                <span>Key (when it has several)</span>
                <input type="text" value={configMapKey} onChange={(e) => setConfigMapKey(e.target.value)} placeholder="config.yaml" style={{ width: 180 }} {...invalid("config_map_key")} />
                <FieldError id={fid("config_map_key-error")} errors={errors.config_map_key} />
              </label>
            </div>
          ) : null}
        </div>

        <span className="label">Replays</span>
        <div className="stack" style={{ gap: 4 }}>
          <label className="choice">
            <input type="checkbox" checked={allNodes} onChange={(e) => setAllNodes(e.target.checked)} {...invalid("all_nodes")} />
            <span>
              Filter and score every node <span className="small muted">(otherwise sample nodes as kube-scheduler does; a divergence may then be sampling)</span>
            </span>
          </label>
          <FieldError id={fid("all_nodes-error")} errors={errors.all_nodes} />
          <label className="choice">
            <input type="checkbox" checked={verify} onChange={(e) => setVerify(e.target.checked)} />
            <span>Connect to the cluster (and read the ConfigMap) before saving</span>
          </label>
        </div>
      </div>

      <div className="row">
        <button type="submit" className="primary" disabled={busy || contextsBusy}>
          {busy ? "Adding…" : "Add cluster"}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
