"""What an explanation says: the checked fixes (a tree), the ranked suggestions, the comparisons with the
winner, and ``Explanation`` itself with its JSON form (``to_dict``, API ``schedviz.io/v1``,
kind ``Explanation``). The changes they carry (``Change``, ``PodPatch``) are the plugins' vocabulary,
defined with the diagnosis hook in framework/diagnosis.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..framework.diagnosis import Change, PodPatch
from ..trace import KUBERNETES_VERSION
from .render import render_text

API_VERSION = "schedviz.io/v1"
KIND = "Explanation"

# (code, plugin, reasons) of one node; code 0 passes.
Verdict = tuple[int, str, tuple[str, ...]]
PASS: Verdict = (0, "", ())

Plan = tuple[Change, ...]


def plan_patch(plan: Plan) -> PodPatch:
    """The pod changes of a plan, merged."""
    p = PodPatch()
    for ch in plan:
        p = p.merge(ch.pod)
    return p


def plan_evictions(plan: Plan) -> tuple[str, ...]:
    """The pods (uids) a plan evicts."""
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
    summary: str = ""

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
            "summary": self.summary,
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
