"""Replay operations: start, cancel, re-run, explain, compare. Views and commands call these."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from schedviz.engine.config import load_config, parse_config_text
from schedviz.engine.errors import ConfigError, InputError
from schedviz.engine.trace import ReplayTrace
from schedviz.ingestion.models import Snapshot
from schedviz.outbound import extenders as outbound_extenders

from .cursors import cursors
from .models import Configuration, Cycle, Replay
from .runner import budget_for, is_stale
from .tasks import dispatch


class NotRerunnable(Exception):
    pass


class UnknownPod(LookupError):
    """The pod named for explain is not in the replay's snapshot."""


def _check_config(raw: Any, extenders: str = "call") -> tuple[dict[str, Any] | None, list[str]]:
    """The configuration as the server runs it (outbound.extenders.vet) and the extenders not called."""
    if isinstance(raw, str):
        raw = parse_config_text(raw)
    return outbound_extenders.vet(raw, extenders)


def start_replay(
    owner: Any,
    snapshot: Snapshot,
    *,
    configuration: Configuration | None = None,
    inline_config: Any = None,
    all_nodes: bool = False,
    name: str = "",
    team: Any = None,
    preemption: str = "evict",
    extenders: str = "call",
) -> Replay:
    """Create a replay (the configuration copied into it) and queue it.

    It is shared with ``team`` when given (the caller checks membership), else with the snapshot's team.
    ``extenders``: "call" refuses a configuration with an extender the server may not call
    (SCHEDVIZ_EXTENDER_URLS); "skip" replays without those, named in ``options.extendersNotCalled``.
    """
    if configuration is not None:
        config, skipped = _check_config(configuration.parsed, extenders)
    elif inline_config is not None:
        config, skipped = _check_config(inline_config, extenders)
    else:
        own, skipped = _check_config(snapshot.config, extenders)
        config = own if skipped else None  # the snapshot's own, less what is not called
    options: dict[str, Any] = {"allNodes": bool(all_nodes), "preemption": preemption}
    if skipped:
        options["extendersNotCalled"] = skipped
    with transaction.atomic():
        replay = Replay.objects.create(
            owner=owner,
            team=team if team is not None else snapshot.team,
            snapshot=snapshot,
            configuration=configuration,
            config=config,
            options=options,
            name=name or f"{snapshot.name}",
            cycles_total=snapshot.pending_count,
        )
        dispatch(replay.pk)
    return replay


def cancel(replay: Replay) -> Replay:
    with transaction.atomic():
        r = Replay.objects.select_for_update().get(pk=replay.pk)
        if r.status == Replay.Status.QUEUED:
            r.status = Replay.Status.CANCELLED
            r.reason = "cancelled before it started"
            r.finished = timezone.now()
            r.cancel_requested = True
            r.save()
        elif r.status == Replay.Status.RUNNING:
            r.cancel_requested = True
            r.save(update_fields=["cancel_requested"])
    r.refresh_from_db()
    return r


def rerun(replay: Replay) -> Replay:
    """Queue the replay again; allowed once it ended, or when its worker stopped reporting."""
    with transaction.atomic():
        r = Replay.objects.select_for_update().get(pk=replay.pk)
        if r.status in (Replay.Status.QUEUED,) or (r.status == Replay.Status.RUNNING and not is_stale(r)):
            raise NotRerunnable(f"replay is {r.status}; it can be re-run once it has ended")
        r.status = Replay.Status.QUEUED
        r.cancel_requested = False
        r.reason = ""
        r.finished = None
        r.save()
        dispatch(r.pk)
    r.refresh_from_db()
    return r


def describe_config(text: str, extenders: str = "call") -> dict[str, Any]:
    """Validation result of a configuration text: problems, or the profiles with their plugins."""
    try:
        raw = parse_config_text(text)
        cfg = load_config(raw)
        _, skipped = outbound_extenders.vet(raw, extenders)
    except (ConfigError, InputError) as exc:
        return {"valid": False, "problems": getattr(exc, "problems", None) or [str(exc)]}
    return {
        "valid": True,
        "problems": [],
        "extendersNotCalled": skipped,
        "percentageOfNodesToScore": cfg.percentage_of_nodes_to_score,
        "profiles": [
            {
                "schedulerName": p.scheduler_name,
                "percentageOfNodesToScore": p.percentage_of_nodes_to_score,
                "plugins": {point: [{"name": r.name, "weight": r.weight} for r in refs] for point, refs in p.plugins.items()},
                "pluginArgs": p.plugin_args,
            }
            for p in cfg.profiles
        ],
    }


def stored_trace(replay: Replay) -> ReplayTrace:
    """The replay's stored cycles as an engine trace (per-cycle reason tables are not merged)."""
    trace = ReplayTrace(replay.node_names(), [], dict(replay.options))
    for row in Cycle.objects.filter(replay=replay, attempt=replay.attempt).order_by("seq"):
        rec, _ = row.decoded()
        trace.cycles.append(rec)
    return trace


def compare(a: Replay, b: Replay) -> dict[str, Any]:
    from schedviz.reports import compare_traces

    if a.snapshot_id != b.snapshot_id:
        raise ValueError("replays of different snapshots cannot be compared")
    if a.status != Replay.Status.SUCCEEDED or b.status != Replay.Status.SUCCEEDED:
        raise ValueError("both replays must have succeeded")
    result: dict[str, Any] = compare_traces(stored_trace(a), stored_trace(b))
    return {"a": str(a.pk), "b": str(b.pk), **result}


def _engine_replay(replay: Replay, snapshot: Any, budget: Any) -> Any:
    """A new engine replay of ``replay``: its snapshot, configuration and options."""
    from schedviz.engine.config import load_config as _load
    from schedviz.engine.runtime.replay import Replay as EngineReplay

    raw = replay.config if replay.config is not None else snapshot.config
    return EngineReplay(snapshot, _load(raw), _replay_options(replay, budget))


def _cursor_key(replay: Replay) -> str:
    return f"{replay.pk}:{replay.attempt}"


def explain(replay: Replay, pod: str, nodes: list[str]) -> dict[str, Any]:
    """Why here? for ``pod``: the replay stood just before the pod's first cycle (going on from where
    an earlier question left it when it can: replays.cursors), then ``engine.explain``."""
    from schedviz.engine.explain import explain_replay, pending_pod_key

    # "name" means "default/name", as for kubectl and `schedviz explain`
    key = pod if "/" in pod else f"default/{pod}"
    namespace, _, name = key.partition("/")
    if not namespace or not name or "/" in name:
        raise ValueError(f"pod: expected namespace/name, got {pod!r}")
    snapshot = replay.snapshot.engine_snapshot()
    if snapshot.pod(key) is None:
        raise UnknownPod(f"pod: no pod {key} in the replay's snapshot")
    known = {n.name for n in snapshot.nodes}
    for n in nodes:
        if n not in known:
            raise ValueError(f"node: no node {n!r} in the replay's snapshot")
    # a pod that is not pending (bound or finished) has no cycle: the engine says why (InputError)
    pending_pod_key(snapshot, key)
    first = (
        Cycle.objects.filter(replay=replay, attempt=replay.attempt, pod=key)
        .order_by("seq")
        .values_list("seq", flat=True)
        .first()
    )
    budget = budget_for()  # every cycle it replays bounded as the runner's are
    try:
        with cursors.before(
            _cursor_key(replay), key, first, lambda: _engine_replay(replay, snapshot, budget), budget
        ) as (rp, target):
            ex, _ = explain_replay(rp, target, nodes=nodes)
            value: dict[str, Any] = ex.to_dict()
    except KeyError:
        raise InputError("the pod is never taken from the scheduling queue", obj=f"Pod {key}") from None
    finally:
        budget.close()
    return value


class NoSuchCycle(LookupError):
    """The replay has no stored cycle with that number (or it is not a scheduling cycle)."""


def _replay_options(replay: Replay, budget: Any) -> Any:
    from schedviz.engine.runtime.replay import ReplayOptions

    return ReplayOptions(
        all_nodes=bool(replay.options.get("allNodes")),
        preemption=str(replay.options.get("preemption", "evict")),
        extender_transport=outbound_extenders.transport(),
        budget=budget,
    )


def _cycle_row(replay: Replay, seq: int) -> Cycle:
    row = Cycle.objects.filter(replay=replay, attempt=replay.attempt, seq=seq).defer("payload").first()
    if row is None:
        raise NoSuchCycle(f"no cycle {seq} in this replay")
    return row


def cycle_pod(replay: Replay, seq: int) -> dict[str, Any]:
    """What the scheduler reads of cycle ``seq``'s pod: requests, node selector and affinity,
    tolerations, spread constraints, priority. Read from the snapshot's summary (where ingestion
    keeps it for every pending pod) when it is there, else from the engine's reading."""
    from schedviz.engine.explain.inspect import pod_spec_summary

    row = _cycle_row(replay, seq)
    kept = replay.snapshot.summary().get("pendingSpecs", {}).get(row.pod)
    if kept is not None:
        return dict(kept)
    pod = replay.snapshot.engine_snapshot().pod(row.pod)
    if pod is None:
        raise NoSuchCycle(f"cycle {seq}: its pod {row.pod} is not in the replay's snapshot")
    summary: dict[str, Any] = pod_spec_summary(pod)
    return summary


def cycle_node(replay: Replay, seq: int, node: str) -> dict[str, Any]:
    """Node ``node`` as cycle ``seq`` found it (the replay run up to just before that cycle, going on
    from where an earlier question left it when it can: replays.cursors): its resources, taints and
    labels, the pod's spec, and the verdict of every Filter plugin on it."""
    from schedviz.engine.explain.inspect import inspect_node

    row = _cycle_row(replay, seq)
    snapshot = replay.snapshot.engine_snapshot()
    pod = snapshot.pod(row.pod)
    if pod is None:
        raise NoSuchCycle(f"cycle {seq}: its pod {row.pod} is not in the replay's snapshot")
    if not any(n.name == node for n in snapshot.nodes):
        raise ValueError(f"node: no node {node[:80]!r} in the replay's snapshot")
    budget = budget_for()
    try:
        with cursors.through(
            _cursor_key(replay), seq - 1, lambda: _engine_replay(replay, snapshot, budget), budget
        ) as rp:
            out: dict[str, Any] = inspect_node(rp, pod, node)
    finally:
        budget.close()
    out["seq"] = seq
    return out


def timeline(replay: Replay) -> dict[str, Any]:
    """Cycle by cycle: the pod, where it went and what it requested, which record it is (a scheduling
    cycle, or the binding that ended a Permit wait), its attempt, and the pods its preemption evicted
    with their requests: what it takes to follow the cluster's allocation."""
    from schedviz.cycles.codec import decode_header

    summary = replay.snapshot.summary()
    requests = {p["key"]: p.get("requests", {}) for p in summary.get("pods", [])}
    rows = Cycle.objects.filter(replay=replay, attempt=replay.attempt).order_by("seq").values_list(
        "seq", "pod", "result", "node", "nominated_node", "duration_micros", "profile", "payload"
    )
    cycles = []
    for seq, pod, result, node, nominated, micros, profile, payload in rows:
        header = decode_header(bytes(payload))
        cycles.append(
            {
                "seq": seq,
                "pod": pod,
                "profile": profile,
                "result": result,
                "node": node or None,
                "nominatedNode": nominated or None,
                "requests": requests.get(pod, {}),
                "durationMicros": micros,
                "kind": header.get("kind", "Scheduling"),
                "follows": header.get("follows"),
                "attempt": header.get("attempt", 1),
                "evictions": [
                    {"pod": e["pod"], "node": e["node"], "time": e["time"], "requests": requests.get(e["pod"], {})}
                    for e in header.get("evictions", [])
                ],
            }
        )
    return {"replay": str(replay.pk), "status": replay.status, "cycles": cycles}


def latency(replay: Replay) -> dict[str, Any]:
    """Per extension point and plugin: calls, total, mean, p50, p95 and max microseconds over the replay,
    the first cycle left out when there are others (it builds what plugins index on first use: warm-up,
    not the steady cost)."""
    samples: dict[str, list[int]] = {}
    rows = list(
        Cycle.objects.filter(replay=replay, attempt=replay.attempt).order_by("seq").values_list("timings", flat=True)
    )
    cycles = len(rows)
    warmup = 1 if cycles > 1 else 0
    for timings in rows[warmup:]:
        for key, micros in (timings or {}).items():
            samples.setdefault(key, []).append(int(micros))
    out = []
    for key, values in sorted(samples.items()):
        point, _, plugin = key.partition("/")
        values.sort()
        n = len(values)
        out.append(
            {
                "point": point,
                "plugin": plugin,
                "calls": n,
                "totalMicros": sum(values),
                "meanMicros": round(sum(values) / n, 1),
                "p50Micros": values[(n - 1) // 2],
                "p95Micros": values[min(n - 1, round(0.95 * (n - 1)))],
                "maxMicros": values[-1],
            }
        )
    return {"replay": str(replay.pk), "cycles": cycles, "warmupCycles": warmup, "plugins": out}
