"""Drain: cordon nodes, evict their pods as ``kubectl drain`` does, replay the pods recreated.

Cordoning sets ``spec.unschedulable`` (NodeUnschedulable rejects the node from then on). Every
non-terminal pod bound to a drained node is then, in the nodes' order and the snapshot's pod order:

- left in place when it is a mirror pod (annotation ``kubernetes.io/config.mirror``) or a DaemonSet's
  pod (``kubectl drain --ignore-daemonsets``);
- evicted otherwise. With ``respect_pdb`` an eviction the PodDisruptionBudgets refuse (the eviction
  API's rule: the pod's one budget must allow a disruption, unless the pod is not healthy and the
  budget's unhealthyPodEvictionPolicy lets it go; a pod under two budgets cannot be evicted) leaves
  the pod in place, reported as blocked; without it the pod is evicted and the budgets it breaks are
  reported.

An evicted pod whose controller (its ownerReference with ``controller: true``) recreates pods comes
back as a new pending pod: the same pod unbound, named as its controller names pods (a StatefulSet:
the same name; the others: ``generateName`` plus five generated characters), created after every
object of the snapshot. A pod without a controller is only deleted (``kubectl drain --force``) and
reported as not recreated. The recreated pods are replayed (with the snapshot's pending pods, in
queue order) on the cordoned cluster.

PodDisruptionBudgets are read as the disruption controller computes them
(pkg/controller/disruption): the pods the budget selects in its namespace; healthy = Ready and not
being deleted; with ``minAvailable`` a number: desired healthy = that number and expected = the pods
selected; with a percentage, or with ``maxUnavailable``: expected = the sum of the selected pods'
controllers' replicas (a ReplicaSet owned by a Deployment counts the Deployment's), desired healthy =
the percentage of expected rounded up, or expected minus maxUnavailable (a percentage rounded up);
disruptions allowed = healthy - desired, at least 0, and 0 when nothing is expected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from schedviz.engine import InputError, ReplayOptions, SchedulerConfig, Snapshot
from schedviz.engine.budget import Budget
from schedviz.engine.labels import LabelSelector
from schedviz.engine.objects import KubeObject, Node, Pod
from schedviz.engine.runtime.replay import Replay

from .base import (
    PLACED,
    derive,
    generated_name,
    is_daemonset_pod,
    is_mirror_pod,
    new_pending_pod,
    owner,
    parse_selector,
    plan_start,
    usage,
)

RECREATING_KINDS = frozenset({"ReplicaSet", "StatefulSet", "ReplicationController", "Job"})
STAYS_DAEMONSET = "DaemonSet pod"
STAYS_MIRROR = "mirror pod"
STAYS_PDB = "eviction refused by a PodDisruptionBudget"
# the eviction API's words (pkg/registry/core/pod/storage/eviction.go)
PDB_REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."
PDB_TOO_MANY = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
)


@dataclass
class DisruptionBudget:
    """One PodDisruptionBudget as the disruption controller sees it, and what the drain did to it."""

    obj: KubeObject
    selector: LabelSelector
    expected: int
    desired: int
    healthy: int
    allowed: int
    evicted: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)

    @property
    def violated(self) -> bool:
        return self.healthy < self.desired

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.obj.key,
            "expectedPods": self.expected,
            "desiredHealthy": self.desired,
            "currentHealthy": self.healthy,
            "disruptionsAllowed": self.allowed,
            "evicted": self.evicted,
            "blocked": self.blocked,
            "violated": self.violated,
        }


@dataclass
class Outcome:
    """A pod of a drained node: what happened to it and, when recreated, to its replacement."""

    pod: str
    node: str
    action: str  # "stays", "evicted", "deleted" (no controller: not recreated)
    reason: str = ""
    replacement: str | None = None
    result: str | None = None
    selected_node: str | None = None
    message: str | None = None
    seq: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pod": self.pod, "node": self.node, "action": self.action}
        if self.reason:
            out["reason"] = self.reason
        if self.replacement is not None:
            out.update(
                {
                    "replacement": self.replacement,
                    "result": self.result,
                    "selectedNode": self.selected_node,
                    "message": self.message,
                }
            )
        return out


@dataclass
class DrainPlan:
    nodes: list[str]
    respect_pdb: bool
    pods: list[Outcome]
    budgets: list[DisruptionBudget]
    snapshot: Snapshot
    before: dict[str, Any]
    after: dict[str, Any]
    other_pending: list[dict[str, Any]]

    @property
    def recreated(self) -> list[Outcome]:
        return [o for o in self.pods if o.replacement is not None]

    @property
    def unschedulable(self) -> list[Outcome]:
        return [o for o in self.recreated if o.result not in PLACED]

    def to_dict(self, *, utilization: bool = True) -> dict[str, Any]:
        rec = self.recreated
        out: dict[str, Any] = {
            "kind": "DrainPlan",
            "nodes": self.nodes,
            "respectPdb": self.respect_pdb,
            "summary": {
                "pods": len(self.pods),
                "evicted": sum(1 for o in self.pods if o.action == "evicted"),
                "deleted": sum(1 for o in self.pods if o.action == "deleted"),
                "stay": sum(1 for o in self.pods if o.action == "stays"),
                "recreated": len(rec),
                "scheduled": sum(1 for o in rec if o.result in PLACED),
                "unschedulable": len(self.unschedulable),
                "budgetsViolated": sum(1 for b in self.budgets if b.violated),
            },
            "pods": [o.to_dict() for o in self.pods],
            "budgets": [b.to_dict() for b in self.budgets],
            "otherPending": self.other_pending,
        }
        if utilization:
            out["utilization"] = {"before": self.before, "after": self.after}
        return out


def select_nodes(snapshot: Snapshot, names: Sequence[str], selector: str | None) -> list[str]:
    """The nodes to drain, by name (each must exist) and/or by a label selector (must match one)."""
    known = {n.name for n in snapshot.nodes}
    out: list[str] = []
    for name in names:
        if name not in known:
            raise InputError(f"no node {name!r} in the snapshot", field="--node")
        if name not in out:
            out.append(name)
    if selector is not None:
        sel = parse_selector(selector)
        matched = [n.name for n in snapshot.nodes if sel.matches(n.labels)]
        if not matched:
            raise InputError(f"{selector!r} matches no node of the snapshot", field="--selector")
        out.extend(n for n in matched if n not in out)
    if not out:
        raise InputError("name the nodes to drain (--node) or select them (--selector)", field="--node")
    return out


def _ready(pod: Pod) -> bool:
    """podutil.IsPodReady, and not being deleted (the disruption controller's healthy pod)."""
    if pod.meta.deletion is not None:
        return False
    for c in (pod.raw.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _scaled(value: Any, total: int, field_name: str, ident: str) -> int:
    """intstr.GetScaledValueFromIntOrPercent with roundUp."""
    if isinstance(value, bool):
        raise InputError("must be an integer or a percentage", obj=ident, field=field_name)
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%") or not text[:-1].isdigit():
        raise InputError(f"invalid value {value!r}: an integer or a percentage", obj=ident, field=field_name)
    return math.ceil(int(text[:-1]) * total / 100)


def _controller_scale(snapshot: Snapshot, pods: list[Pod]) -> int:
    """getExpectedScale: the replicas of the selected pods' controllers, each counted once."""
    by_uid = {o.uid: o for o in snapshot.objects}
    by_name = {(o.kind, o.namespace, o.name): o for o in snapshot.objects}
    seen: set[str] = set()
    total = 0
    for p in pods:
        ref = owner(p.raw)
        if ref is None:
            continue
        ctrl = by_uid.get(str(ref.get("uid"))) or by_name.get(
            (str(ref.get("kind")), p.namespace, str(ref.get("name")))
        )
        if ctrl is not None and ctrl.kind == "ReplicaSet":
            up = owner(ctrl.raw)
            if up is not None and up.get("kind") == "Deployment":
                dep = by_uid.get(str(up.get("uid"))) or by_name.get(
                    ("Deployment", p.namespace, str(up.get("name")))
                )
                if dep is not None:
                    ctrl = dep
        key = ctrl.uid if ctrl is not None else f"{ref.get('kind')}/{p.namespace}/{ref.get('name')}"
        if key in seen:
            continue
        seen.add(key)
        if ctrl is None:
            total += sum(1 for q in pods if (owner(q.raw) or {}).get("uid") == ref.get("uid"))
            continue
        replicas = ctrl.spec.get("replicas", 1)
        total += replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1
    return total


def budgets(snapshot: Snapshot) -> list[DisruptionBudget]:
    running = [p for p in snapshot.pods if not p.terminal]
    out: list[DisruptionBudget] = []
    for obj in snapshot.objects:
        if obj.kind != "PodDisruptionBudget":
            continue
        spec = obj.spec
        sel = LabelSelector.parse(spec.get("selector"), obj=obj.ident, field="spec.selector")
        pods = [p for p in running if p.namespace == obj.namespace and sel.matches(p.labels)]
        healthy = sum(1 for p in pods if _ready(p))
        if spec.get("maxUnavailable") is not None:
            expected = _controller_scale(snapshot, pods)
            desired = max(
                0, expected - _scaled(spec["maxUnavailable"], expected, "spec.maxUnavailable", obj.ident)
            )
        elif spec.get("minAvailable") is not None:
            value = spec["minAvailable"]
            if isinstance(value, int) and not isinstance(value, bool):
                desired, expected = value, len(pods)
            else:
                expected = _controller_scale(snapshot, pods)
                desired = _scaled(value, expected, "spec.minAvailable", obj.ident)
        else:
            expected, desired = len(pods), 0
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        out.append(DisruptionBudget(obj, sel, expected, desired, healthy, allowed))
    return out


def drain(
    snapshot: Snapshot,
    nodes: Sequence[str] = (),
    selector: str | None = None,
    config: SchedulerConfig | None = None,
    *,
    respect_pdb: bool = False,
    all_nodes: bool = False,
    budget: Budget | None = None,
) -> DrainPlan:
    drained = select_nodes(snapshot, nodes, selector)
    by_name = {n.name: n for n in snapshot.nodes}
    cordoned: dict[str, Node] = {}
    for name in drained:
        raw = dict(by_name[name].raw)
        raw["spec"] = {**(raw.get("spec") or {}), "unschedulable": True}
        cordoned[name] = Node(raw)
    pdbs = budgets(snapshot)
    created = plan_start(snapshot)
    taken = {p.key for p in snapshot.pods}
    outcomes: list[Outcome] = []
    removed: list[str] = []
    new_pods: list[dict[str, Any]] = []
    replacement_of: dict[str, Outcome] = {}
    pods_on: dict[str, list[Pod]] = {name: [] for name in drained}
    for p in snapshot.pods:
        if p.node_name in pods_on and not p.terminal:
            pods_on[p.node_name].append(p)
    for name in drained:
        for p in pods_on[name]:
            if is_mirror_pod(p):
                outcomes.append(Outcome(p.key, name, "stays", STAYS_MIRROR))
                continue
            if is_daemonset_pod(p):
                outcomes.append(Outcome(p.key, name, "stays", STAYS_DAEMONSET))
                continue
            mine = [b for b in pdbs if b.obj.namespace == p.namespace and b.selector.matches(p.labels)]
            refusal = _refusal(p, mine)
            if refusal and respect_pdb:
                for b in mine:
                    b.blocked.append(p.key)
                outcomes.append(Outcome(p.key, name, "stays", f"{STAYS_PDB}: {refusal}"))
                continue
            for b in mine:
                b.evicted.append(p.key)
                if _ready(p):
                    b.healthy -= 1
                    b.allowed = max(0, b.allowed - 1)
            removed.append(p.uid)
            ref = owner(p.raw)
            if ref is None or ref.get("kind") not in RECREATING_KINDS:
                why = (
                    "no controller: deleted, not recreated"
                    if ref is None
                    else (f"owned by a {ref.get('kind')}, which does not recreate it")
                )
                outcomes.append(Outcome(p.key, name, "deleted", why))
                continue
            if ref.get("kind") == "StatefulSet":
                new_name = p.name
            else:
                prefix = _prefix(p, ref)
                new_name = generated_name(prefix, f"drain#{p.key}")
                n = 0
                while f"{p.namespace}/{new_name}" in taken:
                    n += 1
                    new_name = generated_name(prefix, f"drain#{p.key}#{n}")
            taken.add(f"{p.namespace}/{new_name}")
            raw = new_pending_pod(p.raw, new_name, f"plan-{p.uid}", created)
            new_pods.append(raw)
            o = Outcome(p.key, name, "evicted", f"recreated by {ref.get('kind')} {ref.get('name')}")
            o.replacement = f"{p.namespace}/{new_name}"
            replacement_of[o.replacement] = o
            outcomes.append(o)
    plan = derive(snapshot, replace_nodes=cordoned, drop_pods=removed, add_pods=new_pods)
    rp = Replay(plan, config, ReplayOptions(all_nodes=all_nodes, budget=budget))
    others: dict[str, dict[str, Any]] = {}
    for rec in rp.cycles():
        rp.trace.cycles.clear()  # what the answer needs is copied out of each record
        if rec.kind != "Scheduling":
            continue
        back = replacement_of.get(rec.pod)
        if back is not None:
            back.result, back.selected_node, back.message, back.seq = (
                rec.result,
                rec.selected_node,
                rec.message or rec.error,
                rec.seq,
            )
        else:
            others[rec.pod] = {
                "pod": rec.pod,
                "result": rec.result,
                "selectedNode": rec.selected_node,
                "message": rec.message or rec.error,
            }
    return DrainPlan(
        nodes=drained,
        respect_pdb=respect_pdb,
        pods=outcomes,
        budgets=pdbs,
        snapshot=plan,
        before=usage(snapshot.cluster()),
        after=usage(rp.cluster),
        other_pending=list(others.values()),
    )


def _prefix(pod: Pod, ref: dict[str, Any]) -> str:
    gen = (pod.raw.get("metadata") or {}).get("generateName")
    return str(gen) if gen else f"{ref.get('name')}-"


def _refusal(pod: Pod, mine: list[DisruptionBudget]) -> str:
    """Why the eviction API would refuse to evict ``pod`` now ("" when it would not)."""
    if not mine:
        return ""
    if len(mine) > 1:
        return PDB_TOO_MANY
    b = mine[0]
    if not _ready(pod):
        policy = b.obj.spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
        if policy == "AlwaysAllow" or b.healthy >= b.desired:
            return ""
    if b.allowed > 0:
        return ""
    return f"{PDB_REFUSED} The disruption budget {b.obj.name} needs {b.desired} healthy pods and has {b.healthy} currently"
