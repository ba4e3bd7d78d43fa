import type { NodeRow } from "../lib/nodes";

interface BadgeSpec {
  cls: string;
  icon: string;
  text: string;
}

const RESULTS: Record<string, BadgeSpec> = {
  Scheduled: { cls: "blue", icon: "✓", text: "Scheduled" },
  Unschedulable: { cls: "vermillion", icon: "✕", text: "Unschedulable" },
  Waiting: { cls: "orange", icon: "‖", text: "Waiting" },
  Error: { cls: "purple", icon: "!", text: "Error" },
  NotHandled: { cls: "grey", icon: "–", text: "Not handled" },
  Gated: { cls: "grey", icon: "⊝", text: "Gated" },
  Running: { cls: "orange", icon: "…", text: "Scheduling" },
};

export function ResultBadge({ result, compact = false }: { result: string; compact?: boolean }) {
  const spec = RESULTS[result] ?? { cls: "grey", icon: "?", text: result || "unknown" };
  return (
    <span className={`badge ${spec.cls}`} title={spec.text} data-result={result}>
      <span className="icon" aria-hidden="true">
        {spec.icon}
      </span>
      {compact ? <span className="sr-only">{spec.text}</span> : spec.text}
    </span>
  );
}

const STATUSES: Record<string, BadgeSpec> = {
  queued: { cls: "grey", icon: "…", text: "queued" },
  running: { cls: "orange", icon: "▶", text: "running" },
  succeeded: { cls: "blue", icon: "✓", text: "succeeded" },
  failed: { cls: "purple", icon: "!", text: "failed" },
  cancelled: { cls: "grey", icon: "■", text: "cancelled" },
};

export function StatusBadge({ status }: { status: string }) {
  const spec = STATUSES[status] ?? { cls: "grey", icon: "?", text: status };
  return (
    <span className={`badge ${spec.cls}`} data-status={status}>
      <span className="icon" aria-hidden="true">
        {spec.icon}
      </span>
      {spec.text}
    </span>
  );
}

/** A node's filter verdict: passed, rejected (by which plugin; unresolvable or not), error, not evaluated. */
export function verdictSpec(row: Pick<NodeRow, "verdict" | "code" | "plugin">): BadgeSpec & { title: string } {
  if (row.verdict === "passed") return { cls: "blue", icon: "✓", text: "passed", title: "passed every filter" };
  if (row.verdict === "not-evaluated")
    return {
      cls: "outline",
      icon: "–",
      text: "not evaluated",
      title: "not judged: node sampling found enough feasible nodes first",
    };
  if (row.code === "Error")
    return { cls: "purple", icon: "!", text: row.plugin || "error", title: `error in ${row.plugin || "a plugin"}` };
  if (row.code === "UnschedulableAndUnresolvable")
    return {
      cls: "vermillion-strong",
      icon: "⊘",
      text: row.plugin || "rejected",
      title: `rejected by ${row.plugin || "a plugin"} (unresolvable: preemption cannot help)`,
    };
  return {
    cls: "vermillion",
    icon: "✕",
    text: row.plugin || "rejected",
    title: `rejected by ${row.plugin || "a plugin"} (preemption might help)`,
  };
}

export function VerdictBadge({ row }: { row: Pick<NodeRow, "verdict" | "code" | "plugin"> }) {
  const spec = verdictSpec(row);
  return (
    <span className={`badge ${spec.cls}`} title={spec.title} data-verdict={row.verdict}>
      <span className="icon" aria-hidden="true">
        {spec.icon}
      </span>
      {spec.text}
    </span>
  );
}

const CODES: Record<string, BadgeSpec> = {
  Success: { cls: "blue", icon: "✓", text: "Success" },
  Skip: { cls: "grey", icon: "↷", text: "Skip" },
  Unschedulable: { cls: "vermillion", icon: "✕", text: "Unschedulable" },
  UnschedulableAndUnresolvable: { cls: "vermillion-strong", icon: "⊘", text: "UnschedulableAndUnresolvable" },
  Error: { cls: "purple", icon: "!", text: "Error" },
  Wait: { cls: "orange", icon: "‖", text: "Wait" },
  Pending: { cls: "orange", icon: "…", text: "Pending" },
};

export function CodeBadge({ code }: { code: string }) {
  const spec = CODES[code] ?? { cls: "grey", icon: "?", text: code };
  return (
    <span className={`badge ${spec.cls}`}>
      <span className="icon" aria-hidden="true">
        {spec.icon}
      </span>
      {spec.text}
    </span>
  );
}
