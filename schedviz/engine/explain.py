"""Why here? Why not there? What would make it fit?

``explain(snapshot, "ns/name")`` replays the snapshot up to the pod's cycle (every earlier cycle runs
exactly as in a replay), then looks at the pod's cycle with every node filtered and scored:

- the winner: the selected node, its tie set, the runner-up, and per score plugin the weighted
  difference between the winner and the runner-up or any node the caller names;
- the rejected nodes, grouped by (plugin, code, reasons) as the trace records them;
- for every rejected node, the smallest change that would let the pod pass there, by failing plugin
  (a resource deficit, untolerated taints, a cordon, the failing node selector requirement, the host
  port and the pod using it, the failing (anti-)affinity term or existing pods' anti-affinity, the
  violated spread constraint and its skew; volume and device plugins are described, not changed).
  Every change is CHECKED: PreFilter and Filter run again with the change applied (on a modified
  copy of the pod, or on the cluster, restored afterwards). A change that still fails because
  another plugin then rejects the node is reported as such, and the next change is looked for, up
  to ``MAX_CHAIN`` changes in a row;
- for an unschedulable pod, single changes ranked by how many nodes each makes feasible (counted by
  filtering every node again with the change applied).

Nodes with the same diagnosis are checked together (one PreFilter + Filter run over all of them);
the number of runs is capped (``max_checks``) and the explanation says when the cap was reached.
Finally the pod's real cycle runs, with the caller's options, and its outcome is reported too.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from . import taints as taints_mod
from .config import SchedulerConfig
from .errors import InputError
from .framework import Code, CycleState
from .loader import Snapshot
from .nodeselectors import NodeSelectorTerm
from .objects import Pod
from .plugins import interpodaffinity as ipa
from .plugins import nodeaffinity as nodeaff
from .plugins import nodeports as nports
from .plugins import noderesources_fit as nrf
from .plugins import podtopologyspread as pts
from .quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, format_milli_cpu
from .runtime.framework import CycleError, Framework, ReasonTable
from .runtime.replay import Replay, ReplayOptions
from .taints import (
    DO_NOT_SCHEDULE,
    NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    Taint,
    TaintGroups,
    pod_tolerations,
    taint_groups,
    tolerations_tolerate_taint,
)
from .trace import KUBERNETES_VERSION, NOT_EVALUATED, CycleRecord

_T = TypeVar("_T")

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

API_VERSION = "schedviz.io/v1"
KIND = "Explanation"

# How many changes in a row are looked for when a change alone still fails.
MAX_CHAIN = 3
# How many nodes are named in lists that could be long (matching pods, suggestion targets).
MAX_NAMED = 20
# How many node changes (each making one node feasible) the text lists among the suggestions.
TEXT_NODE_CHANGES = 10

NARROWED_PREFIX = "node(s) didn't satisfy plugin(s) ["
# where taints.taint_groups keeps the nodes grouped by taint list
_TAINT_CACHE = taints_mod._CLUSTER_CACHE_KEY
VOLUME_PLUGINS = ("VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits")
DRA_PLUGIN = "DynamicResources"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"

# (code, plugin, reasons) of one node; code 0 passes.
Verdict = tuple[int, str, tuple[str, ...]]
PASS: Verdict = (0, "", ())


# ----- formatting ----------------------------------------------------------------------------------
_BINARY = (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def format_bytes(n: int) -> str:
    """Bytes in Gi/Mi/Ki when exact (to two decimals), else in bytes with an approximation."""
    for unit, size in _BINARY:
        if n >= size and (n * 100) % size == 0:
            text = f"{n / size:.2f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
    if n >= 2**20:
        return f"{n} bytes (about {n / 2**20:.1f}Mi)"
    return f"{n} bytes" if n != 1 else "1 byte"


def format_amount(resource: str, amount: int) -> str:
    """A quantity in the scheduler's units (milli-CPU, bytes, counts) as a person reads it."""
    if resource == CPU:
        return format_milli_cpu(amount)
    if resource in (MEMORY, EPHEMERAL_STORAGE) or resource.startswith("hugepages-"):
        return format_bytes(amount)
    return str(amount)


def _resource_words(resource: str, amount: int) -> str:
    """'300m more CPU', '512Mi more memory', '1 more pod slot', '2 more nvidia.com/gpu'."""
    if resource == CPU:
        return f"{format_amount(resource, amount)} more CPU"
    if resource == PODS:
        return f"{amount} more pod slot" + ("s" if amount != 1 else "")
    return f"{format_amount(resource, amount)} more {resource}"


def format_taint(t: Taint) -> str:
    """kubectl's notation: key=value:Effect (key:Effect without a value)."""
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def _format_port(p: nports.HostPort) -> str:
    ip, proto, port = p
    where = "" if ip == nports.DEFAULT_BIND_ALL_HOST_IP else f" on {ip}"
    return f"{port}/{proto}{where}"


def _format_selector(raw: Any) -> str:
    """A label selector as kubectl prints one: app=db,tier in (a,b),!legacy."""
    if raw is None:
        return "<none>"
    if not isinstance(raw, dict):
        return str(raw)
    parts = [f"{k}={v}" for k, v in sorted((raw.get("matchLabels") or {}).items())]
    for e in raw.get("matchExpressions") or []:
        if not isinstance(e, dict):
            continue
        key, op, values = e.get("key", ""), e.get("operator", ""), e.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(map(str, values))})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(map(str, values))})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {op} {values}")
    return ",".join(parts) if parts else "<everything>"


def _format_requirement(raw: Any) -> str:
    if not isinstance(raw, dict):
        return str(raw)
    values = raw.get("values")
    tail = f" [{', '.join(map(str, values))}]" if values else ""
    return f"{raw.get('key', '')} {raw.get('operator', '')}{tail}"


def _names(names: Sequence[str], limit: int = MAX_NAMED) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


# ----- changes ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PodPatch:
    """A change to the pod's spec, applied to a copy of the pod (``Pod(raw_copy)``).

    Indices refer to the pod's own lists as written (``nodeSelectorTerms``, the required
    (anti-)affinity terms, ``topologySpreadConstraints``); ``request_caps`` lowers the requests
    NodeResourcesFit checks (scheduler units).
    """

    tolerate: tuple[Taint, ...] = ()
    drop_selector: tuple[str, ...] = ()
    drop_node_reqs: tuple[tuple[int, str, int], ...] = ()
    drop_node_affinity: bool = False
    drop_affinity_terms: tuple[int, ...] = ()
    drop_anti_terms: tuple[int, ...] = ()
    spread_skew: tuple[tuple[int, int], ...] = ()
    drop_spread: tuple[int, ...] = ()
    drop_ports: tuple[nports.HostPort, ...] = ()
    request_caps: tuple[tuple[str, int], ...] = ()

    def is_empty(self) -> bool:
        return self == PodPatch()

    def merge(self, other: PodPatch) -> PodPatch:
        if other.is_empty():
            return self
        if self.is_empty():
            return other
        skew: dict[int, int] = dict(self.spread_skew)
        for i, v in other.spread_skew:
            skew[i] = max(v, skew.get(i, 0))
        caps: dict[str, int] = dict(self.request_caps)
        for r, v in other.request_caps:
            caps[r] = min(v, caps.get(r, v))

        def union(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(sorted(set(a) | set(b)))

        return PodPatch(
            tolerate=union(self.tolerate, other.tolerate),
            drop_selector=union(self.drop_selector, other.drop_selector),
            drop_node_reqs=union(self.drop_node_reqs, other.drop_node_reqs),
            drop_node_affinity=self.drop_node_affinity or other.drop_node_affinity,
            drop_affinity_terms=union(self.drop_affinity_terms, other.drop_affinity_terms),
            drop_anti_terms=union(self.drop_anti_terms, other.drop_anti_terms),
            spread_skew=tuple(sorted(skew.items())),
            drop_spread=union(self.drop_spread, other.drop_spread),
            drop_ports=union(self.drop_ports, other.drop_ports),
            request_caps=tuple(sorted(caps.items())),
        )

    def apply(self, pod: Pod) -> Pod:
        """A new Pod built from a modified deep copy of ``pod.raw``; ``pod`` is left untouched."""
        raw = copy.deepcopy(pod.raw)
        spec = raw.setdefault("spec", {})
        if self.tolerate:
            tols = list(spec.get("tolerations") or [])
            for t in self.tolerate:
                if t.value:
                    tols.append({"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect})
                else:
                    tols.append({"key": t.key, "operator": "Exists", "effect": t.effect})
            spec["tolerations"] = tols
        if self.drop_selector:
            spec["nodeSelector"] = {
                k: v for k, v in (spec.get("nodeSelector") or {}).items() if k not in self.drop_selector
            }
        affinity = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else {}
        na = affinity.get("nodeAffinity") if isinstance(affinity.get("nodeAffinity"), dict) else None
        if na is not None and self.drop_node_affinity:
            na.pop(REQUIRED, None)
        elif na is not None and self.drop_node_reqs:
            terms = (na.get(REQUIRED) or {}).get("nodeSelectorTerms") or []
            for ti, term in enumerate(terms):
                if not isinstance(term, dict):
                    continue
                for kind in ("matchExpressions", "matchFields"):
                    gone = {j for (t, k, j) in self.drop_node_reqs if t == ti and k == kind}
                    if gone and isinstance(term.get(kind), list):
                        term[kind] = [e for j, e in enumerate(term[kind]) if j not in gone]
        for key, drop in (
            ("podAffinity", self.drop_affinity_terms),
            ("podAntiAffinity", self.drop_anti_terms),
        ):
            block = affinity.get(key)
            if drop and isinstance(block, dict) and isinstance(block.get(REQUIRED), list):
                block[REQUIRED] = [t for i, t in enumerate(block[REQUIRED]) if i not in drop]
        if (self.spread_skew or self.drop_spread) and isinstance(spec.get("topologySpreadConstraints"), list):
            skews = dict(self.spread_skew)
            out = []
            for i, c in enumerate(spec["topologySpreadConstraints"]):
                if i in self.drop_spread:
                    continue
                if i in skews and isinstance(c, dict):
                    c["maxSkew"] = skews[i]
                out.append(c)
            spec["topologySpreadConstraints"] = out
        if self.drop_ports:
            for key in ("initContainers", "containers"):
                for ctr in spec.get(key) or []:
                    for port in (ctr.get("ports") or []) if isinstance(ctr, dict) else []:
                        if isinstance(port, dict) and _sanitized_port(port) in self.drop_ports:
                            port.pop("hostPort", None)
                            port.pop("hostIP", None)
        new = Pod(raw, pod.index)
        if self.request_caps:
            caps = dict(self.request_caps)
            fit = {r: min(v, caps[r]) if r in caps else v for r, v in new.resources.fit_requests.items()}
            new.resources = dataclasses.replace(new.resources, fit_requests=fit, views={})
        return new


def _sanitized_port(port: dict[str, Any]) -> nports.HostPort | None:
    hp = port.get("hostPort")
    if not isinstance(hp, int) or isinstance(hp, bool) or hp <= 0:
        return None
    return (
        str(port.get("hostIP") or nports.DEFAULT_BIND_ALL_HOST_IP),
        str(port.get("protocol") or nports.DEFAULT_PROTOCOL),
        hp,
    )


@dataclass(frozen=True)
class Change:
    """One what-if: a change to the pod (``scope`` "pod") or to the node being checked ("node").

    Node changes: ``extra`` frees resources on the node (more allocatable, scheduler units),
    ``uncordon`` clears spec.unschedulable, ``evict`` takes pods (by uid) off the cluster.
    """

    kind: str
    scope: str
    description: str
    pod: PodPatch = PodPatch()
    extra: tuple[tuple[str, int], ...] = ()
    uncordon: bool = False
    evict: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def node_local(self) -> bool:
        return bool(self.extra) or self.uncordon

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "scope": self.scope, "description": self.description}
        if self.details:
            out["details"] = self.details
        return out


Plan = tuple[Change, ...]


def _pod_patch(plan: Plan) -> PodPatch:
    p = PodPatch()
    for ch in plan:
        p = p.merge(ch.pod)
    return p


def _evictions(plan: Plan) -> tuple[str, ...]:
    return tuple(sorted({uid for ch in plan for uid in ch.evict}))


# ----- results ---------------------------------------------------------------------------------------
@dataclass
class ThenFails:
    """Nodes that a change alone does not make fit: the plugin that then rejects them."""

    plugin: str
    code: str
    reasons: tuple[str, ...]
    nodes: list[str]
    next: list[Fix] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin,
            "code": self.code,
            "reasons": list(self.reasons),
            "nodes": self.nodes,
            "next": [f.to_dict() for f in self.next],
        }


@dataclass
class Fix:
    """A diagnosis shared by some rejected nodes and the change checked against it."""

    plugin: str
    code: str
    reasons: tuple[str, ...]
    nodes: list[str]
    diagnosis: str
    details: dict[str, Any]
    change: Change | None
    passes: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    then: list[ThenFails] = field(default_factory=list)
    feasible_after: int | None = None
    more_feasible: int | None = None

    @property
    def verdict(self) -> str:
        """no-suggestion, unchecked, fits (every node passes), partly, or still-fails."""
        if self.change is None:
            return "no-suggestion"
        if len(self.unchecked) == len(self.nodes):
            return "unchecked"
        if len(self.passes) == len(self.nodes):
            return "fits"
        if self.passes:
            return "partly"
        return "still-fails"

    def fits_with_more(self) -> bool:
        """Whether some nodes pass once the changes looked for after this one are made too."""
        return any(f.passes or f.fits_with_more() for t in self.then for f in t.next)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "plugin": self.plugin,
            "code": self.code,
            "reasons": list(self.reasons),
            "nodes": self.nodes,
            "diagnosis": self.diagnosis,
            "details": self.details,
            "change": None if self.change is None else self.change.to_dict(),
            "verdict": self.verdict,
            "verified": self.change is not None and len(self.unchecked) < len(self.nodes),
            "passes": self.passes,
            "unchecked": self.unchecked,
            "thenFails": [t.to_dict() for t in self.then],
        }
        if self.feasible_after is not None:
            out["feasibleNodesAfter"] = self.feasible_after
            out["moreFeasibleNodes"] = self.more_feasible
        return out


@dataclass
class Suggestion:
    """A single change, ranked by how many nodes it makes feasible (checked by filtering again)."""

    change: Change
    feasible_nodes: int
    nodes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"change": self.change.to_dict(), "feasibleNodes": self.feasible_nodes, "nodes": self.nodes}


@dataclass
class Comparison:
    """The winner against another node: per score plugin, weighted scores and their difference."""

    node: str
    feasible: bool
    total: int | None = None
    margin: int | None = None
    tied: bool = False
    plugins: dict[str, dict[str, int]] = field(default_factory=dict)
    rejected: dict[str, Any] | None = None
    fixes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": self.node, "feasible": self.feasible}
        if self.feasible:
            out.update(
                {"total": self.total, "margin": self.margin, "tied": self.tied, "plugins": self.plugins}
            )
        else:
            out["rejected"] = self.rejected
            out["fixes"] = self.fixes
        return out


@dataclass
class Explanation:
    """What ``explain`` found for one pod.

    ``result``, ``message``, ``selected_node``, ``tied`` and the scores come from the pod's cycle with
    every node filtered and scored; ``scheduler`` is the cycle as the replay really runs it (the
    caller's options, node sampling included). ``rejected`` groups the rejected nodes by (plugin,
    code, reasons); ``fixes`` holds the diagnoses with their checked changes (a tree: ``Fix.then``
    lists the nodes a change alone leaves failing and the next changes found for them);
    ``suggestions`` ranks single changes for an unschedulable pod; ``checks`` counts the PreFilter +
    Filter runs spent checking changes, ``capped`` says whether ``max_checks`` stopped some.
    """

    pod: str
    profile: str | None
    result: str
    seq: int
    message: str | None
    node_count: int
    feasible_count: int
    selected_node: str | None = None
    tied: list[str] = field(default_factory=list)
    winner_total: int | None = None
    runner_up: Comparison | None = None
    comparisons: list[Comparison] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    fixes_omitted: int = 0
    suggestions: list[Suggestion] = field(default_factory=list)
    suggestions_omitted: int = 0
    checks: int = 0
    max_checks: int = 0
    capped: bool = False
    scheduler: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        winner: dict[str, Any] | None = None
        if self.selected_node is not None:
            winner = {
                "node": self.selected_node,
                "total": self.winner_total,
                "tiedNodes": self.tied,
                "runnerUp": None if self.runner_up is None else self.runner_up.to_dict(),
            }
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "kubernetesVersion": KUBERNETES_VERSION,
            "pod": self.pod,
            "profile": self.profile,
            "seq": self.seq,
            "result": self.result,
            "message": self.message,
            "error": self.error,
            "nodes": {
                "total": self.node_count,
                "feasible": self.feasible_count,
                "rejected": sum(g["count"] for g in self.rejected),
            },
            "winner": winner,
            "compared": [c.to_dict() for c in self.comparisons],
            "rejected": self.rejected,
            "fixes": [f.to_dict() for f in self.fixes],
            "fixesOmitted": self.fixes_omitted,
            "suggestions": [s.to_dict() for s in self.suggestions],
            "suggestionsOmitted": self.suggestions_omitted,
            "checks": {"run": self.checks, "limit": self.max_checks, "capped": self.capped},
            "scheduler": self.scheduler,
            "notes": self.notes,
        }

    def to_text(self) -> str:
        return render_text(self)


# ----- the analysis ----------------------------------------------------------------------------------
@dataclass
class _Diag:
    nodes: IntArray
    text: str
    details: dict[str, Any]
    change: Change | None


@dataclass
class _Short:
    """One resource a node lacks: the pod's request and, per node, deficit, allocatable, in use."""

    resource: str
    request: int
    deficit: IntArray
    alloc: IntArray
    used: IntArray


@dataclass
class _Req:
    """A nodeSelector entry (``where`` None) or one requirement of a required node affinity term
    (``where`` = (term index, "matchExpressions" | "matchFields", index)), judged on some nodes."""

    where: tuple[int, str, int] | None
    key: str
    text: str
    ok: BoolArray
    error: str = ""

    def label(self) -> str:
        return self.text if self.where is None else f"term {self.where[0]}: {self.text}"

    def problem(self, labels: dict[str, str]) -> str:
        if self.error:
            return f"{self.label()} is invalid ({self.error}) and matches no node"
        if self.where is not None and self.where[1] == "matchFields":
            return f"{self.label()}: the node's name does not match"
        value = labels.get(self.key)
        return (
            f"{self.label()}: node has {self.key}={value}"
            if value is not None
            else f"{self.label()}: node has no label {self.key}"
        )


class _Analysis:
    """Everything explain does for one pod, against the replay stopped just before its cycle."""

    def __init__(self, rp: Replay, fw: Framework, pod: Pod, max_checks: int) -> None:
        self.rp = rp
        self.fw = fw
        self.pod = pod
        self.cluster = rp.cluster
        self.names = self.cluster.names
        self.max_checks = max_checks
        self.checks = 0
        self.capped = False
        self._pods: dict[PodPatch, Pod] = {PodPatch(): pod}
        self._full: dict[PodPatch, list[Verdict]] = {}
        self.singles: dict[PodPatch, Change] = {}
        self.baseline: set[int] = set()
        self.wanted: set[int] = set()  # nodes the caller named: checked first
        self._matching: dict[Hashable, list[str]] = {}
        self._blockers: list[tuple[Pod, ipa.AffinityTerm, int]] | None = None

    # ----- running PreFilter + Filter ------------------------------------------------------------
    def pod_for(self, patch: PodPatch) -> Pod:
        p = self._pods.get(patch)
        if p is None:
            p = patch.apply(self.pod)
            self._pods[patch] = p
        return p

    def can_check(self) -> bool:
        if self.checks >= self.max_checks:
            self.capped = True
            return False
        return True

    def run(self, pod: Pod, nodes: IntArray) -> list[Verdict]:
        """PreFilter then Filter for ``pod`` on ``nodes`` against the cluster as it is now: what
        ``Framework.evaluate_node`` does for one node, for a batch."""
        self.checks += 1
        n = len(nodes)
        state = CycleState(self.cluster)
        try:
            res, s, narrowed = self.fw.run_pre_filter(state, pod, [])
        except CycleError as exc:
            return [(int(Code.Error), exc.plugin, (str(exc),))] * n
        if not s.is_success():
            return [(int(s.code), s.plugin, s.reasons)] * n
        out: list[Verdict] = [PASS] * n
        inside = np.ones(n, dtype=bool)
        if res is not None and res.node_names is not None:
            keep = np.fromiter((self.names[int(i)] in res.node_names for i in nodes), dtype=bool, count=n)
            label = " ".join(sorted(narrowed))
            absent: Verdict = (int(Code.UnschedulableAndUnresolvable), label, (f"{NARROWED_PREFIX}{label}]",))
            for k in np.flatnonzero(~keep).tolist():
                out[k] = absent
            inside = keep
        pos = np.flatnonzero(inside)
        if len(pos) == 0:
            return out
        table = ReasonTable()
        try:
            fo = self.fw.run_filter_with_nominated_pods(state, pod, nodes[pos], table, {})
        except CycleError as exc:
            err: Verdict = (int(Code.Error), exc.plugin, (str(exc),))
            for k in pos.tolist():
                out[k] = err
            return out
        for j in np.flatnonzero(fo.codes).tolist():
            rid = int(fo.reason_ids[j])
            out[int(pos[j])] = (
                int(fo.codes[j]),
                self.fw.filter_names[int(fo.plugin_ids[j])],
                table.items[rid] if rid >= 0 else (),
            )
        return out

    def full(self, patch: PodPatch) -> list[Verdict] | None:
        """Every node's verdict for the pod with ``patch`` (cached); None when out of checks."""
        got = self._full.get(patch)
        if got is None:
            if not self.can_check():
                return None
            got = self.run(self.pod_for(patch), np.arange(self.cluster.n, dtype=np.int64))
            self._full[patch] = got
        return got

    @contextmanager
    def applied(self, parts: Sequence[tuple[Plan, IntArray]]) -> Iterator[Pod]:
        """Apply each plan's node changes to its nodes, the evictions once, and yield the pod with
        the merged pod changes; the cluster is restored on exit."""
        cluster = self.cluster
        patch = PodPatch()
        for plan, _ in parts:
            patch = patch.merge(_pod_patch(plan))
        pod = self.pod_for(patch)
        saved: list[tuple[npt.NDArray[Any], IntArray, npt.NDArray[Any]]] = []
        evicted: list[tuple[Pod, int]] = []
        lists: dict[int, list[Pod]] = {}
        uncordoned: list[IntArray] = []
        taint_cache = cluster.caches.get(_TAINT_CACHE)
        try:
            for plan, nodes in parts:
                for ch in plan:
                    for r, amount in ch.extra:
                        arr = cluster.alloc(r)
                        saved.append((arr, nodes, arr[nodes].copy()))
                        arr[nodes] += amount
                    if ch.uncordon:
                        saved.append((cluster.unschedulable, nodes, cluster.unschedulable[nodes].copy()))
                        cluster.unschedulable[nodes] = False
                        uncordoned.append(nodes)
            if uncordoned:
                self._drop_unschedulable_taint(np.concatenate(uncordoned))
            for uid in sorted({u for plan, _ in parts for u in _evictions(plan)}):
                victim = cluster.pods.get(uid)
                where = None if victim is None else cluster.node_of(victim)
                if victim is None or where is None:
                    continue
                lists.setdefault(where, list(cluster.pods_on[where]))
                cluster.remove_pod(victim)
                evicted.append((victim, where))
            yield pod
        finally:
            for victim, node in reversed(evicted):
                cluster.add_pod(victim, node)
            for node, original in lists.items():
                cluster.pods_on[node] = original
            for arr, nodes, values in reversed(saved):
                arr[nodes] = values
            if uncordoned:
                if taint_cache is None:
                    cluster.caches.pop(_TAINT_CACHE, None)
                else:
                    cluster.caches[_TAINT_CACHE] = taint_cache

    def _drop_unschedulable_taint(self, nodes: IntArray) -> None:
        """Uncordoning also removes the node.kubernetes.io/unschedulable:NoSchedule taint (the node
        lifecycle controller keeps it in step with spec.unschedulable): the taint groups the plugins
        read are replaced, for the what-if, by groups without it on ``nodes``."""
        cluster = self.cluster
        groups = taint_groups(cluster)
        sets = list(groups.sets)
        index = {ts: k for k, ts in enumerate(sets)}
        ids = groups.ids.copy()
        changed = False
        for i in nodes.tolist():
            current = sets[int(ids[i])]
            kept = tuple(t for t in current if (t.key, t.effect) != (TAINT_NODE_UNSCHEDULABLE, NO_SCHEDULE))
            if kept == current:
                continue
            gid = index.get(kept)
            if gid is None:
                gid = len(sets)
                sets.append(kept)
                index[kept] = gid
            ids[i] = gid
            changed = True
        if changed:
            cluster.caches[_TAINT_CACHE] = (cluster.nodes, len(cluster.nodes), TaintGroups(ids, sets))

    # ----- verification ----------------------------------------------------------------------------
    def _batches(
        self, items: Sequence[_T], key: Callable[[_T], Hashable], nodes: Callable[[_T], IntArray]
    ) -> list[list[_T]]:
        """Items sharing ``key`` grouped into batches whose node sets do not overlap."""
        batches: dict[Hashable, list[tuple[set[int], list[_T]]]] = {}
        for item in items:
            members = set(nodes(item).tolist())
            groups = batches.setdefault(key(item), [])
            for used, group in groups:
                if not used & members:
                    used |= members
                    group.append(item)
                    break
            else:
                groups.append((members, [item]))
        out = [(used, g) for groups in batches.values() for used, g in groups]
        out.sort(key=lambda ug: (not ug[0] & self.wanted, -len(ug[0])))
        return [g for _, g in out]

    def verify(self, items: list[tuple[Fix, Plan, IntArray]]) -> list[tuple[ThenFails, Plan, IntArray]]:
        """Check each fix's plan (its change included) on its nodes; returns the nodes still failing.

        Plans that share their pod changes and evictions are checked in one PreFilter + Filter run
        (their node changes are local to their nodes); pod-only plans are run over every node, which
        also counts the nodes they make feasible."""
        todo = [it for it in items if it[0].change is not None]
        pending: list[tuple[ThenFails, Plan, IntArray]] = []
        for group in self._batches(todo, lambda it: (_pod_patch(it[1]), _evictions(it[1])), lambda it: it[2]):
            patch, evictions = _pod_patch(group[0][1]), _evictions(group[0][1])
            pod_only = not evictions and not any(ch.node_local for _, plan, _ in group for ch in plan)
            if pod_only:
                all_verdicts = self.full(patch)
                if all_verdicts is None:
                    self._unchecked(group)
                    continue
                for fix, plan, nodes in group:
                    pending.extend(self._record(fix, plan, nodes, [all_verdicts[int(i)] for i in nodes]))
                    self._count(fix, all_verdicts)
                continue
            if not self.can_check():
                self._unchecked(group)
                continue
            union = np.concatenate([n for _, _, n in group])
            with self.applied([(plan, nodes) for _, plan, nodes in group]) as pod:
                verdicts = self.run(pod, union)
            at = 0
            for fix, plan, nodes in group:
                pending.extend(self._record(fix, plan, nodes, verdicts[at : at + len(nodes)]))
                at += len(nodes)
        return pending

    def _unchecked(self, group: list[tuple[Fix, Plan, IntArray]]) -> None:
        for fix, _, nodes in group:
            fix.unchecked = [self.names[int(i)] for i in nodes]

    def _record(
        self, fix: Fix, plan: Plan, nodes: IntArray, verdicts: list[Verdict]
    ) -> list[tuple[ThenFails, Plan, IntArray]]:
        failing: dict[Verdict, list[int]] = {}
        for i, v in zip(nodes.tolist(), verdicts, strict=True):
            if v[0] == 0:
                fix.passes.append(self.names[i])
            else:
                failing.setdefault(v, []).append(i)
        out = []
        for (code, plugin, reasons), idx in failing.items():
            t = ThenFails(plugin, Code(code).name, reasons, [self.names[i] for i in idx])
            fix.then.append(t)
            out.append((t, plan, np.asarray(idx, dtype=np.int64)))
        return out

    def _count(self, fix: Fix, verdicts: list[Verdict]) -> None:
        feasible = {i for i, v in enumerate(verdicts) if v[0] == 0}
        fix.feasible_after = len(feasible)
        fix.more_feasible = len(feasible - self.baseline)

    # ----- the fix tree ----------------------------------------------------------------------------
    def fixes(self, groups: list[tuple[Verdict, IntArray]]) -> list[Fix]:
        """Diagnose every rejected group, check the changes, and look for the next change where a
        change alone still fails (breadth first, ``MAX_CHAIN`` changes deep)."""
        top: list[Fix] = []
        level: list[tuple[Fix, Plan, IntArray]] = []
        for verdict, nodes in groups:
            for fix, plan, fnodes, _ in self.diagnose_batch(verdict, [((), nodes)]):
                top.append(fix)
                level.append((fix, plan, fnodes))
        depth = 1
        while level:
            pending = self.verify(level)
            level = []
            if depth >= MAX_CHAIN:
                break
            pending = [p for p in pending if Code[p[0].code] != Code.Error]
            for batch in self._batches(
                pending,
                lambda p: ((Code[p[0].code], p[0].plugin, p[0].reasons), _pod_patch(p[1]), _evictions(p[1])),
                lambda p: p[2],
            ):
                if not self.can_check():
                    break
                t0 = batch[0][0]
                then: Verdict = (int(Code[t0.code]), t0.plugin, t0.reasons)
                for fix, plan, fnodes, parent in self.diagnose_batch(then, [(p[1], p[2]) for p in batch]):
                    batch[parent][0].next.append(fix)
                    if fix.change is not None:
                        level.append((fix, plan, fnodes))
            depth += 1
        return top

    def diagnose_batch(
        self, verdict: Verdict, parts: list[tuple[Plan, IntArray]]
    ) -> list[tuple[Fix, Plan, IntArray, int]]:
        """Diagnose nodes rejected with ``verdict`` under their plans (sharing pod changes and
        evictions): (fix, plan with the fix's change, its nodes, index of the part) per diagnosis
        and part."""
        code, plugin, reasons = verdict
        union = np.concatenate([n for _, n in parts])
        owner = np.concatenate([np.full(len(n), k, dtype=np.int64) for k, (_, n) in enumerate(parts)])
        with self.applied(parts) as pod:
            diags = self.diagnose(pod, union, code, plugin, reasons, top=not parts[0][0])
        where = {int(i): int(k) for i, k in zip(union.tolist(), owner.tolist(), strict=True)}
        out = []
        for d in diags:
            by_part: dict[int, list[int]] = {}
            for i in d.nodes.tolist():
                by_part.setdefault(where[i], []).append(i)
            for k, idx in sorted(by_part.items()):
                plan = parts[k][0]
                fix = Fix(
                    plugin=plugin,
                    code=Code(code).name,
                    reasons=reasons,
                    nodes=[self.names[i] for i in idx],
                    diagnosis=d.text,
                    details=d.details,
                    change=d.change,
                )
                new_plan = (*plan, d.change) if d.change is not None else plan
                out.append((fix, new_plan, np.asarray(idx, dtype=np.int64), k))
        return out

    # ----- diagnosis by plugin ----------------------------------------------------------------------
    def diagnose(
        self, pod: Pod, nodes: IntArray, code: int, plugin: str, reasons: tuple[str, ...], top: bool
    ) -> list[_Diag]:
        if plugin == nrf.NAME:
            return self._diag_resources(pod, nodes, reasons, top)
        if plugin == "TaintToleration":
            return self._diag_taints(pod, nodes, top)
        if plugin == "NodeUnschedulable":
            change = Change(
                "uncordon",
                "node",
                "uncordon the node (clear spec.unschedulable and the node.kubernetes.io/unschedulable taint)",
                uncordon=True,
            )
            return [_Diag(nodes, "node is cordoned (spec.unschedulable)", {}, change)]
        if nodeaff.NAME in plugin.split():
            if nodeaff.ERR_REASON_ENFORCED in reasons:
                return [
                    _Diag(
                        nodes,
                        "the profile's NodeAffinity addedAffinity (scheduler configuration) excludes the node; "
                        "no change to the pod can help",
                        {},
                        None,
                    )
                ]
            return self._diag_node_affinity(pod, nodes, top)
        if plugin == nports.NAME:
            return self._diag_ports(pod, nodes, top)
        if plugin == ipa.NAME and reasons:
            return self._diag_pod_affinity(pod, nodes, reasons[0], top)
        if plugin == pts.NAME:
            return self._diag_spread(pod, nodes, top)
        if plugin in VOLUME_PLUGINS or plugin == DRA_PLUGIN:
            return [self._diag_storage(pod, nodes, plugin, reasons)]
        text = "; ".join(reasons) if reasons else f"rejected by {plugin or 'the scheduler'}"
        return [_Diag(nodes, text, {}, None)]

    def _generic(self, nodes: IntArray, reasons: tuple[str, ...], why: str) -> list[_Diag]:
        return [_Diag(nodes, "; ".join(reasons) + (f" ({why})" if why else ""), {}, None)]

    # NodeResourcesFit -------------------------------------------------------------------------------
    def _diag_resources(self, pod: Pod, nodes: IntArray, reasons: tuple[str, ...], top: bool) -> list[_Diag]:
        """Per short resource: deficit = request - (allocatable - requested) (one pod slot for "Too
        many pods"); nodes are grouped by equal deficits."""
        c = self.cluster
        request = pod.resources.fit_requests
        cols: list[_Short] = []
        for reason in reasons:
            if reason == nrf.REASON_TOO_MANY_PODS:
                alloc = c.alloc(PODS)[nodes]
                used = c.pod_count[nodes]
                cols.append(_Short(PODS, 1, used + 1 - alloc, alloc, used))
            elif reason.startswith("Insufficient "):
                r = reason[len("Insufficient ") :]
                q = int(request.get(r, 0))
                alloc = c.alloc(r)[nodes]
                used = c.requested(r)[nodes]
                cols.append(_Short(r, q, q - (alloc - used), alloc, used))
        if not cols:
            return self._generic(nodes, reasons, "")
        keys = np.stack(
            [col.deficit for col in cols] + [(col.request > col.alloc).astype(np.int64) for col in cols],
            axis=1,
        )
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        out: list[_Diag] = []
        for g, row in enumerate(uniq.tolist()):
            sel = inverse == g
            members = nodes[sel]
            parts: list[str] = []
            extra: list[tuple[str, int]] = []
            never: list[str] = []
            details: dict[str, Any] = {}
            for j, col in enumerate(cols):
                deficit, nv = int(row[j]), bool(row[len(cols) + j])
                alloc_g, used_g = col.alloc[sel], col.used[sel]
                free_g = alloc_g - used_g
                r = col.resource
                if r == PODS:
                    uniform = bool((alloc_g == alloc_g[0]).all() and (used_g == used_g[0]).all())
                    usage = f" ({int(used_g[0])} of {int(alloc_g[0])} pods in use)" if uniform else ""
                    parts.append(f"needs 1 more pod slot{usage}")
                else:
                    uniform = bool((alloc_g == alloc_g[0]).all() and (used_g == used_g[0]).all())
                    usage = (
                        f", {format_amount(r, max(int(free_g[0]), 0))} free of {format_amount(r, int(alloc_g[0]))} allocatable"
                        if uniform
                        else ""
                    )
                    parts.append(
                        f"needs {_resource_words(r, deficit)} (request {format_amount(r, col.request)}{usage})"
                    )
                details[r] = {
                    "request": col.request,
                    "deficit": deficit,
                    "text": format_amount(r, deficit),
                    "allocatable": [int(alloc_g.min()), int(alloc_g.max())],
                    "free": [int(free_g.min()), int(free_g.max())],
                    "neverFits": nv,
                }
                if nv:
                    never.append(r)
                extra.append((r, deficit))
            text = "; ".join(parts)
            amounts = " and ".join(_resource_words(r, d).replace(" more ", " ") for r, d in extra)
            if never:
                text += (
                    f"; the node could never fit the pod, even empty: its allocatable {', '.join(never)} "
                    "is smaller than the request"
                )
                desc = f"add {amounts} of allocatable capacity to the node (it is too small for the pod even empty)"
            else:
                desc = f"free {amounts} on the node (evict pods or add capacity)"
            change = Change("free-resources", "node", desc, extra=tuple(extra))
            out.append(_Diag(members, text, details, change))
        if top:
            self._resource_singles(pod, cols)
        return out

    def _resource_singles(self, pod: Pod, cols: list[_Short]) -> None:
        """Request less: for each short resource, the most that one of the rejected nodes has free."""
        for col in cols:
            if col.resource == PODS:
                continue
            free = col.alloc - col.used
            usable = free[(free > 0) & (free < col.request)]
            if len(usable) == 0:
                continue
            r, cap = col.resource, int(usable.max())
            label = "CPU" if r == CPU else r
            desc = f"request at most {format_amount(r, cap)} {label} (the pod requests {format_amount(r, col.request)})"
            patch = PodPatch(request_caps=((r, cap),))
            self.singles.setdefault(patch, Change("lower-request", "pod", desc, pod=patch))

    # TaintToleration ---------------------------------------------------------------------------------
    def _diag_taints(self, pod: Pod, nodes: IntArray, top: bool) -> list[_Diag]:
        groups = taint_groups(self.cluster)
        plugin = self.fw.instances.get("TaintToleration")
        comparison = bool(getattr(plugin, "comparison_ops", False))
        tolerations = pod_tolerations(pod)
        ids = groups.ids[nodes]
        by_taints: dict[tuple[Taint, ...], list[IntArray]] = {}
        for gid in np.unique(ids).tolist():
            bad = tuple(
                t
                for t in groups.sets[gid]
                if t.effect in DO_NOT_SCHEDULE and not tolerations_tolerate_taint(tolerations, t, comparison)
            )
            by_taints.setdefault(bad, []).append(nodes[ids == gid])
        out = []
        for bad, parts in by_taints.items():
            members = np.sort(np.concatenate(parts))
            if not bad:
                out.append(_Diag(members, "no untolerated NoSchedule/NoExecute taint found", {}, None))
                continue
            names = [format_taint(t) for t in bad]
            patch = PodPatch(tolerate=tuple(sorted(bad)))
            change = Change(
                "tolerate",
                "pod",
                "tolerate " + ", ".join(names),
                pod=patch,
                details={"tolerations": _toleration_dicts(bad)},
            )
            out.append(_Diag(members, "untolerated taint(s): " + ", ".join(names), {"taints": names}, change))
            if top:
                for t in bad:
                    p1 = PodPatch(tolerate=(t,))
                    self.singles.setdefault(
                        p1,
                        Change(
                            "tolerate",
                            "pod",
                            f"tolerate {format_taint(t)}",
                            pod=p1,
                            details={"tolerations": _toleration_dicts((t,))},
                        ),
                    )
                self.singles.setdefault(patch, change)
        return out

    # NodeAffinity ----------------------------------------------------------------------------------
    def _node_affinity_reqs(
        self, pod: Pod, nodes: IntArray
    ) -> tuple[list[_Req], list[tuple[int, list[int]]], bool]:
        """The pod's nodeSelector entries and required node affinity requirements, each judged on
        ``nodes``; the terms (raw index, their requirements); whether a required affinity exists."""
        c = self.cluster
        reqs: list[_Req] = []
        for k, v in (pod.spec.get("nodeSelector") or {}).items():
            reqs.append(_Req(None, str(k), f"nodeSelector {k}={v}", c.label(str(k)).equals(str(v))[nodes]))
        aff = pod.spec.get("affinity")
        na = aff.get("nodeAffinity") if isinstance(aff, dict) else None
        required = na.get(REQUIRED) if isinstance(na, dict) else None
        terms: list[tuple[int, list[int]]] = []
        if not isinstance(required, dict):
            return reqs, terms, False
        for ti, term in enumerate(required.get("nodeSelectorTerms") or []):
            if NodeSelectorTerm.is_empty_raw(term):
                continue  # an empty term matches no node: upstream leaves it out
            members: list[int] = []
            for kind in ("matchExpressions", "matchFields"):
                for j, e in enumerate(term.get(kind) or []):
                    one = NodeSelectorTerm.parse({kind: [e]}, obj=pod.ident, field=f"nodeSelectorTerms[{ti}]")
                    err = "; ".join(one.errors)
                    ok = np.zeros(len(nodes), dtype=bool) if err else one.mask(c, nodes)
                    key = str(e.get("key", "")) if kind == "matchExpressions" and isinstance(e, dict) else ""
                    members.append(len(reqs))
                    reqs.append(_Req((ti, kind, j), key, _format_requirement(e), ok, err))
            terms.append((ti, members))
        return reqs, terms, True

    def _diag_node_affinity(self, pod: Pod, nodes: IntArray, top: bool) -> list[_Diag]:
        """Which nodeSelector entries and which requirements of the closest required term the node's
        labels fail; the change drops them (or the whole required affinity when the closest term
        fails entirely, as an emptied term would match no node)."""
        c = self.cluster
        reqs, terms, has_required = self._node_affinity_reqs(pod, nodes)
        if not reqs and not has_required:
            return self._generic(
                nodes, (nodeaff.ERR_REASON_POD,), "no nodeSelector or required node affinity found"
            )
        fail = np.stack([~r.ok for r in reqs]) if reqs else np.zeros((0, len(nodes)), dtype=bool)
        label_keys = sorted({r.key for r in reqs if r.key})
        groups: dict[tuple[Any, ...], list[int]] = {}
        for pos in range(len(nodes)):
            row = tuple(np.flatnonzero(fail[:, pos]).tolist())
            labels = c.nodes[int(nodes[pos])].labels
            involved = {reqs[r].key for r in row}
            values = tuple(labels.get(k) for k in label_keys if k in involved)
            groups.setdefault((row, values), []).append(pos)
        selector = pod.spec.get("nodeSelector") or {}
        out = []
        for (row, _), positions in groups.items():
            members = nodes[np.asarray(positions, dtype=np.int64)]
            sample = c.nodes[int(members[0])].labels
            failing = set(row)
            sel_bad = [r for r in sorted(failing) if reqs[r].where is None]
            problems = [reqs[r].problem(sample) for r in sel_bad]
            descs = [f"drop nodeSelector {reqs[r].key}={selector[reqs[r].key]}" for r in sel_bad]
            drop_reqs: list[tuple[int, str, int]] = []
            drop_all = False
            if has_required:
                best = min(terms, key=lambda t: sum(1 for r in t[1] if r in failing), default=None)
                if best is None:
                    drop_all = True
                    problems.append("the required node affinity has no term that can match a node")
                else:
                    bad = [r for r in best[1] if r in failing]
                    problems.extend(reqs[r].problem(sample) for r in bad)
                    if bad and len(terms) > 1:
                        problems.append(f"no term matches; term {best[0]} is the closest")
                    if bad and len(bad) == len(best[1]):
                        drop_all = True
                    else:
                        for r in bad:
                            where = reqs[r].where
                            assert where is not None
                            drop_reqs.append(where)
                            descs.append(
                                f"drop the node affinity requirement {reqs[r].text} (term {where[0]})"
                            )
            if drop_all:
                descs.append("drop the required node affinity")
            if not problems:
                out.append(_Diag(members, "the node matches the pod's node selector and affinity", {}, None))
                continue
            patch = PodPatch(
                drop_selector=tuple(sorted(reqs[r].key for r in sel_bad)),
                drop_node_reqs=tuple(sorted(drop_reqs)),
                drop_node_affinity=drop_all,
            )
            change = Change("relax-node-affinity", "pod", " and ".join(descs), pod=patch)
            details = {"failing": [reqs[r].label() for r in sorted(failing)]}
            out.append(_Diag(members, "; ".join(problems), details, change))
            if top:
                self.singles.setdefault(patch, change)
                for r in sel_bad:
                    k = reqs[r].key
                    p1 = PodPatch(drop_selector=(k,))
                    self.singles.setdefault(
                        p1,
                        Change("relax-node-affinity", "pod", f"drop nodeSelector {k}={selector[k]}", pod=p1),
                    )
                if has_required:
                    p2 = PodPatch(drop_node_affinity=True)
                    self.singles.setdefault(
                        p2, Change("relax-node-affinity", "pod", "drop the required node affinity", pod=p2)
                    )
        return out

    # NodePorts -------------------------------------------------------------------------------------
    def _diag_ports(self, pod: Pod, nodes: IntArray, top: bool) -> list[_Diag]:
        want = nports.host_ports(pod)
        c = self.cluster
        by_conflict: dict[tuple[tuple[nports.HostPort, str], ...], list[int]] = {}
        for i in nodes.tolist():
            found: set[tuple[nports.HostPort, str]] = set()
            for other in c.pods_on[i]:
                for hp in nports.host_ports(other):
                    for w in want:
                        if _ports_conflict(w, hp):
                            found.add((w, other.uid))
            by_conflict.setdefault(tuple(sorted(found)), []).append(i)
        out = []
        by_port: dict[tuple[nports.HostPort, ...], list[int]] = {}
        for conflicts, idx in by_conflict.items():
            members = np.asarray(idx, dtype=np.int64)
            if not conflicts:
                out.append(_Diag(members, "no conflicting host port found", {}, None))
                continue
            pods = sorted({uid for _, uid in conflicts})
            keys = [c.pods[u].key for u in pods]
            parts = [f"host port {_format_port(w)} is in use by pod {c.pods[u].key}" for w, u in conflicts]
            change = Change(
                "evict",
                "node",
                "evict pod(s) " + ", ".join(keys) + " from the node",
                evict=tuple(pods),
                details={"pods": keys},
            )
            details = {"conflicts": [{"port": _format_port(w), "pod": c.pods[u].key} for w, u in conflicts]}
            out.append(_Diag(members, "; ".join(parts), details, change))
            ports = tuple(sorted({w for w, _ in conflicts}))
            by_port.setdefault(ports, []).extend(idx)
        for ports, idx in by_port.items():
            patch = PodPatch(drop_ports=ports)
            desc = "don't request host port(s) " + ", ".join(_format_port(p) for p in ports)
            change = Change("drop-host-port", "pod", desc, pod=patch)
            out.append(
                _Diag(
                    np.asarray(sorted(idx), dtype=np.int64),
                    "the pod asks for host port(s) "
                    + ", ".join(_format_port(p) for p in ports)
                    + " in use on the node",
                    {},
                    change,
                )
            )
            if top:
                self.singles.setdefault(patch, change)
                for p in ports:
                    p1 = PodPatch(drop_ports=(p,))
                    self.singles.setdefault(
                        p1,
                        Change("drop-host-port", "pod", f"don't request host port {_format_port(p)}", pod=p1),
                    )
        return out

    # InterPodAffinity --------------------------------------------------------------------------------
    def _ipa_state(self, pod: Pod) -> Any:
        plugin = self.fw.instances.get(ipa.NAME)
        if plugin is None:
            return None
        state = CycleState(self.cluster)
        _, s = plugin.pre_filter(state, pod)
        if not s.is_success():
            return None
        return state.get(ipa.PRE_FILTER_STATE_KEY)

    def _diag_pod_affinity(self, pod: Pod, nodes: IntArray, reason: str, top: bool) -> list[_Diag]:
        if reason == ipa.ERR_REASON_EXISTING_ANTI_AFFINITY:
            return self._diag_existing_anti(pod, nodes)
        s = self._ipa_state(pod)
        if s is None or reason not in (ipa.ERR_REASON_AFFINITY, ipa.ERR_REASON_ANTI_AFFINITY):
            return self._generic(nodes, (reason,), "")
        anti = reason == ipa.ERR_REASON_ANTI_AFFINITY
        terms: list[ipa.AffinityTerm] = s.required_anti if anti else s.required_affinity
        counts: dict[str, IntArray] = s.anti if anti else s.affinity
        raw_terms = _raw_required(pod, "podAntiAffinity" if anti else "podAffinity")
        special = (not anti) and bool(s.self_match) and not any(bool((v != 0).any()) for v in counts.values())
        c = self.cluster
        rows = []
        for t in terms:
            codes = c.label(t.topology_key).codes[nodes]
            present = codes >= 0
            arr = counts.get(t.topology_key)
            hit = (
                np.zeros(len(nodes), dtype=bool)
                if arr is None
                else present & (arr[np.where(present, codes, 0)] > 0)
            )
            if anti:
                rows.append((hit, codes))
            else:
                rows.append((~present | (~hit & (not special)), codes))
        groups: dict[tuple[Any, ...], list[int]] = {}
        for pos in range(len(nodes)):
            sig = tuple((k, int(codes[pos])) for k, (bad, codes) in enumerate(rows) if bad[pos])
            groups.setdefault(sig, []).append(pos)
        label = "podAntiAffinity" if anti else "podAffinity"
        out = []
        for sig, positions in groups.items():
            members = nodes[np.asarray(positions, dtype=np.int64)]
            if not sig:
                out.append(_Diag(members, f"no failing {label} term found", {}, None))
                continue
            problems = []
            for k, code in sig:
                t = terms[k]
                sel = _format_selector(raw_terms[k].get("labelSelector") if k < len(raw_terms) else None)
                head = f"{label} term {k} (pods {sel}, topologyKey {t.topology_key})"
                if code < 0:
                    problems.append(f"{head}: node has no label {t.topology_key}")
                    continue
                value = c.label(t.topology_key).values[code]
                if anti:
                    who = self._matching_pods(t, t.topology_key, code)
                    problems.append(
                        f"{head}: {len(who)} matching pod(s) in {t.topology_key}={value}: {_names(who, 5)}"
                    )
                else:
                    arr = counts.get(t.topology_key)
                    anywhere = int(arr.sum()) if arr is not None else 0
                    where = (
                        "no pod matching every podAffinity term runs anywhere"
                        if anywhere == 0
                        else "no pod matching every podAffinity term runs there"
                    )
                    problems.append(f"{head}: {where} ({t.topology_key}={value})")
            drop = tuple(sorted({k for k, _ in sig}))
            patch = PodPatch(drop_anti_terms=drop) if anti else PodPatch(drop_affinity_terms=drop)
            desc = (
                "drop the required "
                + label
                + " term"
                + ("s " if len(drop) > 1 else " ")
                + ", ".join(f"{k} (topologyKey {terms[k].topology_key})" for k in drop)
            )
            change = Change(
                "drop-" + ("anti-affinity" if anti else "affinity") + "-term", "pod", desc, pod=patch
            )
            out.append(_Diag(members, "; ".join(problems), {"terms": list(drop)}, change))
            if top:
                self.singles.setdefault(patch, change)
                for k in drop:
                    p1 = PodPatch(drop_anti_terms=(k,)) if anti else PodPatch(drop_affinity_terms=(k,))
                    self.singles.setdefault(
                        p1,
                        Change(
                            change.kind,
                            "pod",
                            f"drop the required {label} term {k} (topologyKey {terms[k].topology_key})",
                            pod=p1,
                        ),
                    )
        return out

    def _matching_pods(self, t: ipa.AffinityTerm, key: str, code: int) -> list[str]:
        """The assigned pods matching ``t`` on nodes whose label ``key`` has value code ``code``."""
        c = self.cluster
        memo = (t.match_sig, key, code, c.generation)
        got = self._matching.get(memo)
        if got is not None:
            return got
        codes = c.label(key).codes
        out: list[str] = []
        for g in c.groups():
            if not t.matches(g.namespace, g.labels, None):
                continue
            at = np.flatnonzero(codes[g.node_array()] == code)
            out.extend(g.pods[int(k)].key for k in at)
        got = sorted(out)
        self._matching[memo] = got
        return got

    def blockers(self, pod: Pod) -> list[tuple[Pod, ipa.AffinityTerm, int]]:
        """Assigned pods whose required anti-affinity terms match ``pod``: (pod, term, its node)."""
        if self._blockers is not None and pod is self.pod:
            return self._blockers
        c = self.cluster
        ns_labels = c.objects.namespace_labels(pod.namespace)
        out = []
        for p in c.assigned_pods():
            aff = p.spec.get("affinity")
            if not isinstance(aff, dict) or not isinstance(aff.get("podAntiAffinity"), dict):
                continue
            node = c.node_of(p)
            if node is None:
                continue
            for t in ipa.pod_terms(p).required_anti:
                if t.matches(pod.namespace, pod.labels, ns_labels):
                    out.append((p, t, node))
        if pod is self.pod:
            self._blockers = out
        return out

    def _diag_existing_anti(self, pod: Pod, nodes: IntArray) -> list[_Diag]:
        c = self.cluster
        blockers = self.blockers(pod)
        hits = np.zeros((len(blockers), len(nodes)), dtype=bool)
        for b, (_, t, pnode) in enumerate(blockers):
            codes = c.label(t.topology_key).codes
            own = codes[pnode]
            if own >= 0:
                hits[b] = codes[nodes] == own
        groups: dict[tuple[int, ...], list[int]] = {}
        for pos in range(len(nodes)):
            groups.setdefault(tuple(np.flatnonzero(hits[:, pos]).tolist()), []).append(pos)
        out = []
        for row, positions in groups.items():
            members = nodes[np.asarray(positions, dtype=np.int64)]
            if not row:
                out.append(_Diag(members, "no existing pod's anti-affinity found that matches", {}, None))
                continue
            parts = []
            for b in row:
                p, t, pnode = blockers[b]
                value = c.nodes[pnode].labels.get(t.topology_key)
                parts.append(
                    f"pod {p.key} (on {c.names[pnode]}) has required anti-affinity to pods like this one "
                    f"(topologyKey {t.topology_key}, {t.topology_key}={value})"
                )
            uids = tuple(sorted({blockers[b][0].uid for b in row}))
            keys = sorted({blockers[b][0].key for b in row})
            change = Change(
                "evict",
                "node",
                "evict pod(s) " + ", ".join(keys) + " whose anti-affinity rejects this pod",
                evict=uids,
                details={"pods": keys},
            )
            out.append(_Diag(members, "; ".join(parts), {"pods": keys}, change))
        return out

    # PodTopologySpread ---------------------------------------------------------------------------
    def _diag_spread(self, pod: Pod, nodes: IntArray, top: bool) -> list[_Diag]:
        plugin = self.fw.instances.get(pts.NAME)
        if plugin is None:
            return self._generic(nodes, (pts.ERR_REASON_CONSTRAINTS_NOT_MATCH,), "")
        state = CycleState(self.cluster)
        _, s = plugin.pre_filter(state, pod)
        pfs = state.get(pts.PRE_FILTER_STATE_KEY)
        if not s.is_success() or not isinstance(pfs, pts.PreFilterState):
            return self._generic(nodes, (pts.ERR_REASON_CONSTRAINTS_NOT_MATCH,), "")
        own = plugin.constraints(pod, self.cluster.objects).has_own
        raw = pod.spec.get("topologySpreadConstraints") or []
        raw_index = [
            i
            for i, r in enumerate(raw)
            if isinstance(r, dict) and r.get("whenUnsatisfiable") == "DoNotSchedule"
        ]
        rows = []
        for e in pfs.entries:
            codes = e.codes[nodes]
            missing = codes < 0
            match = np.where(missing, 0, e.counts[np.maximum(codes, 0)] if len(e.counts) else 0)
            skew = match + e.self_match - e.min_match
            bad = missing | (skew > e.constraint.max_skew)
            rows.append((bad, codes, match, skew))
        groups: dict[tuple[Any, ...], list[int]] = {}
        for pos in range(len(nodes)):
            sig = tuple(
                (k, int(codes[pos]), int(match[pos]), int(skew[pos]))
                for k, (bad, codes, match, skew) in enumerate(rows)
                if bad[pos]
            )
            groups.setdefault(sig, []).append(pos)
        out = []
        for sig, positions in groups.items():
            members = nodes[np.asarray(positions, dtype=np.int64)]
            if not sig:
                out.append(_Diag(members, "no violated spread constraint found", {}, None))
                continue
            problems = []
            skews: list[tuple[int, int]] = []
            drops: list[int] = []
            descs = []
            details = []
            for k, code, matching, needed in sig:
                e = pfs.entries[k]
                con = e.constraint
                head = f"spread constraint {k} (topologyKey {con.topology_key}, maxSkew {con.max_skew})"
                ri = raw_index[k] if own and k < len(raw_index) else None
                if code < 0:
                    problems.append(f"{head}: node has no label {con.topology_key}")
                    details.append({"constraint": k, "missingLabel": con.topology_key})
                    if ri is not None:
                        drops.append(ri)
                        descs.append(f"drop the {con.topology_key} spread constraint")
                    continue
                value = e.values[code]
                domains = int(e.domains.sum())
                mins = (
                    f"global minimum {e.min_match}"
                    if domains >= con.min_domains
                    else f"global minimum 0 ({domains} domain(s) < minDomains {con.min_domains})"
                )
                self_part = " + 1 for this pod" if e.self_match else ""
                problems.append(
                    f"{head}: {con.topology_key}={value} has {matching} matching pod(s){self_part}, {mins}: "
                    f"skew {needed} > {con.max_skew}"
                )
                details.append(
                    {
                        "constraint": k,
                        "domain": value,
                        "matching": matching,
                        "globalMinimum": e.min_match,
                        "skew": needed,
                    }
                )
                if ri is not None:
                    skews.append((ri, needed))
                    descs.append(f"raise maxSkew of the {con.topology_key} spread constraint to {needed}")
            if not own:
                out.append(
                    _Diag(
                        members,
                        "; ".join(problems) + " (the constraint comes from the profile's defaultConstraints)",
                        {"constraints": details},
                        None,
                    )
                )
                continue
            patch = PodPatch(spread_skew=tuple(sorted(skews)), drop_spread=tuple(sorted(drops)))
            change = Change("relax-spread", "pod", " and ".join(descs), pod=patch)
            out.append(_Diag(members, "; ".join(problems), {"constraints": details}, change))
            if top:
                self.singles.setdefault(patch, change)
                for k, *_ in sig:
                    if k < len(raw_index):
                        p1 = PodPatch(drop_spread=(raw_index[k],))
                        key = pfs.entries[k].constraint.topology_key
                        self.singles.setdefault(
                            p1, Change("relax-spread", "pod", f"drop the {key} spread constraint", pod=p1)
                        )
        return out

    # Volumes and devices -------------------------------------------------------------------------
    def _diag_storage(self, pod: Pod, nodes: IntArray, plugin: str, reasons: tuple[str, ...]) -> _Diag:
        objects = self.cluster.objects
        named: list[str] = []
        details: dict[str, Any] = {}
        if plugin == DRA_PLUGIN:
            claims = []
            for rc in pod.spec.get("resourceClaims") or []:
                if not isinstance(rc, dict):
                    continue
                if rc.get("resourceClaimName"):
                    claims.append(f"ResourceClaim {pod.namespace}/{rc['resourceClaimName']}")
                elif rc.get("resourceClaimTemplateName"):
                    claims.append(f"ResourceClaimTemplate {pod.namespace}/{rc['resourceClaimTemplateName']}")
            named.extend(claims)
            details["claims"] = claims
        else:
            volumes = []
            for v in pod.spec.get("volumes") or []:
                if not isinstance(v, dict):
                    continue
                src = v.get("persistentVolumeClaim")
                claim = src.get("claimName") if isinstance(src, dict) else None
                if claim is None and isinstance(v.get("ephemeral"), dict):
                    claim = f"{pod.name}-{v.get('name', '')}"
                if not claim:
                    continue
                entry: dict[str, Any] = {"claim": f"{pod.namespace}/{claim}"}
                text = f"PersistentVolumeClaim {pod.namespace}/{claim}"
                pvc = objects.get("PersistentVolumeClaim", f"{pod.namespace}/{claim}")
                if pvc is None:
                    text += " (not in the snapshot)"
                else:
                    spec = pvc.raw.get("spec") or {}
                    pv_name = spec.get("volumeName")
                    sc = spec.get("storageClassName")
                    if sc:
                        entry["storageClass"] = sc
                    if pv_name:
                        entry["volume"] = pv_name
                        text += f" bound to PersistentVolume {pv_name}"
                        pv = objects.get("PersistentVolume", str(pv_name))
                        if pv is not None:
                            zones = {
                                k: val
                                for k, val in pv.meta.labels.items()
                                if k.endswith("/zone") or k.endswith("/region")
                            }
                            if zones:
                                entry["topology"] = zones
                            affinity = (pv.raw.get("spec") or {}).get("nodeAffinity")
                            if affinity:
                                entry["nodeAffinity"] = affinity
                                text += f" (node affinity: {_pv_affinity_text(affinity)})"
                            elif zones:
                                text += " (" + ", ".join(f"{k}={v}" for k, v in sorted(zones.items())) + ")"
                    else:
                        text += " (unbound" + (f", storageClass {sc})" if sc else ")")
                volumes.append(entry)
                named.append(text)
            details["volumes"] = volumes
        text = "; ".join(reasons)
        if named:
            text += " — " + "; ".join(named)
        return _Diag(nodes, text, details, None)

    # ----- the winner ------------------------------------------------------------------------------
    def compare(self, rec: CycleRecord, winner: int, other: int) -> Comparison:
        return compare_scores(rec, self.names, winner, other)


def compare_scores(rec: CycleRecord, names: Sequence[str], winner: int, other: int) -> Comparison:
    """Node ``other`` against the feasible node ``winner`` (node indices) in the cycle ``rec``: per
    score plugin, both weighted scores and their difference; not feasible when ``rec`` did not
    find ``other`` feasible."""
    name = names[other]
    assert rec.feasible is not None
    pos = {int(n): k for k, n in enumerate(rec.feasible.tolist())}
    kw, ko = pos[winner], pos.get(other)
    if ko is None:
        return Comparison(name, feasible=False)
    totals = rec.totals
    tw = int(totals[kw]) if totals is not None else 0
    to = int(totals[ko]) if totals is not None else 0
    plugins: dict[str, dict[str, int]] = {}
    if rec.normalized_scores is not None and rec.raw_scores is not None:
        for p, plugin in enumerate(rec.score_plugins):
            weight = rec.score_weights[p]
            w = int(rec.normalized_scores[p, kw]) * weight
            o = int(rec.normalized_scores[p, ko]) * weight
            plugins[plugin] = {
                "weight": weight,
                "winner": w,
                "other": o,
                "difference": w - o,
                "winnerRaw": int(rec.raw_scores[p, kw]),
                "otherRaw": int(rec.raw_scores[p, ko]),
            }
    return Comparison(name, True, total=to, margin=tw - to, tied=tw == to, plugins=plugins)


def recorded_verdict(
    rec: CycleRecord, reasons: Sequence[tuple[str, ...]], node: int
) -> dict[str, Any] | None:
    """How the cycle ``rec`` rejected ``node`` ({plugin, code, reasons}, as ``rejected`` groups
    them), or None when it passed or was not evaluated."""
    if rec.filter_codes is None or rec.filter_plugins is None or rec.filter_reasons is None:
        return None
    code = int(rec.filter_codes[node])
    if code in (0, NOT_EVALUATED):
        return None
    pid, rid = int(rec.filter_plugins[node]), int(rec.filter_reasons[node])
    said = tuple(reasons[rid]) if 0 <= rid < len(reasons) else ()
    return {"plugin": _plugin_name(rec, pid, said), "code": Code(code).name, "reasons": list(said)}


def _plugin_name(rec: CycleRecord, pid: int, reasons: Sequence[str]) -> str:
    """The rejecting filter plugin; nodes a PreFilter result left out name the PreFilter plugins."""
    plugin = rec.filter_plugin_names[pid] if 0 <= pid < len(rec.filter_plugin_names) else ""
    if not plugin and reasons and reasons[0].startswith(NARROWED_PREFIX):
        plugin = reasons[0][len(NARROWED_PREFIX) :].rstrip("]")
    return plugin


def _pv_affinity_text(affinity: Any) -> str:
    terms = ((affinity or {}).get("required") or {}).get("nodeSelectorTerms") or []
    texts = []
    for t in terms:
        if isinstance(t, dict):
            reqs = [*(t.get("matchExpressions") or []), *(t.get("matchFields") or [])]
            texts.append(" and ".join(_format_requirement(e) for e in reqs))
    return " or ".join(texts) if texts else "none"


def _ports_conflict(a: nports.HostPort, b: nports.HostPort) -> bool:
    """HostPortInfo.CheckConflict for one pair: same protocol and port, and 0.0.0.0 on either side or
    the same IP."""
    if a[1] != b[1] or a[2] != b[2]:
        return False
    any_ip = nports.DEFAULT_BIND_ALL_HOST_IP
    return a[0] == any_ip or b[0] == any_ip or a[0] == b[0]


def _toleration_dicts(taints: Sequence[Taint]) -> list[dict[str, str]]:
    out = []
    for t in taints:
        if t.value:
            out.append({"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect})
        else:
            out.append({"key": t.key, "operator": "Exists", "effect": t.effect})
    return out


def _raw_required(pod: Pod, key: str) -> list[dict[str, Any]]:
    aff = pod.spec.get("affinity")
    block = aff.get(key) if isinstance(aff, dict) else None
    terms = block.get(REQUIRED) if isinstance(block, dict) else None
    return [t if isinstance(t, dict) else {} for t in terms] if isinstance(terms, list) else []


# ----- entry point -----------------------------------------------------------------------------------
def _find_pod(snapshot: Snapshot, key: str) -> str:
    if not key or key.count("/") > 1:
        raise InputError(f"invalid pod {key!r}: expected namespace/name", field="pod")
    full = key if "/" in key else f"default/{key}"
    for p in snapshot.pods:
        if p.key != full:
            continue
        if p.terminal:
            raise InputError(f"the pod has finished ({p.phase}): it has no scheduling cycle", obj=p.ident)
        if p.node_name:
            raise InputError(
                f"the pod is not pending: it is bound to node {p.node_name} (spec.nodeName); "
                "only pending pods have a scheduling cycle to explain",
                obj=p.ident,
            )
        return full
    raise InputError("no such pod in the snapshot", obj=f"Pod {full}")


def explain(
    snapshot: Snapshot,
    pod: str,
    *,
    config: SchedulerConfig | None = None,
    options: ReplayOptions | None = None,
    nodes: list[str] | None = None,
    max_suggestions: int = 50,
    max_checks: int = 200,
    max_fixes: int = 100,
) -> Explanation:
    """Explain the scheduling cycle of the pending pod ``pod`` ("namespace/name") of ``snapshot``.

    ``nodes`` names nodes to compare with the winner (or to explain the rejection of);
    ``max_checks`` caps the PreFilter + Filter re-runs used to check changes, ``max_fixes`` the
    diagnosed groups listed and ``max_suggestions`` the ranked single changes.
    Raises InputError for an unknown or non-pending pod or an unknown node.
    """
    key = _find_pod(snapshot, pod)
    names = [n.name for n in snapshot.nodes]
    known = set(names)
    for n in nodes or []:
        if n not in known:
            raise InputError(f"no node {n!r} in the snapshot", field="nodes")
    rp = Replay(snapshot, config, options or ReplayOptions())
    target = rp.run_until(key)
    ex, _ = explain_replay(
        rp,
        target,
        nodes=nodes,
        max_suggestions=max_suggestions,
        max_checks=max_checks,
        max_fixes=max_fixes,
    )
    return ex


def explain_replay(
    rp: Replay,
    target: Pod,
    *,
    nodes: list[str] | None = None,
    max_suggestions: int = 50,
    max_checks: int = 200,
    max_fixes: int = 100,
) -> tuple[Explanation, CycleRecord]:
    """Explain ``target``'s next cycle in ``rp`` as the replay stands (whatever the caller ran before
    it), then run that cycle with the replay's options: the explanation and the cycle's record
    (appended to the replay's trace). ``explain`` is this after replaying the cycles before the pod.

    The what-if checks leave the replay as they found it, so the record is the cycle the replay
    would have run without them. Raises InputError for a node ``rp`` does not have.
    """
    for n in nodes or []:
        if n not in rp.cluster.index:
            raise InputError(f"no node {n!r} in the snapshot", field="nodes")
    options = rp.options
    key = target.key
    fw = rp.frameworks.get(target.scheduler_name)
    if fw is None:
        rec = rp.schedule_one(target)
        rp.trace.cycles.append(rec)
        return (
            Explanation(
                pod=key,
                profile=None,
                result=rec.result,
                seq=rec.seq,
                message=rec.error,
                node_count=rp.cluster.n,
                feasible_count=0,
                error=rec.error,
                scheduler=_decision(rec, options),
                notes=[f"profiles of the configuration: {', '.join(rp.frameworks) or 'none'}"],
            ),
            rec,
        )
    rec = rp.preview(target, all_nodes=True)
    analysis = _Analysis(rp, fw, target, max(0, max_checks))
    ex = Explanation(
        pod=key,
        profile=fw.name,
        result=rec.result,
        seq=rec.seq,
        message=rec.message,
        node_count=rp.cluster.n,
        feasible_count=0 if rec.feasible is None else len(rec.feasible),
        error=rec.error,
        max_checks=max(0, max_checks),
    )
    if rec.result == "Gated":
        gates = ", ".join(target.scheduling_gates)
        ex.notes.append(
            f"the pod waits for its scheduling gates ({gates}); remove them to let it be scheduled"
        )
    if rec.filter_codes is not None:
        # the what-if checks re-run PreFilter and Filter: plugins must not change lasting state
        rp.waiting.dry_run = True
        try:
            _explain_cycle(ex, analysis, rec, nodes or [], max_suggestions, max_fixes)
        finally:
            rp.waiting.dry_run = False
    ex.checks = analysis.checks
    ex.capped = analysis.capped
    if analysis.capped:
        ex.notes.append(
            f"checks capped at {analysis.max_checks} PreFilter+Filter runs: changes listed as unchecked were not verified"
        )
    actual = rp.schedule_one(target)
    rp.trace.cycles.append(actual)
    ex.scheduler = _decision(actual, options)
    if not options.all_nodes and actual.selected_node != rec.selected_node and actual.result == "Scheduled":
        evaluated = 0 if actual.evaluation_order is None else len(actual.evaluation_order)
        ex.notes.append(
            f"with its node sampling the scheduler evaluated {evaluated} of {rp.cluster.n} nodes and selected "
            f"{actual.selected_node}; with every node evaluated, {rec.selected_node} scores best"
        )
    return ex, actual


def _decision(rec: CycleRecord, options: ReplayOptions) -> dict[str, Any]:
    return {
        "allNodes": options.all_nodes,
        "result": rec.result,
        "selectedNode": rec.selected_node,
        "message": rec.message,
        "nominatedNode": rec.nominated_node,
        "evaluatedNodes": 0 if rec.evaluation_order is None else len(rec.evaluation_order),
        "error": rec.error,
    }


def _trace_verdicts(rp: Replay, rec: CycleRecord) -> list[tuple[Verdict, IntArray]]:
    """Rejected nodes of the cycle grouped by (code, plugin, reasons), largest group first."""
    assert rec.filter_codes is not None and rec.filter_plugins is not None and rec.filter_reasons is not None
    codes = rec.filter_codes.astype(np.int64)
    rejected = np.flatnonzero((codes != 0) & (codes != NOT_EVALUATED))
    if len(rejected) == 0:
        return []
    key = (
        (codes[rejected] << 48)
        + ((rec.filter_plugins[rejected].astype(np.int64) + 1) << 32)
        + (rec.filter_reasons[rejected].astype(np.int64) + 1)
    )
    out = []
    for k in np.unique(key).tolist():
        members = rejected[key == k]
        first = int(members[0])
        pid = int(rec.filter_plugins[first])
        rid = int(rec.filter_reasons[first])
        reasons = rp.reasons.items[rid] if rid >= 0 else ()
        plugin = _plugin_name(rec, pid, reasons)
        out.append(((int(codes[first]), plugin, reasons), members.astype(np.int64)))
    out.sort(key=lambda vn: (-len(vn[1]), vn[0][1], vn[0][2]))
    return out


def _explain_cycle(
    ex: Explanation,
    an: _Analysis,
    rec: CycleRecord,
    named: list[str],
    max_suggestions: int,
    max_fixes: int,
) -> None:
    names = an.names
    feasible = [] if rec.feasible is None else rec.feasible.tolist()
    # the nodes feasible as things are, every node filtered (the cycle may stop early without
    # score plugins); "more feasible nodes" counts against these
    everyone = an.full(PodPatch())
    an.baseline = set(feasible) if everyone is None else {i for i, v in enumerate(everyone) if v[0] == 0}
    an.wanted = {an.cluster.index[n] for n in named}
    # why here?
    if rec.selected_node is not None and rec.scored and rec.totals is not None:
        winner = an.cluster.index[rec.selected_node]
        ex.selected_node = rec.selected_node
        ex.tied = rec.tied_names(names)
        ex.winner_total = rec.node_total(winner)
        totals = rec.totals.tolist()
        others = sorted((-t, i) for i, t in zip(feasible, totals, strict=True) if i != winner)
        if others:
            ex.runner_up = an.compare(rec, winner, others[0][1])
    # why not there?
    groups = _trace_verdicts(an.rp, rec)
    for (code, plugin, reasons), members in groups:
        ex.rejected.append(
            {
                "plugin": plugin,
                "code": Code(code).name,
                "reasons": list(reasons),
                "count": len(members),
                "nodes": [names[int(i)] for i in members],
            }
        )
    # what would make it fit? (named nodes are diagnosed first, so that they are checked first)
    fixes = an.fixes(groups)
    wanted = set(named)
    fixes.sort(
        key=lambda f: (
            not (wanted & set(f.nodes)),
            ["fits", "partly", "still-fails", "unchecked", "no-suggestion"].index(f.verdict),
            -len(f.nodes),
        )
    )
    ex.fixes = fixes[:max_fixes]
    ex.fixes_omitted = max(0, len(fixes) - max_fixes)
    # the nodes the caller named
    for n in named:
        i = an.cluster.index[n]
        if ex.selected_node is not None and i in an.baseline:
            if n == ex.selected_node:
                continue
            ex.comparisons.append(an.compare(rec, an.cluster.index[ex.selected_node], i))
            continue
        verdict = None
        for g in ex.rejected:
            if n in g["nodes"]:
                verdict = {"plugin": g["plugin"], "code": g["code"], "reasons": g["reasons"]}
        comp = Comparison(n, feasible=i in an.baseline, rejected=verdict)
        comp.fixes = node_story(fixes, n)
        if comp.feasible:
            comp.rejected = None
        ex.comparisons.append(comp)
    # single changes ranked (unschedulable pods)
    if not feasible:
        ex.suggestions, ex.suggestions_omitted = _rank(an, fixes, max_suggestions)


def _rank(an: _Analysis, fixes: list[Fix], limit: int) -> tuple[list[Suggestion], int]:
    out: list[Suggestion] = []
    candidates: dict[PodPatch, Change] = dict(an.singles)
    for f in fixes:
        if f.change is not None and f.change.scope == "pod":
            candidates.setdefault(f.change.pod, f.change)
    order = sorted(candidates.items(), key=lambda pc: pc[1].description)
    for patch, change in order:
        verdicts = an.full(patch)
        if verdicts is None:
            continue
        newly = [i for i, v in enumerate(verdicts) if v[0] == 0 and i not in an.baseline]
        if newly:
            out.append(Suggestion(change, len(newly), [an.names[i] for i in newly]))
    for f in fixes:
        if f.change is not None and f.change.scope == "node" and f.passes:
            # a node change makes one node feasible: any one of these
            out.append(Suggestion(f.change, 1, list(f.passes)))
    out.sort(key=lambda s: (-s.feasible_nodes, s.change.scope != "pod", s.change.description))
    return out[:limit], max(0, len(out) - limit)


def node_story(fixes: list[Fix], node: str) -> list[str]:
    """For one node, every chain of changes found and where it ends: "A [alone: would then fail P:
    reason] + B -> fits (checked)"."""
    return stored_node_story([f.to_dict() for f in fixes], node)


def stored_node_story(fixes: Sequence[dict[str, Any]], node: str) -> list[str]:
    """``node_story`` from the fixes as ``Explanation.to_dict`` gives them (a stored explanation)."""
    out: list[str] = []

    def walk(fs: Sequence[dict[str, Any]], path: str) -> None:
        for f in fs:
            if node not in f.get("nodes", ()):
                continue
            change = f.get("change")
            if change is None:
                out.append(f"{path}{f.get('plugin', '')}: {f.get('diagnosis', '')}: no change suggested")
                continue
            step = path + str(change.get("description", ""))
            if node in f.get("passes", ()):
                out.append(f"{step} -> fits (checked)")
            elif node in f.get("unchecked", ()):
                out.append(f"{step} -> not checked (check limit reached)")
            for t in f.get("thenFails", ()):
                if node not in t.get("nodes", ()):
                    continue
                fail = f"would then fail {t.get('plugin', '')}: {', '.join(t.get('reasons', ()))}"
                following = t.get("next", ())
                if not any(node in nf.get("nodes", ()) for nf in following):
                    out.append(f"{step} -> {fail}")
                walk(following, f"{step} [alone: {fail}] + ")

    walk(fixes, "")
    return out


# ----- text ------------------------------------------------------------------------------------------
def render_text(ex: Explanation) -> str:
    lines = [f"pod {ex.pod}  (profile {ex.profile or '-'}, cycle {ex.seq})"]
    sched = ex.scheduler
    if sched:
        lines.append(
            f"scheduler: {sched.get('result')}"
            + (f" on {sched['selectedNode']}" if sched.get("selectedNode") else "")
            + ("" if sched.get("allNodes") else f" ({sched.get('evaluatedNodes')} nodes evaluated)")
        )
        if sched.get("message") and sched.get("result") != "Scheduled":
            lines.append(f"  {sched['message']}")
    if ex.result in ("Gated", "NotHandled"):
        lines.append(f"not filtered: {ex.result}")
    else:
        lines.append(
            f"every node evaluated: {ex.result}; {ex.feasible_count} of {ex.node_count} nodes feasible"
            + (f"; selected {ex.selected_node}" if ex.selected_node else "")
        )
    if ex.error:
        lines.append(f"  error: {ex.error}")
    if ex.selected_node:
        lines.append("")
        lines.append(f"why {ex.selected_node}? total score {ex.winner_total} (weighted, every node scored)")
        if len(ex.tied) > 1:
            lines.append(
                f"  tied with {_names([t for t in ex.tied if t != ex.selected_node])}: first in snapshot order wins"
            )
        if ex.runner_up is not None:
            lines.extend(_comparison_lines(ex.runner_up, "runner-up"))
        elif ex.feasible_count == 1:
            lines.append("  it is the only feasible node")
    for comp in ex.comparisons:
        if comp.feasible:
            lines.extend(_comparison_lines(comp, "compared"))
        else:
            lines.append("")
            rej = comp.rejected
            if rej is None:
                lines.append(f"why not {comp.node}? it was not evaluated")
            else:
                lines.append(f"why not {comp.node}? {rej['plugin']}: {', '.join(rej['reasons'])}")
            for s in comp.fixes:
                lines.append(f"  {s}")
    if ex.rejected:
        lines.append("")
        lines.append("rejected nodes:")
        for g in ex.rejected:
            lines.append(f"  {g['count']:>5}  {g['plugin'] or '-'} ({g['code']}): {', '.join(g['reasons'])}")
            lines.append(f"         {_names(g['nodes'], 8)}")
    if ex.fixes:
        lines.append("")
        lines.append("what would make it fit:")
        for f in ex.fixes:
            lines.extend(_fix_lines(f, "  "))
        if ex.fixes_omitted:
            lines.append(f"  ... and {ex.fixes_omitted} more diagnoses")
    if ex.suggestions:
        lines.append("")
        lines.append("single changes ranked by the nodes they make feasible:")
        node_changes = [sug for sug in ex.suggestions if sug.change.scope == "node"]
        shown = [
            sug
            for sug in ex.suggestions
            if sug.change.scope == "pod" or sug in node_changes[:TEXT_NODE_CHANGES]
        ]
        for sug in shown:
            if sug.change.scope == "node":
                target = f"on any one of {_names(sug.nodes, 5)}"
            else:
                target = _names(sug.nodes, 5)
            lines.append(
                f"  {sug.feasible_nodes:>5}  [{sug.change.scope}] {sug.change.description}: {target}"
            )
        hidden = len(ex.suggestions) - len(shown) + ex.suggestions_omitted
        if hidden:
            lines.append(f"  ... and {hidden} more")
    elif ex.result == "Unschedulable" and ex.fixes:
        lines.append("")
        lines.append("no single change found that makes a node feasible")
    if ex.notes:
        lines.append("")
        lines.extend(f"note: {n}" for n in ex.notes)
    return "\n".join(lines) + "\n"


def _comparison_lines(c: Comparison, label: str) -> list[str]:
    head = f"  {label} {c.node}: total {c.total}, " + ("tied" if c.tied else f"{c.margin} behind")
    out = [head]
    diffs = sorted(c.plugins.items(), key=lambda kv: (-abs(kv[1]["difference"]), kv[0]))
    for name, d in diffs:
        if d["difference"]:
            out.append(f"      {name:<34} {d['winner']:>5} vs {d['other']:>5}  ({d['difference']:+d})")
    return out


def _fix_lines(f: Fix, indent: str) -> list[str]:
    out = [f"{indent}{_names(f.nodes, 6)}: {f.plugin}: {f.diagnosis}"]
    if f.change is None:
        out.append(f"{indent}  no change suggested")
        return out
    status = {
        "fits": "fits (checked)",
        "partly": f"fits on {len(f.passes)} of {len(f.nodes)} (checked)",
        "still-fails": "not enough alone (checked)",
        "unchecked": "not checked (check limit reached)",
    }[f.verdict]
    extra = ""
    if f.more_feasible is not None:
        extra = f"; makes {f.more_feasible} more node(s) feasible"
    out.append(f"{indent}  change: {f.change.description} -> {status}{extra}")
    for t in f.then:
        out.append(f"{indent}  on {_names(t.nodes, 6)} it would then fail {t.plugin}: {', '.join(t.reasons)}")
        for nf in t.next:
            out.extend(_fix_lines(nf, indent + "    "))
    return out
