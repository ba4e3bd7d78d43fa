"""NodeAffinity: keeps pods on nodes matching their nodeSelector and required node affinity (and the
profile's ``addedAffinity``), and prefers nodes matching their preferred terms.

Mirrors framework/plugins/nodeaffinity/node_affinity.go (v1.35): PreFilter (Skip, node-name subset
from ``metadata.name`` matchFields, conflicting terms), Filter, PreScore (Skip), Score and
NormalizeScore (helper.DefaultNormalizeScore). Selector semantics live in ``..nodeselectors``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..apimachinery import ErrorList, is_label_key, is_label_value
from ..cluster import ClusterState
from ..errors import ConfigError
from ..framework import (
    MAX_NODE_SCORE,
    Code,
    CycleError,
    CycleState,
    Handle,
    PreFilterResult,
    Status,
    Verdicts,
)
from ..framework.diagnosis import (
    REQUIRED,
    Change,
    Diagnosis,
    DiagnosisContext,
    PodPatch,
    format_requirement,
    generic,
)
from ..nodeselectors import (
    NODE_NAME_FIELD,
    NodeSelector,
    NodeSelectorTerm,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    pod_preferred_terms,
    required_node_affinity,
)
from ..objects import Pod
from ..plugin_args import list_of, obj
from .helper import default_normalize_score

IntArray = npt.NDArray[np.int64]

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

# node_affinity.go
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_ADDED_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_ADDED_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def parse_added_affinity(
    raw: Any, path: str = "addedAffinity"
) -> tuple[NodeSelector | None, PreferredSchedulingTerms | None, list[str]]:
    """NodeAffinityArgs.addedAffinity: (required selector, preferred terms, parse errors).

    Mirrors ValidateNodeAffinityArgs / New: unlike a pod's own required terms, any parse error in
    the added affinity is an error (nodeaffinity.NewNodeSelector is not lazy). ``path`` prefixes the
    errors (e.g. "profiles[0].pluginConfig[1].args.addedAffinity")."""
    if raw is None:
        return None, None, []
    if not isinstance(raw, dict):
        return None, None, [f"{path}: expected a NodeAffinity object"]
    errs: list[str] = []
    required: NodeSelector | None = None
    preferred: PreferredSchedulingTerms | None = None
    req = raw.get(_ADDED_REQUIRED)
    if req is not None:
        required = NodeSelector.parse(
            req,
            obj="NodeAffinityArgs",
            field=f"{path}.{_ADDED_REQUIRED}",
            error_path=f"{path}.{_ADDED_REQUIRED}",
        )
        errs.extend(required.errors)
    pref = raw.get(_ADDED_PREFERRED)
    if pref:  # len(terms) != 0
        preferred = PreferredSchedulingTerms.parse(
            pref,
            obj="NodeAffinityArgs",
            field=f"{path}.{_ADDED_PREFERRED}",
            error_path=f"{path}.{_ADDED_PREFERRED}",
        )
        errs.extend(preferred.errors)
    return required, preferred, errs


def _required_terms(pod: Pod) -> list[Any] | None:
    """spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, or
    None when the required node selector itself is absent."""
    aff = pod.spec.get("affinity")
    if not isinstance(aff, dict):
        return None
    na = aff.get("nodeAffinity")
    if not isinstance(na, dict):
        return None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(req, dict):
        return None
    terms = req.get("nodeSelectorTerms")
    return terms if isinstance(terms, list) else []


def _pinned_node_names(terms: list[Any]) -> set[str] | None:
    """The node names the required terms restrict the pod to via ``metadata.name In`` matchFields.

    node_affinity.go PreFilter: requirements within a term intersect, terms union; a term without
    such a requirement allows every node (None)."""
    names: set[str] | None = None
    for t in terms:
        term_names: set[str] | None = None
        fields = t.get("matchFields") if isinstance(t, dict) else None
        for r in fields or ():
            if isinstance(r, dict) and r.get("key") == NODE_NAME_FIELD and r.get("operator") == "In":
                s = {str(v) for v in (r.get("values") or ())}
                term_names = s if term_names is None else term_names & s
        if term_names is None:
            return None
        names = term_names if names is None else names | term_names
    return names


# ----- args (kube-scheduler/config/v1 types_pluginargs.go NodeAffinityArgs,
# apis/config/validation/validation_pluginargs.go ValidateNodeAffinityArgs)

_NODE_SELECTOR_REQUIREMENT = obj(
    "v1.NodeSelectorRequirement", key="str", operator="str", values=list_of("str")
)
_NODE_SELECTOR_TERM = obj(
    "v1.NodeSelectorTerm",
    matchExpressions=list_of(_NODE_SELECTOR_REQUIREMENT),
    matchFields=list_of(_NODE_SELECTOR_REQUIREMENT),
)
ARGS_TYPE = obj(
    "v1.NodeAffinityArgs",
    addedAffinity=obj(
        "v1.NodeAffinity",
        requiredDuringSchedulingIgnoredDuringExecution=obj(
            "v1.NodeSelector", nodeSelectorTerms=list_of(_NODE_SELECTOR_TERM)
        ),
        preferredDuringSchedulingIgnoredDuringExecution=list_of(
            obj("v1.PreferredSchedulingTerm", weight="int32", preference=_NODE_SELECTOR_TERM)
        ),
    ),
)


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    return {"addedAffinity": a["addedAffinity"]} if "addedAffinity" in a else {}


_SELECTOR_OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


def _validate_requirement(req: dict[str, Any], path: str, errs: ErrorList) -> None:
    """labels.NewRequirement (apimachinery/pkg/labels/selector.go) for a node selector requirement."""
    key = req.get("key", "")
    op = req.get("operator", "")
    values: list[str] = req.get("values", [])
    shown_values: Any = values if "values" in req else None
    msgs = is_label_key(key)
    if msgs:
        errs.invalid(f"{path}.key", key, "; ".join(msgs))
    vpath = f"{path}.values"
    if op in ("In", "NotIn"):
        if not values:
            errs.invalid(vpath, shown_values, "for 'in', 'notin' operators, values set can't be empty")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.invalid(vpath, values, "values set must be empty for exists and does not exist")
    else:  # Gt, Lt
        if len(values) != 1:
            errs.invalid(vpath, shown_values, "for 'Gt', 'Lt' operators, exactly one value is required")
        for i, v in enumerate(values):
            if not re.fullmatch(r"[+-]?[0-9]+", v) or not -(2**63) <= int(v) < 2**63:
                errs.invalid(f"{vpath}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
    for i, v in enumerate(values):
        vmsgs = is_label_value(v)
        if vmsgs:
            errs.invalid(f"{vpath}[{i}][{key}]", v, "; ".join(vmsgs))


def _validate_node_selector_term(term: dict[str, Any], path: str, errs: ErrorList) -> None:
    """newNodeSelectorTerm (component-helpers/scheduling/corev1/nodeaffinity)."""
    for i, req in enumerate(term.get("matchExpressions", [])):
        p = f"{path}.matchExpressions[{i}]"
        op = req.get("operator", "")
        if op not in _SELECTOR_OPS:
            errs.not_supported(f"{p}.operator", op, _SELECTOR_OPS)
            continue
        _validate_requirement(req, p, errs)
    for i, req in enumerate(term.get("matchFields", [])):
        p = f"{path}.matchFields[{i}]"
        op = req.get("operator", "")
        if op in ("In", "NotIn"):
            values = req.get("values", [])
            if len(values) != 1:
                errs.invalid(f"{p}.values", values if "values" in req else None, "must have one element")
        else:
            errs.not_supported(f"{p}.operator", op, ["In", "NotIn"])


def _empty_term(term: dict[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    errs = ErrorList()
    affinity = a.get("addedAffinity")
    if affinity is None:
        return errs.items
    apath = "addedAffinity"
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        tpath = f"{apath}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        for i, term in enumerate(required.get("nodeSelectorTerms", [])):
            if not _empty_term(term):
                _validate_node_selector_term(term, f"{tpath}[{i}]", errs)
    ppath = f"{apath}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, pref in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution", [])):
        term = pref.get("preference", {})
        if pref.get("weight", 0) == 0 or _empty_term(term):
            continue
        _validate_node_selector_term(term, f"{ppath}[{i}]", errs)
    return errs.items


@dataclass
class _Req:
    """A nodeSelector entry (``where`` None) or one requirement of a required node affinity term
    (``where`` = (term index, "matchExpressions" | "matchFields", index)), judged on some nodes."""

    where: tuple[int, str, int] | None
    key: str
    text: str
    ok: npt.NDArray[np.bool_]
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


def _node_affinity_reqs(
    c: ClusterState, pod: Pod, nodes: IntArray
) -> tuple[list[_Req], list[tuple[int, list[int]]], bool]:
    """The pod's nodeSelector entries and required node affinity requirements, each judged on
    ``nodes``; the terms (raw index, their requirements); whether a required affinity exists."""
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
                reqs.append(_Req((ti, kind, j), key, format_requirement(e), ok, err))
        terms.append((ti, members))
    return reqs, terms, True


class NodeAffinity:
    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.added_selector, self.added_preferred, errs = parse_added_affinity(args.get("addedAffinity"))
        if errs:
            raise ConfigError([f"NodeAffinity: {e}" for e in errs])

    # ----- PreFilter / Filter ----------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        req = required_node_affinity(pod)  # parsed (and checked) once per pod
        terms = _required_terms(pod)
        if terms is None and self.added_selector is None and pod.spec.get("nodeSelector") is None:
            # nothing for Filter to do with this pod
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, req)
        if not terms:
            return None, Status.success()
        names = _pinned_node_names(terms)
        if names is None:
            return None, Status.success()
        if not names:
            # every term pins conflicting node names: no node can match
            return None, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return PreFilterResult(names), Status.success()

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        cluster = state.cluster
        v = Verdicts.build(len(nodes))
        if self.added_selector is not None:
            v.reject(
                ~self.added_selector.mask(cluster, nodes),
                Code.UnschedulableAndUnresolvable,
                ERR_REASON_ENFORCED,
            )
        req = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(req, RequiredNodeAffinity):
            # PreFilter disabled: parse here, as upstream falls back to
            req = required_node_affinity(pod)
        if not req.matches_everything():
            # parse errors are ignored: an unparsable term simply matches no node
            v.reject(~req.match_all(cluster)[nodes], Code.UnschedulableAndUnresolvable, ERR_REASON_POD)
        return v.done()

    # ----- PreScore / Score --------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: IntArray) -> Status:
        preferred = pod_preferred_terms(pod)
        if preferred is not None and preferred.errors:
            return Status.error(preferred.error_message())
        if preferred is None and self.added_preferred is None:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, preferred)
        return Status.success()

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        cluster = state.cluster
        out = np.zeros(len(nodes), dtype=np.int64)
        if self.added_preferred is not None:
            out += self.added_preferred.score(cluster, nodes)
        preferred = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(preferred, PreferredSchedulingTerms):
            preferred = pod_preferred_terms(pod)
        if preferred is not None:
            if preferred.errors:
                # only reachable with PreScore disabled; upstream's Score returns the error
                raise CycleError(preferred.error_message(), NAME)
            out += preferred.score(cluster, nodes)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, nodes: IntArray, scores: IntArray) -> IntArray:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    # this plugin's PreFilter result narrows the nodes: its diagnosis also covers nodes it left out
    # together with other plugins' results
    explains_prefilter_result = True

    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """Which nodeSelector entries and which requirements of the closest required term the node's
        labels fail; the change drops them (or the whole required affinity when the closest term
        fails entirely, as an emptied term would match no node)."""
        if ERR_REASON_ENFORCED in reasons:
            text = (
                "the profile's NodeAffinity addedAffinity (scheduler configuration) excludes the node; "
                "no change to the pod can help"
            )
            return [Diagnosis(nodes, text, {}, None)]
        c = ctx.cluster
        reqs, terms, has_required = _node_affinity_reqs(c, pod, nodes)
        if not reqs and not has_required:
            return generic(
                nodes, (ERR_REASON_POD,), "no nodeSelector or required node affinity found"
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
                out.append(Diagnosis(members, "the node matches the pod's node selector and affinity", {}, None))
                continue
            patch = PodPatch(
                drop_selector=tuple(sorted(reqs[r].key for r in sel_bad)),
                drop_node_reqs=tuple(sorted(drop_reqs)),
                drop_node_affinity=drop_all,
            )
            change = Change("relax-node-affinity", "pod", " and ".join(descs), pod=patch)
            details = {"failing": [reqs[r].label() for r in sorted(failing)]}
            out.append(Diagnosis(members, "; ".join(problems), details, change))
            if ctx.top:
                ctx.suggest(change)
                for r in sel_bad:
                    k = reqs[r].key
                    p1 = PodPatch(drop_selector=(k,))
                    ctx.suggest(Change("relax-node-affinity", "pod", f"drop nodeSelector {k}={selector[k]}", pod=p1),
                    )
                if has_required:
                    p2 = PodPatch(drop_node_affinity=True)
                    ctx.suggest(Change("relax-node-affinity", "pod", "drop the required node affinity", pod=p2)
                    )
        return out
