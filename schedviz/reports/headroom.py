"""Headroom checks of a CI report: ``--min-headroom POD.yaml=N`` passes when N more copies of the pod
fit once the snapshot's pending pods are placed, under the candidate configuration.

Each check is a capacity plan (``schedviz.planning.capacity``) bounded at N copies: it stops as soon
as N fit, or at the first copy that does not (whose kube-scheduler message the check reports).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from schedviz.engine import InputError, SchedulerConfig, Snapshot
from schedviz.planning import PodSpec, capacity


def parse_min_headroom(value: str) -> tuple[str, int]:
    """``POD.yaml=N`` as (path, N)."""
    path, sep, count = value.rpartition("=")
    if not sep or not path or not count.strip().isdigit():
        raise InputError(
            f"{value!r}: expected POD.yaml=N (a pod file and a number of copies)", field="--min-headroom"
        )
    return path, int(count)


def check_headroom(
    snapshot: Snapshot, config: SchedulerConfig | None, checks: Iterable[tuple[PodSpec, int]]
) -> list[dict[str, Any]]:
    """One entry per check: ``{pod, source, required, fits, passed, perZone, message}``; ``fits`` is
    at most ``required`` (the plan stops there), ``message`` kube-scheduler's for the first copy that
    did not fit (null when the check passed)."""
    out: list[dict[str, Any]] = []
    for spec, required in checks:
        plan = capacity(snapshot, [spec], config, max_replicas=required)
        stop = plan.stop
        failed = stop is not None and stop.reason == "unschedulable"
        out.append(
            {
                "pod": spec.name,
                "source": spec.source,
                "required": required,
                "fits": plan.replicas,
                "passed": plan.replicas >= required,
                "perZone": plan.per_zone(),
                "message": stop.message if failed and stop is not None else None,
            }
        )
    return out


def headroom_failures(report: Mapping[str, Any]) -> list[str]:
    """The failed headroom checks of a report, as policy failures."""
    reasons = []
    for h in report.get("headroom") or []:
        if not h.get("passed"):
            reasons.append(
                f"headroom: {h['source']}: {h['fits']} of {h['required']} copies of {h['pod']} fit"
            )
    return reasons
