"""One node at one cycle, looked at closely: the pod's scheduling-relevant spec, the node's resources
as the cycle found them, and the verdict of *every* Filter plugin of the profile on that node.

kube-scheduler stops at the first Filter plugin that rejects a node (RunFilterPlugins returns on the
first non-success status); ``every_filter`` asks each plugin on its own, after the same PreFilter
run, so that an operator sees every obstacle at once. That is beyond what the scheduler ran, and
the result says so (``ranByScheduler`` marks the plugins the scheduler itself called on the node,
every plugin up to and including the first rejection). Nominated pods are not added to the node
here (RunFilterPluginsWithNominatedPods does so in the cycle): the matrix judges the node as it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SchedVizError
from ..framework import Code, CycleState
from ..objects import Node, Pod
from ..quantity import PODS
from ..runtime.framework import CycleError
from ..runtime.replay import Replay

NOTE = (
    "every Filter plugin asked on its own, after PreFilter: kube-scheduler stops at the first plugin "
    "that rejects a node, so the plugins after it were not run by the scheduler"
)


def _spec_list(pod: Pod, key: str) -> list[Any]:
    value = pod.spec.get(key)
    return list(value) if isinstance(value, list) else []


def pod_spec_summary(pod: Pod) -> dict[str, Any]:
    """What the scheduler reads of the pod, in scheduler units (CPU in millicores, memory in bytes)."""
    spec = pod.spec
    affinity = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else {}
    selector = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else {}
    return {
        "pod": pod.key,
        "requests": dict(pod.resources.fit_requests),
        "priority": pod.prio,
        "priorityClassName": pod.priority_class_name or None,
        "preemptionPolicy": pod.preemption_policy,
        "schedulerName": pod.scheduler_name,
        "nodeSelector": {str(k): str(v) for k, v in (selector or {}).items()},
        "nodeAffinity": (affinity or {}).get("nodeAffinity"),
        "podAffinity": (affinity or {}).get("podAffinity"),
        "podAntiAffinity": (affinity or {}).get("podAntiAffinity"),
        "tolerations": _spec_list(pod, "tolerations"),
        "topologySpreadConstraints": _spec_list(pod, "topologySpreadConstraints"),
        "schedulingGates": list(pod.scheduling_gates),
        "labels": dict(pod.labels),
    }


def node_at(rp: Replay, index: int) -> dict[str, Any]:
    """The node as the replay stands: allocatable, requested and free per resource, taints, labels."""
    cluster = rp.cluster
    node: Node = cluster.nodes[index]
    resources = sorted(set(node.allocatable) | {r for r in cluster.resource_names() if r != PODS})
    allocatable = {r: int(node.allocatable.get(r, 0)) for r in resources}
    requested = {r: int(cluster.requested(r)[index]) for r in resources}
    requested[PODS] = int(cluster.pod_count[index])
    allocatable.setdefault(PODS, int(node.allocatable.get(PODS, 0)))
    return {
        "name": node.name,
        "labels": dict(node.labels),
        "taints": [dict(t) for t in node.taints],
        "unschedulable": node.unschedulable,
        "allocatable": allocatable,
        "requested": requested,
        "free": {r: allocatable[r] - requested.get(r, 0) for r in allocatable},
        "podCount": int(cluster.pod_count[index]),
    }


def every_filter(rp: Replay, pod: Pod, index: int) -> dict[str, Any]:
    """PreFilter once, then each Filter plugin of the pod's profile on node ``index``, each on its own."""
    fw = rp.frameworks.get(pod.scheduler_name)
    if fw is None:
        return {"preFilter": None, "filters": [], "note": f"no profile for scheduler {pod.scheduler_name!r}"}
    name = rp.cluster.names[index]
    state = CycleState(rp.cluster)
    try:
        res, s, narrowed = fw.run_pre_filter(state, pod, [])
    except CycleError as exc:
        return {
            "preFilter": {"code": Code.Error.name, "plugin": exc.plugin, "reasons": [str(exc)]},
            "filters": [],
            "note": NOTE,
        }
    pre: dict[str, Any] = {"code": s.code.name, "plugin": s.plugin or None, "reasons": list(s.reasons)}
    if res is not None and res.node_names is not None and name not in res.node_names:
        pre["excludedBy"] = sorted(narrowed)
    filters: list[dict[str, Any]] = []
    first_rejection = False
    for pl in fw.filter:
        entry: dict[str, Any] = {"plugin": pl.name}
        if pl.name in state.skip_filter_plugins:
            entry.update(code=Code.Skip.name, reasons=[])
        elif s.code == Code.UnschedulableAndUnresolvable:
            entry.update(code=None, reasons=["not run: PreFilter rejected the pod for every node"])
        else:
            try:
                v = pl.filter(state, pod, np.asarray([index], dtype=np.int64))
                code, reasons = v.at(0)
                entry.update(code=code.name, reasons=list(reasons))
            except (CycleError, SchedVizError) as exc:
                entry.update(code=Code.Error.name, reasons=[str(exc)])
        entry["ranByScheduler"] = not first_rejection and pre.get("excludedBy") is None and s.is_success()
        if entry["code"] not in (None, Code.Success.name, Code.Skip.name):
            first_rejection = True
            entry["diagnosis"] = _diagnosis(rp, fw, pod, index, pl.name, tuple(entry["reasons"]))
        filters.append(entry)
    return {"preFilter": pre, "filters": filters, "note": NOTE}


def _diagnosis(rp: Replay, fw: Any, pod: Pod, index: int, plugin: str, reasons: tuple[str, ...]) -> list[str]:
    """What the rejecting plugin finds wrong with the node, with its numbers (its ``diagnose``, as
    Why here? gives it: the spread constraint and its skew, the term that fails, the taint not
    tolerated); its reasons when it has no diagnosis of its own. Plugins' diagnoses change nothing."""
    from .analysis import _Analysis

    rp.waiting.dry_run = True
    try:
        diags = _Analysis(rp, fw, pod, 0).diagnose(pod, np.asarray([index], dtype=np.int64), plugin, reasons, top=False)
    except (CycleError, SchedVizError) as exc:
        return [f"could not be diagnosed: {exc}"]
    finally:
        rp.waiting.dry_run = False
    return [d.text for d in diags]


def inspect_node(rp: Replay, pod: Pod, node: str) -> dict[str, Any]:
    """The pod, the node and every filter's verdict, against the replay as it stands (call it just
    before the pod's cycle). Raises KeyError for a node the replay does not have."""
    index = rp.cluster.index[node]
    return {"pod": pod_spec_summary(pod), "node": node_at(rp, index), "allFilters": every_filter(rp, pod, index)}
