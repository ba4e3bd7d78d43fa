import type { CyclePod } from "../api/types";
import { requestsText, spreadText, termText, tolerationText } from "../lib/podspec";

/** What the scheduler reads of a pod: requests, node selector and affinity, tolerations, spread, priority. */
export function PodSpecSummary({ pod }: { pod: CyclePod }) {
  const required = pod.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const preferred = pod.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
  const selector = Object.entries(pod.nodeSelector);
  const hasPodAffinity = !!pod.podAffinity || !!pod.podAntiAffinity;
  return (
    <dl className="pod-spec" aria-label="The pod's scheduling spec">
      <div>
        <dt>Requests</dt>
        <dd data-field="requests">{requestsText(pod.requests)}</dd>
      </div>
      <div>
        <dt>Priority</dt>
        <dd data-field="priority">
          {pod.priority}
          {pod.priorityClassName ? ` (${pod.priorityClassName})` : ""}
          {pod.preemptionPolicy === "Never" ? " · never preempts" : ""}
        </dd>
      </div>
      {selector.length ? (
        <div>
          <dt>Node selector</dt>
          <dd data-field="nodeSelector" className="mono small">
            {selector.map(([k, v]) => `${k}=${v}`).join(", ")}
          </dd>
        </div>
      ) : null}
      {required.length ? (
        <div>
          <dt>Node affinity (required)</dt>
          <dd data-field="nodeAffinity" className="mono small">
            {required.map(termText).join(" or ")}
          </dd>
        </div>
      ) : null}
      {preferred.length ? (
        <div>
          <dt>Node affinity (preferred)</dt>
          <dd className="mono small">{preferred.map((p) => `${termText(p.preference)} (weight ${p.weight})`).join("; ")}</dd>
        </div>
      ) : null}
      {hasPodAffinity ? (
        <div>
          <dt>Pod (anti-)affinity</dt>
          <dd className="small">
            {[pod.podAffinity ? "affinity" : "", pod.podAntiAffinity ? "anti-affinity" : ""].filter(Boolean).join(" and ")} to other pods
          </dd>
        </div>
      ) : null}
      <div>
        <dt>Tolerations</dt>
        <dd data-field="tolerations" className="mono small">
          {pod.tolerations.length ? pod.tolerations.map(tolerationText).join(", ") : <span className="muted">none</span>}
        </dd>
      </div>
      {pod.topologySpreadConstraints.length ? (
        <div>
          <dt>Spread</dt>
          <dd data-field="spread" className="small">
            {pod.topologySpreadConstraints.map(spreadText).join("; ")}
          </dd>
        </div>
      ) : null}
      {pod.schedulingGates.length ? (
        <div>
          <dt>Scheduling gates</dt>
          <dd className="mono small">{pod.schedulingGates.join(", ")}</dd>
        </div>
      ) : null}
    </dl>
  );
}
