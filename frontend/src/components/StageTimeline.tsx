import { Fragment, useRef, useState, type ReactNode } from "react";
import type { StageEntry } from "../api/types";
import { formatMicros } from "../lib/format";
import { buildSteps, preEnqueueProblem, STATUS_ICON, STATUS_TEXT, type Point, type Step } from "../lib/stages";
import { CodeBadge } from "./Badges";

export interface StageTimelineProps {
  stages: StageEntry[];
  complete: boolean;
  /** Feasible / rejected counts once Filter has run. */
  filter?: { passed: number; failed: number; notEvaluated?: number } | null;
  /** The cycle's key: a new cycle restarts the animation. */
  cycleKey?: string | number;
  nominatedNode?: string | null;
  selectedNode?: string | null;
  animate?: boolean;
  /** Nodes each Filter plugin rejected in this cycle (from the node verdicts), once the cycle is complete. */
  filterRejections?: Record<string, number> | null;
}

function sub(step: Step, props: StageTimelineProps): string {
  if (step.status === "pending") return "";
  if (step.point === "Filter" && props.filter && step.reached) {
    return `${props.filter.passed} passed · ${props.filter.failed} rejected`;
  }
  if (step.point === "PostFilter" && step.reached) {
    return props.nominatedNode ? `nominated ${props.nominatedNode}` : "no node nominated";
  }
  if (step.point === "Bind" && step.reached && props.selectedNode) return `to ${props.selectedNode}`;
  if (!step.reached) return STATUS_TEXT[step.status];
  const ran = step.entries.filter((e) => e.code !== "Skip").length;
  const skipped = step.entries.length - ran;
  const plugins = `${ran} ran${skipped ? `, ${skipped} skipped` : ""}`;
  return `${plugins} · ${formatMicros(step.micros)}`;
}

export function StageTimeline(props: StageTimelineProps) {
  const { stages, complete, cycleKey, animate = true } = props;
  const feasible = props.filter ? props.filter.passed : null;
  const steps = buildSteps(stages, { complete, feasible });
  const [open, setOpen] = useState<Point | null>(null);
  // animate a new cycle only when cycles come slowly enough to see it (not while a replay streams fast)
  const keyRef = useRef<{ key: unknown; at: number; slow: boolean }>({ key: cycleKey, at: 0, slow: true });
  if (keyRef.current.key !== cycleKey) {
    const now = Date.now();
    keyRef.current = { key: cycleKey, at: now, slow: now - keyRef.current.at > 500 };
  }
  const animated = animate && keyRef.current.slow;
  const gated = preEnqueueProblem(stages);
  const openStep = steps.find((s) => s.point === open) ?? null;
  return (
    <div>
      {gated ? (
        <p className="warn-box small">
          PreEnqueue: <strong>{gated.plugin}</strong> kept the pod out of the queue ({gated.reason || gated.code}); no
          extension point ran.
        </p>
      ) : null}
      {/* a new element restarts the animation; without one, the steps are updated in place */}
      <ol className={`timeline${animated ? " animate" : ""}`} key={animated ? cycleKey : undefined} aria-label="Scheduling cycle stages">
        {steps.map((s, i) => (
          <li key={s.point} className={s.reached ? "reached" : undefined}>
            <button
              type="button"
              className={`step status-${s.status}${s.reached ? " reached" : ""}`}
              style={{ ["--i" as string]: i, width: "100%" }}
              aria-expanded={open === s.point}
              aria-label={`${s.point}: ${STATUS_TEXT[s.status]}${s.reached ? `, ${s.entries.length} plugin calls` : ""}`}
              data-point={s.point}
              data-status={s.status}
              onClick={() => setOpen(open === s.point ? null : s.point)}
              disabled={!s.reached}
            >
              <span className="dot" aria-hidden="true">
                {STATUS_ICON[s.status]}
              </span>
              <span className="name">{breakable(s.point)}</span>
              <span className="sub">{sub(s, props)}</span>
            </button>
          </li>
        ))}
      </ol>
      {openStep && openStep.entries.length ? (
        <div className="stage-details">
          <table className="data">
            <caption className="sr-only">{openStep.point} plugin calls</caption>
            <thead>
              <tr>
                <th>Plugin</th>
                <th>Point</th>
                <th>Status</th>
                <th>Reason</th>
                <th className="num">Time</th>
              </tr>
            </thead>
            <tbody>
              {openStep.entries.map((e, k) => {
                // A Filter entry sums the plugin's calls over every node: its own code says only that the
                // calls ran; what it did to the nodes is in the node verdicts.
                const rejected = e.point === "Filter" && props.filterRejections ? (props.filterRejections[e.plugin] ?? 0) : null;
                return (
                  <tr key={`${e.plugin}-${k}`} data-plugin={e.plugin}>
                    <td>{e.plugin}</td>
                    <td className="muted">{e.point}</td>
                    <td>
                      {rejected === null || e.code === "Error" || e.code === "Skip" ? (
                        <CodeBadge code={e.code} />
                      ) : rejected > 0 ? (
                        <span className="badge vermillion" data-rejected={rejected}>
                          <span className="icon" aria-hidden="true">
                            ✕
                          </span>
                          rejected {rejected} node{rejected === 1 ? "" : "s"}
                        </span>
                      ) : (
                        <span className="badge blue" data-rejected={0}>
                          <span className="icon" aria-hidden="true">
                            ✓
                          </span>
                          rejected none
                        </span>
                      )}
                    </td>
                    <td className="small">{e.reason}</td>
                    <td className="num">{formatMicros(e.durationMicros)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

/** An extension point's name with a line-break opportunity before each inner capital
 * ("Normalize|Score", "Pre|Bind"), so that the ten stages fit a narrow panel without scrolling. */
function breakable(name: string): ReactNode {
  const parts = name.split(/(?=[A-Z])/);
  return parts.map((p, i) => (
    <Fragment key={i}>
      {i > 0 ? <wbr /> : null}
      {p}
    </Fragment>
  ));
}
