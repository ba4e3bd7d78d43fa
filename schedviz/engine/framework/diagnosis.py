"""What a plugin says when explain asks why it rejected nodes, and the changes it may suggest.

explain (schedviz/engine/explain/) re-runs PreFilter and Filter with changes applied to find what
would make a pod fit. For the nodes a plugin rejected it asks that plugin: a plugin class may define

    def diagnose(self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray,
                 reasons: tuple[str, ...]) -> list[Diagnosis] | None

which groups ``nodes`` (the rejected nodes, indices into ``ctx.cluster``) by what is wrong and
returns a ``Diagnosis`` per group: the text, JSON-ready details and the ``Change`` that should make
the group pass (``None`` when nothing the pod or the node could change helps). explain checks every
change by filtering again. ``None`` (or no ``diagnose`` method) gives the plugin's reasons as the
diagnosis. Built-in plugins and custom ones use the same hook; a plugin whose PreFilter result
narrows the nodes sets ``explains_prefilter_result = True`` to be asked about nodes several
PreFilter results left out together.

A change is to the pod (``scope`` "pod", a ``PodPatch``: the vocabulary of what-ifs on the pod's spec)
or to the node being checked ("node": more allocatable, uncordon, evictions).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from ..objects import Pod
from ..quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from ..taints import Taint

if TYPE_CHECKING:
    from ..cluster import ClusterState

IntArray = npt.NDArray[np.int64]

# (host IP, protocol, port), as NodePorts keeps a container's host port (plugins/nodeports.py)
HostPort = tuple[str, str, int]
# How many nodes are named in lists that could be long (matching pods, suggestion targets).
MAX_NAMED = 20
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
# v1.ContainerPort's defaults, as NodePorts applies them (plugins/nodeports.py)
_ANY_HOST_IP = "0.0.0.0"
_DEFAULT_PROTOCOL = "TCP"


# ----- words -----------------------------------------------------------------------------------------
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


def format_cores(milli: int) -> str:
    """Milli-CPU in cores, to the millicore: 40, 32.6, 0.25 (one unit, so that amounts compare at a glance)."""
    whole, frac = divmod(abs(milli), 1000)
    sign = "-" if milli < 0 else ""
    return f"{sign}{whole}" if frac == 0 else f"{sign}{whole}.{frac:03d}".rstrip("0")


def format_amount(resource: str, amount: int) -> str:
    """A quantity in the scheduler's units (milli-CPU, bytes, counts) as a person reads it: CPU in
    cores, memory in binary units, the rest as counts."""
    if resource == CPU:
        return format_cores(amount)
    if resource in (MEMORY, EPHEMERAL_STORAGE) or resource.startswith("hugepages-"):
        return format_bytes(amount)
    return str(amount)


def resource_words(resource: str, amount: int) -> str:
    """'300m more CPU', '512Mi more memory', '1 more pod slot', '2 more nvidia.com/gpu'."""
    if resource == CPU:
        return f"{format_amount(resource, amount)} more CPU"
    if resource == PODS:
        return f"{amount} more pod slot" + ("s" if amount != 1 else "")
    return f"{format_amount(resource, amount)} more {resource}"


def format_taint(t: Taint) -> str:
    """kubectl's notation: key=value:Effect (key:Effect without a value)."""
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def format_selector(raw: Any) -> str:
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


def format_requirement(raw: Any) -> str:
    if not isinstance(raw, dict):
        return str(raw)
    values = raw.get("values")
    tail = f" [{', '.join(map(str, values))}]" if values else ""
    return f"{raw.get('key', '')} {raw.get('operator', '')}{tail}"


def name_list(names: Sequence[str], limit: int = MAX_NAMED) -> str:
    """Names joined with commas, the ones past ``limit`` counted."""
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def toleration_dicts(taints: Sequence[Taint]) -> list[dict[str, str]]:
    """The tolerations that tolerate ``taints``, as a pod spec writes them."""
    out = []
    for t in taints:
        if t.value:
            out.append({"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect})
        else:
            out.append({"key": t.key, "operator": "Exists", "effect": t.effect})
    return out


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
    drop_ports: tuple[HostPort, ...] = ()
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


def _sanitized_port(port: dict[str, Any]) -> HostPort | None:
    """A container port's host port as NodePorts reads it (plugins/nodeports.py), None without one."""
    hp = port.get("hostPort")
    if not isinstance(hp, int) or isinstance(hp, bool) or hp <= 0:
        return None
    return (
        str(port.get("hostIP") or _ANY_HOST_IP),
        str(port.get("protocol") or _DEFAULT_PROTOCOL),
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


@dataclass
class Diagnosis:
    """Some rejected nodes (indices), what is wrong with them, and the change that should help."""

    nodes: IntArray
    text: str
    details: dict[str, Any]
    change: Change | None


def generic(nodes: IntArray, reasons: tuple[str, ...], why: str = "") -> list[Diagnosis]:
    """The reasons as the diagnosis (``why`` appended), with no change."""
    return [Diagnosis(nodes, "; ".join(reasons) + (f" ({why})" if why else ""), {}, None)]


class DiagnosisContext(Protocol):
    """What explain gives a plugin's ``diagnose``.

    ``cluster`` is the cluster as the what-if stands (changes of earlier steps applied); ``target`` the
    pod explained, as written (``pod``, given to ``diagnose``, may be a modified copy); ``top`` is
    True when this is the first change looked for (not one after a change that was not enough):
    only then does ``suggest`` matter. ``plugin(name)`` is the profile's instance of another plugin
    (None when the profile lacks it); ``cache`` keeps what a plugin computed for this explanation.
    """

    cluster: ClusterState
    target: Pod
    top: bool
    cache: dict[Hashable, Any]

    def plugin(self, name: str) -> Any: ...

    def suggest(self, change: Change) -> None:
        """Offer a single pod change to rank among the suggestions (by the nodes it makes feasible)."""
        ...
