"""The plans as readable tables (the command line's ``--format table``)."""

from __future__ import annotations

from typing import Any

from .capacity import STOP_MAX, CapacityPlan
from .drain import DrainPlan
from .scaleup import ScaleUpPlan

VERDICTS_SHOWN = 10


def _counts(title: str, counts: dict[str, int]) -> list[str]:
    if not counts:
        return []
    width = max(len(k) for k in counts)
    return [title, *(f"  {k:<{width}}  {v:>6}" for k, v in counts.items())]


def _usage_line(label: str, u: dict[str, Any]) -> str:
    pct = u["total"]["percent"]

    def f(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}%"

    return f"{label:<7} cpu {f(pct['cpuMilli'])}  memory {f(pct['memoryBytes'])}  pods {f(pct['pods'])}"


def capacity_table(plan: CapacityPlan) -> str:
    lines = []
    many = len(plan.specs) > 1
    head = f"{plan.replicas} more cop{'y' if plan.replicas == 1 else 'ies'} fit"
    if many:
        head += f" ({plan.order}: " + ", ".join(f"{s.spec.name} {s.replicas}" for s in plan.specs) + ")"
    lines.append(head)
    lines += _counts("per zone:", plan.per_zone())
    lines += _counts("per node:", plan.per_node())
    for s in plan.specs:
        stop = s.stop
        if stop is None:
            continue
        if stop.reason == STOP_MAX:
            lines.append(f"{s.spec.name}: stopped at --max {plan.max_replicas}: every copy fit")
            continue
        lines.append(f"the next copy of {s.spec.name} ({stop.pod}) is {stop.result}:")
        lines.append(f"  {stop.message}")
        shown = list(stop.nodes.items())[:VERDICTS_SHOWN]
        for node, verdict in shown:
            lines.append(f"  {node}: {verdict}")
        if len(stop.nodes) > len(shown):
            lines.append(f"  ... {len(stop.nodes) - len(shown)} more nodes (--format json lists them all)")
    lines.append(_usage_line("before", plan.before))
    lines.append(_usage_line("after", plan.after))
    return "\n".join(lines) + "\n"


def drain_table(plan: DrainPlan) -> str:
    d = plan.to_dict(utilization=False)
    s = d["summary"]
    lines = [
        f"drain {', '.join(plan.nodes)}: {s['pods']} pods: {s['evicted']} evicted, {s['deleted']} deleted "
        f"without a controller, {s['stay']} stay; {s['recreated']} recreated: {s['scheduled']} scheduled, "
        f"{s['unschedulable']} unschedulable"
    ]
    for o in plan.pods:
        if o.replacement is not None:
            where = o.selected_node or "-"
            lines.append(f"  {o.pod} ({o.node}) -> {o.replacement}: {o.result} {where}")
            if o.result not in ("Scheduled", "Waiting") and o.message:
                lines.append(f"      {o.message}")
        else:
            lines.append(f"  {o.pod} ({o.node}): {o.action}: {o.reason}")
    for b in plan.budgets:
        if b.evicted or b.blocked:
            state = "VIOLATED" if b.violated else "respected"
            lines.append(
                f"  PodDisruptionBudget {b.obj.key}: {state} (healthy {b.healthy}, desired {b.desired}; "
                f"evicted {len(b.evicted)}, blocked {len(b.blocked)})"
            )
    lines.append(_usage_line("before", plan.before))
    lines.append(_usage_line("after", plan.after))
    return "\n".join(lines) + "\n"


def scale_up_table(plan: ScaleUpPlan) -> str:
    lines = []
    for t in plan.templates:
        d = t.to_dict()
        needed = d["nodesNeeded"]
        verdict = (
            f"{needed} node(s) make all {d['pendingPods']} pending pods schedulable"
            if needed is not None
            else f"{d['nodesAdded']} node(s): {d['scheduled']} of {d['pendingPods']} pending pods schedulable ({t.stop})"
        )
        lines.append(f"template {t.template.name}: {verdict}")
        lines.append("  nodes  scheduled  unschedulable")
        for s in t.steps:
            lines.append(f"  {s.nodes:>5}  {s.scheduled:>9}  {s.unschedulable:>13}")
        for h in t.helpless:
            lines.append(f"  {h['pod']}: {h['why']}")
    return "\n".join(lines) + "\n"
