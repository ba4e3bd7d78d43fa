import type { ReactNode } from "react";
import { Link } from "react-router-dom";
import type { LiveComparison as Comparison, LiveExplanationItem } from "../api/live";
import { formatDate } from "../lib/format";
import { ResultBadge } from "./Badges";
import { AgreementBadge, CodeChip } from "./LiveBadges";

const TRIGGER_SOURCE: Record<string, string> = {
  pod: "the pod's update",
  event: "a Scheduled event (the pod's update had not come)",
  relist: "a relist after a watch gap",
};

const LIST_MAX = 12;

function isPrimitive(v: unknown): v is string | number | boolean | null {
  return v === null || ["string", "number", "boolean"].includes(typeof v);
}

function text(v: string | number | boolean | null): string {
  if (v === null) return "–";
  if (typeof v === "number" && Number.isFinite(v) && !Number.isInteger(v)) return String(Math.round(v * 1000) / 1000);
  return String(v);
}

function signed(n: number): string {
  return n > 0 ? `+${text(n)}` : text(n);
}

/** Words for a camelCase key ("winnerTotal" → "winner total"). */
export function keyWords(k: string): string {
  return k.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
}

/** One value of an explanation's details, whatever its shape (lists are shortened, numbers by name are tabulated). */
export function DetailValue({ value, depth = 0 }: { value: unknown; depth?: number }): ReactNode {
  if (isPrimitive(value)) return <span className="mono">{text(value)}</span>;
  if (Array.isArray(value)) {
    if (!value.length) return <span className="muted">none</span>;
    if (value.every(isPrimitive)) {
      const shown = value.slice(0, LIST_MAX).map((v) => text(v as string | number | boolean | null));
      return (
        <span className="node-list">
          {shown.join(", ")}
          {value.length > LIST_MAX ? ` and ${value.length - LIST_MAX} more` : ""}
        </span>
      );
    }
    return (
      <ul className="detail-list">
        {value.slice(0, LIST_MAX).map((v, k) => (
          <li key={k}>
            <DetailValue value={v} depth={depth + 1} />
          </li>
        ))}
        {value.length > LIST_MAX ? <li className="muted">and {value.length - LIST_MAX} more</li> : null}
      </ul>
    );
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.length) return <span className="muted">none</span>;
    if (entries.every(([, v]) => typeof v === "number")) {
      return (
        <span className="mono">
          {entries
            .sort((a, b) => Math.abs(b[1] as number) - Math.abs(a[1] as number))
            .map(([k, v]) => `${k} ${signed(v as number)}`)
            .join(", ")}
        </span>
      );
    }
    if (depth > 2) return <code>{JSON.stringify(value)}</code>;
    return <DetailList details={value as Record<string, unknown>} depth={depth + 1} />;
  }
  return <span className="muted">–</span>;
}

export function DetailList({ details, depth = 0 }: { details: Record<string, unknown>; depth?: number }) {
  return (
    <dl className="kv details-kv">
      {Object.entries(details).map(([k, v]) => (
        <div key={k} style={{ display: "contents" }}>
          <dt>{keyWords(k)}</dt>
          <dd>
            <DetailValue value={v} depth={depth} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function ExplanationItem({ item, main }: { item: LiveExplanationItem; main: boolean }) {
  const details = item.details && Object.keys(item.details).length ? item.details : null;
  return (
    <li className={`explanation${main ? " main" : ""}`} data-testid="explanation">
      <div className="row" style={{ gap: 8, alignItems: "baseline", flexWrap: "nowrap" }}>
        <CodeChip code={item.code} />
        <span>{item.message}</span>
      </div>
      {details ? (
        <details className="small">
          <summary>details</summary>
          <DetailList details={details} />
        </details>
      ) : null}
    </li>
  );
}

function Side({
  title,
  result,
  node,
  message,
  extra,
  nodeHref,
}: {
  title: string;
  result: string | null;
  node: string | null;
  message: string | null;
  extra?: ReactNode;
  nodeHref?: (node: string) => string;
}) {
  return (
    <div className="side" role="group" aria-label={title}>
      <div className="small muted">{title}</div>
      <div className="row" style={{ gap: 6 }}>
        {result ? <ResultBadge result={result} /> : <span className="badge outline">no result</span>}
        {node ? (
          <strong className="mono" data-testid="side-node">
            {nodeHref ? (
              <Link to={nodeHref(node)} title={`${node} in the node table`}>
                {node}
              </Link>
            ) : (
              node
            )}
          </strong>
        ) : null}
        {extra ? <span className="small muted">{extra}</span> : null}
      </div>
      {message ? <div className="message small">{message}</div> : null}
    </div>
  );
}

export interface LiveComparisonProps {
  live: Comparison;
  /** Links to the cycle and to its Why here? (absent: not shown). */
  cycleHref?: string;
  whyHref?: string;
  heading?: string;
  /** Node names link there (e.g. the node's row and detail in the cycle's node table). */
  nodeHref?: (node: string) => string;
}

/** What the cluster decided against what the replay decided, the agreement and why they differ. */
export function LiveComparisonPanel({ live, cycleHref, whyHref, nodeHref, heading = "The cluster against the replay" }: LiveComparisonProps) {
  const tied = live.replay.tiedCount ?? 0;
  return (
    <section className="panel live-comparison" aria-labelledby={`cmp-${live.seq}`} data-agreement={live.agreement}>
      <div className="row" style={{ marginBottom: 8 }}>
        <h2 id={`cmp-${live.seq}`} style={{ margin: 0 }}>
          {heading}
        </h2>
        <AgreementBadge agreement={live.agreement} />
        {live.divergence ? <CodeChip code={live.divergence} /> : null}
        <span className="spacer" style={{ flex: 1 }} />
        {cycleHref ? (
          <Link className="button small" to={cycleHref}>
            Cycle {live.seq}
          </Link>
        ) : null}
        {whyHref ? (
          <Link className="button small" to={whyHref}>
            Why here?
          </Link>
        ) : null}
      </div>
      <div className="sides">
        <Side
          title="The cluster decided"
          result={live.actual.result}
          node={live.actual.node}
          message={live.actual.message}
          nodeHref={nodeHref}
          extra={live.actual.scheduler ? `by ${live.actual.scheduler}` : null}
        />
        <div className="versus" aria-hidden="true">
          {live.agreement === "match" ? "=" : live.agreement === "tie" ? "≈" : live.agreement === "diverged" ? "≠" : "?"}
        </div>
        <Side
          title="The replay decided"
          result={live.replay.result}
          node={live.replay.node}
          message={live.replay.message}
          nodeHref={nodeHref}
          extra={tied > 1 ? `tied with ${tied - 1} other node${tied > 2 ? "s" : ""}` : null}
        />
      </div>
      <div className="row small muted" style={{ marginTop: 8, gap: 10 }}>
        <span>
          Trigger: <strong>{live.trigger}</strong>
          {live.triggerSource ? `, seen from ${TRIGGER_SOURCE[live.triggerSource] ?? live.triggerSource}` : ""}
        </span>
        {live.observed ? <span>observed {formatDate(live.observed)}</span> : null}
        <span className={`flag ${live.exact ? "ok" : "warn"}`} data-flag="exact">
          {live.exact ? "state rebuilt exactly" : "state not rebuilt exactly"}
        </span>
        {live.gap ? (
          <span className="flag warn" data-flag="gap">
            seen after a watch gap
          </span>
        ) : null}
      </div>
      {live.error ? (
        <div style={{ marginTop: 8 }}>
          <div className="small muted">Not replayed</div>
          <div className="message">{live.error}</div>
        </div>
      ) : null}
      {live.explanations.length ? (
        <div style={{ marginTop: 10 }}>
          <h3 style={{ marginBottom: 4 }}>{live.agreement === "match" ? "Notes on the decision" : "Why they differ"}</h3>
          <ul className="explanations" aria-label="Explanations">
            {live.explanations.map((e, k) => (
              <ExplanationItem key={k} item={e} main={k === 0} />
            ))}
          </ul>
        </div>
      ) : null}
      {live.notes.length ? (
        <div style={{ marginTop: 8 }}>
          <h3 style={{ marginBottom: 4 }}>Notes</h3>
          <ul className="small" aria-label="Notes" style={{ margin: 0, paddingLeft: 18 }}>
            {live.notes.map((n, k) => (
              <li key={k}>{n}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
