"""One pod's cycle replayed against the mirrored state just before the cluster decided, compared
with what the cluster did.

``replay_pod`` loads the objects (the pod made pending again) into the engine and runs that one
pod's scheduling cycle with the cluster's configuration (every node filtered and scored unless the
cluster is configured to sample as kube-scheduler does). With ``explain_checks`` it first explains
that cycle on the same engine state (``schedviz.engine.explain.explain_replay``: the winner against
the runner-up and the cluster's node, the rejected nodes, checked fixes, at most ``explain_checks``
PreFilter+Filter re-runs), then runs it: the cycle stored is the one the replay runs without the
explanation, and a failing explanation only leaves the cycle without one.

``compare`` sets the replay against reality:

- the cluster bound the pod: ``match`` when the replay selects the same node, ``tie`` when that node
  is in the replay's tie set (kube-scheduler picks at random among tied nodes, SchedViz the first),
  ``diverged`` otherwise;
- the cluster reported ``FailedScheduling``: ``match`` when the replay is unschedulable with the same
  message, ``diverged`` otherwise (with what differs in the message: node count, reasons,
  preemption).

A divergence is explained where the evidence allows, each explanation with a code: ``tie``,
``stale-state`` (replayed against the state before the last changes to the nodes involved, the
replay agrees with the cluster: see ``explain_trigger``; or the decision was seen after a watch gap,
or the state before it could not be rebuilt exactly), ``missing-plugin`` and
``extender`` (the configuration has plugins or extenders SchedViz does not run), ``different-scheduler``
(another scheduler, or a profile the configuration does not have, made the decision), ``sampling``
(the scheduler's node sampling left the nodes out), and the plain facts when nothing explains it
(``filter``: the replay rejects the node the cluster chose, ``score``: it scores it lower, with the
per-plugin difference; ``result``: scheduled vs unschedulable; ``message``).
"""

from __future__ import annotations

import copy
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schedviz.engine.errors import InputError
from schedviz.engine.explain import explain_replay
from schedviz.engine.loader import load_objects
from schedviz.engine.runtime.replay import MIN_FEASIBLE_NODES_TO_FIND, Replay, ReplayOptions
from schedviz.engine.trace import NOT_EVALUATED, CycleRecord
from schedviz.kube.mirror import Change

from .schedconfig import LiveConfig
from .triggers import BOUND, Trigger, node_name

log = logging.getLogger(__name__)

JSON = dict[str, Any]
MATCH, TIE, DIVERGED, SKIPPED = "match", "tie", "diverged", "skipped"
STALE_WINDOW = 5.0  # seconds around the decision in which changes to the nodes involved make it stale
MAX_DROPPED = 50
# PreFilter+Filter re-runs a decision's explanation may spend checking fixes (the replay API's
# explain allows 200; a live decision must stay fast)
EXPLAIN_MAX_CHECKS = 50
STATE_FACTS = ("filter", "score", "result", "message")
RESULT_WORDS = {
    "Unschedulable": "unschedulable",
    "Error": "in error",
    "NotHandled": "handled by no profile",
    "Gated": "gated (not enqueued)",
}


@dataclass
class Replayed:
    record: CycleRecord | None
    node_names: list[str]
    reasons: list[tuple[str, ...]]
    error: str = ""
    notes: list[str] = field(default_factory=list)
    pod_scheduler: str = ""
    explanation: JSON | None = None  # Explanation.to_dict() of the cycle, when it was explained
    explanation_error: str = ""  # why there is none
    explain_seconds: float = 0.0  # what explaining added to the replay


@dataclass
class Outcome:
    trigger: Trigger
    replayed: Replayed
    agreement: str  # match, tie, diverged, skipped
    divergence: str  # the main explanation's code ("" for a match)
    explanations: list[JSON]
    notes: list[str]
    exact: bool
    duration: float = 0.0

    def actual(self) -> JSON:
        t = self.trigger
        return {
            "result": "Scheduled" if t.kind == BOUND else "Unschedulable",
            "node": t.node,
            "message": t.message,
            "scheduler": t.scheduler or None,
            "source": t.source,
        }


def _ident_matches(obj: JSON, ident: str) -> bool:
    md = obj.get("metadata") or {}
    ns = md.get("namespace") or ""
    kind = obj.get("kind")
    return ident in (
        f"{kind} {ns}/{md.get('name')}",
        f"{kind} {md.get('name')}",
        f"{kind} default/{md.get('name')}",
    )


def pending_copy(pod: JSON) -> JSON:
    """The pod as it was while pending: no spec.nodeName, no PodScheduled=True condition."""
    out = copy.copy(pod)
    out["spec"] = {k: v for k, v in (pod.get("spec") or {}).items() if k != "nodeName"}
    st = dict(pod.get("status") or {})
    conds = [
        c
        for c in st.get("conditions") or []
        if not (c.get("type") == "PodScheduled" and c.get("status") == "True")
    ]
    st["conditions"] = conds
    st["phase"] = "Pending"
    out["status"] = st
    return out


def replay_pod(
    objects: list[JSON],
    trigger: Trigger,
    cfg: LiveConfig,
    *,
    all_nodes: bool = True,
    explain_checks: int | None = None,
) -> Replayed:
    """The pod's cycle against ``objects`` (the state before the decision), explained first when
    ``explain_checks`` is given (see the module's docstring)."""
    notes: list[str] = []
    ns, _, name = trigger.pod.partition("/")
    objs: list[JSON] = []
    found: JSON | None = None
    for o in objects:
        if o.get("kind") == "Pod":
            md = o.get("metadata") or {}
            if md.get("name") == name and (md.get("namespace") or "default") == ns:
                found = o
                continue
        objs.append(o)
    if found is None and trigger.pod_object is not None:
        found = trigger.pod_object
        notes.append(
            "the pod was not in the state before the decision (created and bound while the watch was down)"
        )
    if found is None:
        return Replayed(None, [], [], error=f"pod {trigger.pod} is not in the mirrored state")
    if node_name(found):
        found = pending_copy(found)
    elif trigger.kind == BOUND:
        found = pending_copy(found)  # drop a stale PodScheduled condition too
    objs.append(found)
    dropped = 0
    while True:
        try:
            snap = load_objects(objs, None, f"live {trigger.pod}")
            break
        except InputError as exc:
            culprit = next((o for o in objs if exc.obj and _ident_matches(o, exc.obj)), None)
            if culprit is None or culprit is found or dropped >= MAX_DROPPED:
                return Replayed(None, [], [], error=f"the mirrored state cannot be replayed: {exc}")
            objs.remove(culprit)
            dropped += 1
            notes.append(f"left out {exc.obj}: {exc.problem}")
    pod = next(p for p in snap.pods if p.key == trigger.pod)
    options = ReplayOptions(all_nodes=all_nodes)
    rp = Replay(snap, cfg.config, options)
    explained: JSON | None = None
    why_not = ""
    spent = 0.0
    rec: CycleRecord | None = None
    if explain_checks is not None:
        t0 = time.perf_counter()
        # the cluster's node too, when the replay has it (the explanation leaves out the winner)
        named = [trigger.node] if trigger.kind == BOUND and trigger.node in rp.cluster.index else []
        try:
            ex, rec = explain_replay(rp, pod, nodes=named, max_checks=explain_checks)
            explained = ex.to_dict()
        except Exception as exc:  # the cycle is replayed without its explanation
            log.warning("explaining the cycle of %s failed", trigger.pod, exc_info=True)
            why_not = f"the explanation failed: {type(exc).__name__}: {exc}"[:500]
            rec = None
            rp = Replay(snap, cfg.config, options)  # as it was before the explanation began
        spent = time.perf_counter() - t0
    if rec is None:
        rec = rp.schedule_one(pod)
    return Replayed(
        rec,
        list(rp.cluster.names),
        list(rp.reasons.items),
        notes=notes,
        pod_scheduler=pod.scheduler_name,
        explanation=explained,
        explanation_error=why_not,
        explain_seconds=spent,
    )


# ----- comparing with reality ---------------------------------------------------------------------
@dataclass
class Context:
    cfg: LiveConfig
    all_nodes: bool
    exact: bool = True
    recent: list[Change] = field(default_factory=list)  # changes around the decision
    behind: str = ""  # the mirror had not caught up with the decision when it was replayed: how


def touching(changes: list[Change], nodes: set[str], pod: str) -> list[Change]:
    """The changes to ``nodes`` or to other pods on them."""

    def on_nodes(ch: Change) -> bool:
        if ch.kind == "Node":
            return ch.key[1] in nodes
        if ch.kind != "Pod" or f"{ch.key[0] or 'default'}/{ch.key[1]}" == pod:
            return False
        return node_name(ch.old) in nodes or node_name(ch.new) in nodes

    return [ch for ch in changes if on_nodes(ch)]


def recent_changes(changes: list[Change], trigger: Trigger, window: float = STALE_WINDOW) -> list[Change]:
    """The changes seen within ``window`` seconds of the decision (the first lists excluded)."""
    return [c for c in changes if not c.initial and abs(c.time - trigger.observed) <= window]


def _describe_change(ch: Change) -> str:
    name = f"{ch.key[0]}/{ch.key[1]}" if ch.key[0] else ch.key[1]
    what = {"ADDED": "added", "MODIFIED": "changed", "DELETED": "deleted"}.get(ch.type, ch.type)
    if ch.kind == "Pod":
        if ch.type == "MODIFIED" and not node_name(ch.old) and node_name(ch.new):
            what = f"bound to {node_name(ch.new)}"
        elif ch.type == "DELETED" and node_name(ch.old):
            what = f"deleted from {node_name(ch.old)}"
        elif ch.type == "ADDED" and node_name(ch.new):
            what = f"added on {node_name(ch.new)}"
    return f"{ch.kind} {name} {what}"


def _exp(code: str, message: str, **details: Any) -> JSON:
    out: JSON = {"code": code, "message": message}
    if details:
        out["details"] = details
    return out


def _config_explanations(ctx: Context) -> list[JSON]:
    out = []
    if ctx.cfg.unknown_plugins:
        out.append(
            _exp(
                "missing-plugin",
                f"the cluster's configuration enables plugins SchedViz does not have: {', '.join(ctx.cfg.unknown_plugins)}",
                plugins=ctx.cfg.unknown_plugins,
            )
        )
    if ctx.cfg.extenders:
        out.append(
            _exp(
                "extender",
                f"the cluster's scheduler calls extenders SchedViz does not call: {', '.join(ctx.cfg.extenders)}",
                extenders=ctx.cfg.extenders,
            )
        )
    return out


def _stale_explanations(ctx: Context, trigger: Trigger, nodes: set[str]) -> list[JSON]:
    out = []
    if trigger.gap:
        out.append(
            _exp(
                "stale-state",
                "the decision was seen only after a watch gap (a relist or a restart): the state it was replayed against is approximate",
            )
        )
    elif ctx.behind:
        out.append(_exp("stale-state", f"{ctx.behind}: the state replayed may miss changes before it"))
    elif not ctx.exact:
        out.append(
            _exp(
                "stale-state",
                "the changelog no longer reached back to the decision: the state replayed is newer",
            )
        )
    return out


def _scheduler_explanations(ctx: Context, trigger: Trigger, rep: Replayed) -> list[JSON]:
    profiles = ctx.cfg.profiles
    out = []
    if rep.record is not None and rep.record.result == "NotHandled":
        out.append(
            _exp(
                "different-scheduler",
                f'the pod asks for schedulerName "{rep.pod_scheduler}", which no profile of the configuration has '
                f"({', '.join(profiles)}): another scheduler decided",
            )
        )
    elif trigger.scheduler and trigger.scheduler not in profiles:
        out.append(
            _exp(
                "different-scheduler",
                f'"{trigger.scheduler}" reported the decision, not a profile of the configuration ({", ".join(profiles)})',
            )
        )
    return out


def _score_gap(rec: CycleRecord, names: list[str], winner: int, other: int) -> JSON | None:
    if rec.feasible is None or rec.totals is None or not rec.scored or rec.normalized_scores is None:
        return None
    fpos = {int(n): k for k, n in enumerate(rec.feasible.tolist())}
    if winner not in fpos or other not in fpos:
        return None
    a, b = fpos[winner], fpos[other]
    per = {}
    for p, plugin in enumerate(rec.score_plugins):
        w = rec.score_weights[p] if p < len(rec.score_weights) else 1
        diff = (int(rec.normalized_scores[p, a]) - int(rec.normalized_scores[p, b])) * w
        if diff:
            per[plugin] = diff
    return {
        "winner": names[winner],
        "winnerTotal": int(rec.totals[a]),
        "node": names[other],
        "nodeTotal": int(rec.totals[b]),
        "byPlugin": per,
    }


def compare(rep: Replayed, trigger: Trigger, ctx: Context) -> tuple[str, str, list[JSON]]:
    """(agreement, main divergence code, explanations)."""
    rec = rep.record
    if rec is None:
        return SKIPPED, "error", [_exp("error", rep.error or "the cycle could not be replayed")]
    names = rep.node_names
    sched = _scheduler_explanations(ctx, trigger, rep)
    if trigger.kind == BOUND:
        actual = trigger.node or ""
        chosen = rec.selected_node if rec.result in ("Scheduled", "Waiting") else None
        if chosen == actual and not sched:
            return MATCH, "", []
        involved = {actual} | ({chosen} if chosen else set())
        facts: list[JSON] = []
        if chosen is not None and actual in rec.tied_names(names):
            tied = rec.tied_names(names)
            total = rec.node_total(names.index(actual))
            return (
                TIE,
                "tie",
                [
                    _exp(
                        "tie",
                        f"{len(tied)} nodes tied for the best total ({total}): kube-scheduler picks one of them at random, "
                        f"SchedViz the first in node order ({chosen})",
                        tied=tied[:50],
                    ),
                    *sched,
                ],
            )
        if actual not in names:
            facts.append(
                _exp(
                    "stale-state",
                    f"node {actual} is not in the mirrored state (added after the decision, or not seen yet)",
                )
            )
        elif rec.result in ("Scheduled", "Waiting") and rec.filter_codes is not None:
            i = names.index(actual)
            code = int(rec.filter_codes[i])
            if code == NOT_EVALUATED:
                if not ctx.all_nodes and len(names) >= MIN_FEASIBLE_NODES_TO_FIND:
                    facts.append(
                        _exp(
                            "sampling",
                            f"the replay's node sampling did not evaluate {actual}; kube-scheduler's sampling starts "
                            "at an index SchedViz cannot know",
                        )
                    )
                else:
                    facts.append(
                        _exp(
                            "filter", f"the replay did not evaluate {actual} (a PreFilter result left it out)"
                        )
                    )
            elif code != 0:
                pid = int(rec.filter_plugins[i]) if rec.filter_plugins is not None else -1
                rid = int(rec.filter_reasons[i]) if rec.filter_reasons is not None else -1
                plugin = rec.filter_plugin_names[pid] if 0 <= pid < len(rec.filter_plugin_names) else "?"
                reasons = list(rep.reasons[rid]) if 0 <= rid < len(rep.reasons) else []
                facts.append(
                    _exp(
                        "filter",
                        f"the replay rejects {actual} ({plugin}: {'; '.join(reasons) or 'no reason given'}) "
                        f"and selects {chosen}",
                        plugin=plugin,
                        reasons=reasons,
                    )
                )
            else:
                assert chosen is not None
                gap = _score_gap(rec, names, names.index(chosen), i)
                msg = f"the replay scores {actual} lower than {chosen}"
                if gap:
                    parts = ", ".join(
                        f"{k} {v:+d}" for k, v in sorted(gap["byPlugin"].items(), key=lambda kv: -abs(kv[1]))
                    )
                    msg = (
                        f"the replay scores {actual} {gap['nodeTotal']} and {chosen} {gap['winnerTotal']}"
                        + (f" (weighted difference by plugin: {parts})" if parts else "")
                    )
                facts.append(_exp("score", msg, **(gap or {})))
        else:
            facts.append(
                _exp(
                    "result",
                    f"the replay finds the pod {RESULT_WORDS.get(rec.result, rec.result)}"
                    + (f": {rec.message or rec.error}" if rec.message or rec.error else "")
                    + f"; the cluster bound it to {actual}",
                )
            )
        explained = sched + _stale_explanations(ctx, trigger, involved) + _config_explanations(ctx)
        return DIVERGED, (explained or facts)[0]["code"], explained + facts
    # the cluster could not schedule the pod
    message = trigger.message or ""
    if rec.result == "Unschedulable" and not sched:
        if (rec.message or "") == message:
            return MATCH, "", []
        diff = message_difference(rec.message or "", message)
        explained = _stale_explanations(ctx, trigger, set(names)) + _config_explanations(ctx)
        facts = [_exp("message", f"the messages differ: {diff}", replay=rec.message, cluster=message)]
        return DIVERGED, (explained or facts)[0]["code"], explained + facts
    involved = {rec.selected_node} if rec.selected_node else set()
    facts = []
    if rec.result in ("Scheduled", "Waiting"):
        facts.append(
            _exp(
                "result",
                f"the replay places the pod on {rec.selected_node}; the cluster found no node: {message}",
            )
        )
    elif rec.result != "Unschedulable":
        facts.append(
            _exp(
                "result",
                f"the replay's result is {rec.result}: {rec.message or rec.error or ''}".rstrip(": "),
            )
        )
    explained = sched + _stale_explanations(ctx, trigger, involved) + _config_explanations(ctx)
    return DIVERGED, (explained or facts)[0]["code"], explained + facts


_FIT = re.compile(r"^0/(?P<n>\d+) nodes are available:(?P<rest>.*)$", re.S)


def _parse_fit(msg: str) -> tuple[int | None, dict[str, int], str]:
    """A FitError message -> (node count, reason -> count, what PostFilter added).

    The format (framework/types.go FitError.Error): ``0/N nodes are available: `` then the reasons
    histogram (``<count> <reason>`` sorted, joined by ``, ``) and ``.``, then PostFilter's message.
    """
    m = _FIT.match(msg.strip())
    if m is None:
        return None, {}, ""
    rest = m.group("rest").strip()
    cut = rest.find(". ")
    if cut < 0:
        histogram, post = rest.rstrip("."), ""
    else:
        histogram, post = rest[:cut], rest[cut + 2 :].strip()
    reasons: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in histogram.split(", "))):
        count, _, reason = part.partition(" ")
        if count.isdigit():
            reasons[reason] = reasons.get(reason, 0) + int(count)
        else:
            reasons[part] = reasons.get(part, 0)
    return int(m.group("n")), reasons, post


def message_difference(replay: str, cluster: str) -> str:
    n1, r1, p1 = _parse_fit(replay)
    n2, r2, p2 = _parse_fit(cluster)
    if n1 is None or n2 is None:
        return f"the replay says {replay!r}, the cluster {cluster!r}"
    out = []
    if n1 != n2:
        out.append(f"{n1} nodes in the replay, {n2} in the cluster")
    for reason in sorted(set(r1) | set(r2)):
        a, b = r1.get(reason, 0), r2.get(reason, 0)
        if a != b:
            out.append(f"{reason!r}: {a} in the replay, {b} in the cluster")
    if p1 != p2:
        out.append(
            f"after the reasons, {p1 or 'nothing'!r} in the replay, {p2 or 'nothing'!r} in the cluster"
        )
    return "; ".join(out) or "only in wording"


def involved_nodes(rep: Replayed, trigger: Trigger) -> set[str]:
    """The nodes whose state decided the difference: the two chosen, or every node for a failure."""
    if trigger.kind != BOUND:
        return set(rep.node_names)
    rec = rep.record
    return {n for n in (trigger.node, rec.selected_node if rec is not None else None) if n}


def explain_trigger(
    objects: list[JSON],
    exact: bool,
    trigger: Trigger,
    cfg: LiveConfig,
    *,
    all_nodes: bool,
    recent: list[Change],
    earlier: Callable[[int], list[JSON]] | None = None,
    explain_checks: int | None = EXPLAIN_MAX_CHECKS,
    behind: str = "",
) -> Outcome:
    """Replay the decision, compare it with reality, and test the stale-state explanation.

    ``behind``: the mirror had not caught up with the decision when the wait for it ended (how):
    said in the notes, and in the error when the pod itself is not in the state.

    When the replay diverges and the nodes involved changed shortly before the decision (changes
    the replayed state includes), the decision is replayed again against the state before those
    changes (``earlier(seq)``): if that replay agrees with the cluster, the scheduler decided on
    the older state, and the divergence is explained as ``stale-state``; if not, the changes are
    only noted. ``explain_checks``: the checks the decision's explanation may spend (``replay_pod``;
    None: no explanation).
    """
    t0 = time.perf_counter()
    rep = replay_pod(objects, trigger, cfg, all_nodes=all_nodes, explain_checks=explain_checks)
    if behind and rep.record is None:
        rep.error = f"{rep.error}: {behind}"
    ctx = Context(cfg, all_nodes, exact, recent, behind)
    agreement, code, explanations = compare(rep, trigger, ctx)
    notes = list(rep.notes)
    if behind:
        notes.append(behind)
    if trigger.gap:
        notes.append("seen through a relist after a watch gap")
    # only what the state decides: not another scheduler, gates, configuration differences
    if agreement == DIVERGED and code in STATE_FACTS and earlier is not None and rep.record is not None:
        near = [c for c in touching(recent, involved_nodes(rep, trigger), trigger.pod) if c.seq < trigger.seq]
        if near:
            first = min(near, key=lambda c: c.seq)
            listed = [_describe_change(c) for c in near[:10]]
            again = replay_pod(earlier(first.seq), trigger, cfg, all_nodes=all_nodes)
            agreed, _, _ = compare(again, trigger, Context(cfg, all_nodes))
            if agreed in (MATCH, TIE):
                explanations.insert(
                    0,
                    _exp(
                        "stale-state",
                        f"replayed against the state before {'; '.join(listed)} "
                        f"({trigger.observed - first.time:.1f}s before the decision was seen), the replay agrees "
                        "with the cluster: the scheduler decided on that older state",
                        changes=listed,
                    ),
                )
                code = "stale-state"
            else:
                notes.append(
                    f"the nodes involved changed shortly before ({'; '.join(listed)}); without those changes "
                    "the replay still differs from the cluster"
                )
    return Outcome(trigger, rep, agreement, code, explanations, notes, exact, time.perf_counter() - t0)
