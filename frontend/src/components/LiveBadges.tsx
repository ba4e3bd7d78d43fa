// Badges of live mode: a cluster's watch status, a stream's state, a decision's agreement. Text always carries
// the meaning; colour and icon repeat it.

interface Spec {
  cls: string;
  icon: string;
  text: string;
  title: string;
}

const CLUSTER: Record<string, Spec> = {
  pending: { cls: "grey", icon: "…", text: "pending", title: "no worker has picked the cluster up yet" },
  starting: { cls: "orange", icon: "▶", text: "starting", title: "the worker is connecting" },
  syncing: { cls: "orange", icon: "⟳", text: "syncing", title: "the first lists are under way" },
  watching: { cls: "green", icon: "●", text: "watching", title: "every stream is watched" },
  degraded: { cls: "orange", icon: "◐", text: "degraded", title: "some watches are reconnecting" },
  error: { cls: "purple", icon: "!", text: "error", title: "the cluster cannot be watched" },
  stopped: { cls: "grey", icon: "■", text: "stopped", title: "disabled, or its worker stopped" },
};

function Badge({ spec, attr }: { spec: Spec; attr: Record<string, string> }) {
  return (
    <span className={`badge ${spec.cls}`} title={spec.title} {...attr}>
      <span className="icon" aria-hidden="true">
        {spec.icon}
      </span>
      {spec.text}
    </span>
  );
}

export function ClusterStatusBadge({ status }: { status: string }) {
  const spec = CLUSTER[status] ?? { cls: "grey", icon: "?", text: status || "unknown", title: status };
  return <Badge spec={spec} attr={{ "data-cluster-status": status }} />;
}

const STREAM: Record<string, Spec> = {
  starting: { cls: "grey", icon: "…", text: "starting", title: "not listed yet" },
  listing: { cls: "orange", icon: "⟳", text: "listing", title: "listing the objects" },
  watching: { cls: "green", icon: "●", text: "watching", title: "watching for changes" },
  backoff: { cls: "orange", icon: "↻", text: "backoff", title: "reconnecting after a network error" },
  error: { cls: "purple", icon: "!", text: "error", title: "refused (401, or a required kind forbidden): retried at the longest backoff" },
  unavailable: { cls: "outline", icon: "–", text: "unavailable", title: "the cluster does not serve this kind, or the credentials may not read it" },
  stopped: { cls: "grey", icon: "■", text: "stopped", title: "stopped" },
};

export function StreamStateBadge({ state }: { state: string }) {
  const spec = STREAM[state] ?? { cls: "grey", icon: "?", text: state, title: state };
  return <Badge spec={spec} attr={{ "data-stream-state": state }} />;
}

const AGREEMENT: Record<string, Spec> = {
  match: { cls: "blue", icon: "✓", text: "match", title: "the replay made the cluster's decision" },
  tie: { cls: "grey", icon: "=", text: "tie", title: "the cluster chose another node of the replay's tie set" },
  diverged: { cls: "vermillion", icon: "≠", text: "diverged", title: "the replay decided otherwise" },
  skipped: { cls: "outline", icon: "–", text: "skipped", title: "not replayed" },
};

export function AgreementBadge({ agreement }: { agreement: string }) {
  const spec = AGREEMENT[agreement] ?? { cls: "grey", icon: "?", text: agreement, title: agreement };
  return <Badge spec={spec} attr={{ "data-agreement": agreement }} />;
}

/** Explanation codes of docs/live.md, in words (the code stays visible). */
export const CODE_TEXT: Record<string, string> = {
  tie: "the cluster's node is in the replay's tie set",
  "stale-state": "the scheduler decided on an older state",
  "different-scheduler": "another scheduler or profile decided",
  "missing-plugin": "the configuration enables plugins SchedViz does not have",
  extender: "the configuration calls extenders",
  sampling: "node sampling did not evaluate the cluster's node",
  filter: "the replay rejects the cluster's node",
  score: "the replay scores the cluster's node lower",
  result: "scheduled in one, not in the other",
  message: "both unschedulable, with different messages",
  error: "the cycle could not be replayed",
};

export function CodeChip({ code }: { code: string }) {
  return (
    <span className="code-chip" title={CODE_TEXT[code] ?? code} data-code={code}>
      {code}
    </span>
  );
}
