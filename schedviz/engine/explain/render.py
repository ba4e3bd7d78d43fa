"""An explanation as text (``schedviz explain``; ``Explanation.to_text``), and the story of one node
through the fix tree (``node_story``; ``stored_node_story`` for a stored explanation's JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..framework.diagnosis import name_list

if TYPE_CHECKING:
    from .model import Comparison, Explanation, Fix

# How many node changes (each making one node feasible) the text lists among the suggestions.
TEXT_NODE_CHANGES = 10


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


def render_text(ex: Explanation) -> str:
    lines = [f"pod {ex.pod}  (profile {ex.profile or '-'}, cycle {ex.seq})"]
    if ex.summary:
        lines.append(f"in short: {ex.summary}")
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
                f"  tied with {name_list([t for t in ex.tied if t != ex.selected_node])}: first in snapshot order wins"
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
            lines.append(f"         {name_list(g['nodes'], 8)}")
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
                target = f"on any one of {name_list(sug.nodes, 5)}"
            else:
                target = name_list(sug.nodes, 5)
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
    out = [f"{indent}{name_list(f.nodes, 6)}: {f.plugin}: {f.diagnosis}"]
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
        out.append(f"{indent}  on {name_list(t.nodes, 6)} it would then fail {t.plugin}: {', '.join(t.reasons)}")
        for nf in t.next:
            out.extend(_fix_lines(nf, indent + "    "))
    return out
