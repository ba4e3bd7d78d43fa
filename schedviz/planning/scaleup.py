"""Scale-up: how many nodes of a shape make the pending pods schedulable, and which no number helps.

A template is an existing node or a Node object from a file. Its clones are what a node group would
add: named ``<template>-template-<k>``, with the template's labels (except ``kubernetes.io/hostname``,
set to the clone's name, and any label whose value is the template's name), taints (except those the
node lifecycle controller and cluster-autoscaler put on nodes that are not ready or going away),
allocatable and capacity; schedulable, Ready, holding no images yet. A template taken from the
snapshot brings its DaemonSet and mirror pods along: each clone runs copies of them, as the new node
would.

Clones are added one at a time: the snapshot plus k clones is replayed for k = 0, 1, ... until every
pending pod is placed ("fits"), ``max_nodes`` is reached ("max-nodes"), or the newest clone made no
difference ("no-progress": no more pending pods placed than with one node fewer, or the newest node
left empty; where cluster-autoscaler's binpacking estimator stops too: a node that takes no pod).
After "no-progress" the pods still pending are those no number of such nodes helps, with their verdict
on the newest node (or kube-scheduler's message when no node was filtered) as the reason; after
"max-nodes" they are those that need more than ``max_nodes``. Every step is a whole replay: the
snapshot's pending pods in queue order, with the clones among the nodes.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedviz.engine import InputError, ReplayOptions, SchedulerConfig, Snapshot
from schedviz.engine.budget import Budget
from schedviz.engine.objects import Node
from schedviz.engine.runtime.replay import Replay

from .base import (
    HOSTNAME_LABEL,
    PLACED,
    derive,
    generated_name,
    is_daemonset_pod,
    is_mirror_pod,
    load_one,
    plan_start,
    timestamp,
    usage,
    verdicts,
)

DEFAULT_MAX_NODES = 10
# why the nodes stopped being added
FITS = "fits"
NO_PROGRESS = "no-progress"
MAX_NODES = "max-nodes"
# taints a new, Ready node does not have (node lifecycle controller, cluster-autoscaler, cordon)
TRANSIENT_TAINTS = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/network-unavailable",
        "node.kubernetes.io/out-of-service",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.cloudprovider.kubernetes.io/shutdown",
        "ToBeDeletedByClusterAutoscaler",
        "DeletionCandidateOfClusterAutoscaler",
    }
)


@dataclass
class Template:
    name: str
    source: str  # "node" (of the snapshot) or the file's path
    raw: dict[str, Any]
    daemon_pods: list[dict[str, Any]] = field(default_factory=list)


def resolve_template(snapshot: Snapshot, ref: str) -> Template:
    """``ref``: a node of the snapshot, else a file holding one Node."""
    for n in snapshot.nodes:
        if n.name == ref:
            pods = [
                p.raw
                for p in snapshot.pods
                if p.node_name == ref and not p.terminal and (is_daemonset_pod(p) or is_mirror_pod(p))
            ]
            return check_template(Template(ref, "node", n.raw, pods), ref)
    if not Path(ref).is_file():
        raise InputError(f"no node {ref!r} in the snapshot and no such file", field="--template")
    raw = load_one(ref, "Node")
    return check_template(Template(str(raw["metadata"]["name"]), ref, raw), ref)


def check_template(t: Template, ref: str) -> Template:
    """The template, if it has allocatable resources (else InputError naming ``ref``)."""
    status = t.raw.get("status") or {}
    if not status.get("allocatable") and not status.get("capacity"):
        raise InputError(
            "a template needs allocatable resources (status.allocatable or status.capacity)",
            source="" if t.source == "node" else ref,
            obj=f"Node {t.name}",
            field="status.allocatable",
        )
    return t


def clone(t: Template, k: int, created: float | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The k-th clone (from 1) and the copies of the template's DaemonSet and mirror pods on it."""
    name = f"{t.name}-template-{k}"
    md = t.raw.get("metadata") or {}
    labels = {key: v for key, v in (md.get("labels") or {}).items() if v != t.name and key != HOSTNAME_LABEL}
    labels[HOSTNAME_LABEL] = name
    new_md: dict[str, Any] = {"name": name, "uid": f"plan-node-{name}", "labels": labels}
    if md.get("annotations"):
        new_md["annotations"] = copy.deepcopy(md["annotations"])
    if created is not None:
        new_md["creationTimestamp"] = timestamp(created)
    spec = t.raw.get("spec") or {}
    new_spec: dict[str, Any] = {}
    taints = [copy.deepcopy(x) for x in spec.get("taints") or [] if x.get("key") not in TRANSIENT_TAINTS]
    if taints:
        new_spec["taints"] = taints
    status = t.raw.get("status") or {}
    new_status: dict[str, Any] = {
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
    }
    for key in ("allocatable", "capacity", "nodeInfo"):
        if status.get(key):
            new_status[key] = copy.deepcopy(status[key])
    node = {"apiVersion": "v1", "kind": "Node", "metadata": new_md, "spec": new_spec, "status": new_status}
    pods = []
    for raw in t.daemon_pods:
        p = copy.deepcopy(raw)
        pmd = p.setdefault("metadata", {})
        prefix = pmd.get("generateName") or f"{pmd.get('name')}-"
        pname = generated_name(str(prefix), f"scale-up#{name}#{pmd.get('namespace')}/{pmd.get('name')}")
        pmd.update({"name": pname, "uid": f"plan-{name}-{pname}"})
        pmd.pop("resourceVersion", None)
        p["spec"] = {**(p.get("spec") or {}), "nodeName": name}
        pods.append(p)
    return node, pods


@dataclass
class Step:
    nodes: int
    scheduled: int
    unschedulable: int
    new_node_pods: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "scheduled": self.scheduled,
            "unschedulable": self.unschedulable,
            "podsOnNewNodes": self.new_node_pods,
        }


@dataclass
class TemplatePlan:
    template: Template
    max_nodes: int
    steps: list[Step]
    stop: str  # FITS, NO_PROGRESS, MAX_NODES
    helpless: list[dict[str, Any]]
    snapshot: Snapshot
    before: dict[str, Any]
    after: dict[str, Any]
    placements: dict[str, str | None]

    @property
    def nodes_needed(self) -> int | None:
        return self.steps[-1].nodes if self.stop == FITS else None

    def to_dict(self, *, utilization: bool = False) -> dict[str, Any]:
        last = self.steps[-1]
        out: dict[str, Any] = {
            "template": self.template.name,
            "source": self.template.source,
            "maxNodes": self.max_nodes,
            "stop": self.stop,
            "nodesAdded": last.nodes,
            "nodesNeeded": self.nodes_needed,
            "pendingPods": last.scheduled + last.unschedulable,
            "scheduledBefore": self.steps[0].scheduled,
            "scheduled": last.scheduled,
            "steps": [s.to_dict() for s in self.steps],
            "helpless": self.helpless,
        }
        if utilization:
            out["utilization"] = {"before": self.before, "after": self.after}
        return out


@dataclass
class ScaleUpPlan:
    templates: list[TemplatePlan]

    def to_dict(self, *, utilization: bool = False) -> dict[str, Any]:
        return {
            "kind": "ScaleUpPlan",
            "templates": [t.to_dict(utilization=utilization) for t in self.templates],
        }


def scale_up(
    snapshot: Snapshot,
    templates: Sequence[str | Template],
    config: SchedulerConfig | None = None,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    all_nodes: bool = False,
    budget: Budget | None = None,
) -> ScaleUpPlan:
    if not templates:
        raise InputError("at least one template is needed", field="--template")
    if max_nodes < 0:
        raise InputError("must be 0 or more", field="--max-nodes")
    resolved = [
        resolve_template(snapshot, t) if isinstance(t, str) else check_template(t, t.source)
        for t in templates
    ]
    return ScaleUpPlan([_one(snapshot, t, config, max_nodes, all_nodes, budget) for t in resolved])


def _one(
    snapshot: Snapshot,
    t: Template,
    config: SchedulerConfig | None,
    max_nodes: int,
    all_nodes: bool,
    budget: Budget | None,
) -> TemplatePlan:
    created = plan_start(snapshot)
    taken = {n.name for n in snapshot.nodes}
    steps: list[Step] = []
    nodes: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    k = 0
    while True:
        plan = derive(snapshot, add_nodes=[Node(n) for n in nodes], add_pods=pods)
        rp = Replay(plan, config, ReplayOptions(all_nodes=all_nodes, budget=budget))
        finals: dict[str, Any] = {}
        for rec in rp.cycles():
            if rec.kind == "Scheduling":
                finals[rec.pod] = rec
        new_names = [n["metadata"]["name"] for n in nodes]
        on_new = {name: 0 for name in new_names}
        placed = 0
        for rec in finals.values():
            if rec.result in PLACED:
                placed += 1
                if rec.selected_node in on_new:
                    on_new[rec.selected_node] += 1
        failed = [rec for rec in finals.values() if rec.result not in PLACED]
        steps.append(Step(k, placed, len(failed), on_new))
        if not failed:
            stop = FITS
            break
        if k > 0 and (on_new[new_names[-1]] == 0 or placed <= steps[-2].scheduled):
            stop = NO_PROGRESS
            break
        if k >= max_nodes:
            stop = MAX_NODES
            break
        k += 1
        name = f"{t.name}-template-{k}"
        if name in taken:
            raise InputError(f"the snapshot already has a node {name!r}", field="--template")
        node, ds = clone(t, k, created)
        nodes.append(node)
        pods.extend(ds)
    helpless: list[dict[str, Any]] = []
    for rec in failed:
        entry: dict[str, Any] = {"pod": rec.pod, "result": rec.result, "message": rec.message or rec.error}
        if stop == NO_PROGRESS:
            # its verdict on the newest node (the message when no node was filtered: gated, no profile)
            v = verdicts(rec, rp.trace.node_names, rp.trace.reasons)
            entry["why"] = v.get(new_names[-1]) or entry["message"] or rec.result
            entry["helps"] = False
        else:
            entry["why"] = f"still pending with {k} new node(s) (--max-nodes {max_nodes})"
            entry["helps"] = None
        helpless.append(entry)
    placements = {pod: rec.selected_node if rec.result in PLACED else None for pod, rec in finals.items()}
    return TemplatePlan(
        template=t,
        max_nodes=max_nodes,
        steps=steps,
        stop=stop,
        helpless=helpless,
        snapshot=plan,
        before=usage(snapshot.cluster()),
        after=usage(rp.cluster),
        placements=placements,
    )
