"""Plans on the server: checked when asked, run on the worker as replays are, stored with their answer.

The answer is what ``schedviz capacity|drain|scale-up --format json --utilization`` prints. The
snapshot each plan replayed is stored as a snapshot of the owner and replayed (a replay like any
other), so that every cycle of the plan opens in the cycle view, with Why here?.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import transaction
from django.utils import timezone

from schedviz.engine.config import load_config
from schedviz.engine.errors import InputError, SchedVizError
from schedviz.engine.loader import load_objects
from schedviz.ingestion.models import Snapshot
from schedviz.ingestion.parsing import Limits, UploadError, parse_objects, parse_upload
from schedviz.ingestion.services import store_parsed
from schedviz.planning import capacity, drain, pod_spec, scale_up
from schedviz.planning.base import snapshot_objects
from schedviz.planning.scaleup import Template, check_template
from schedviz.replays.jobs import claim_queued, save

from .models import Plan

log = logging.getLogger(__name__)


def _from_text(text: str, kind: str, field: str) -> dict[str, Any]:
    """A manifest given as YAML or JSON text: read as uploads are read (bounded), one object."""
    try:
        parsed = parse_upload(text.encode("utf-8"), f"{field}.yaml", Limits.from_env())
    except UploadError as exc:
        raise InputError(str(exc), field=field) from None
    if len(parsed.objects) != 1:
        raise InputError(f"expected exactly one {kind}, found {len(parsed.objects)} objects", field=field)
    obj: dict[str, Any] = parsed.objects[0]
    return obj


def _one(objects: Any, kind: str, field: str) -> dict[str, Any]:
    """A request's object (or its YAML/JSON text), validated as the API server would (InputError
    naming the field)."""
    if isinstance(objects, str):
        objects = _from_text(objects, kind, field)
    if not isinstance(objects, dict):
        raise InputError(f"expected a {kind} object", field=field)
    try:
        snap = load_objects([objects])
    except InputError as exc:
        raise InputError(
            exc.problem, obj=exc.obj, field=f"{field}: {exc.field}" if exc.field else field
        ) from None
    found = [*snap.nodes, *snap.pods, *snap.objects]
    if len(found) != 1 or found[0].kind != kind:
        raise InputError(f"expected one {kind}, got {objects.get('kind')!r}", field=f"{field}.kind")
    raw: dict[str, Any] = found[0].raw
    return raw


def check_request(kind: str, request: dict[str, Any]) -> dict[str, Any]:
    """The question, its objects validated (what does not need the snapshot: that is the worker's)."""
    out = dict(request)
    if kind == Plan.Kind.CAPACITY:
        pods = request.get("pods") or []
        if not pods:
            raise InputError("at least one pod to copy is needed", field="pods")
        out["pods"] = [pod_spec(_one(p, "Pod", f"pods[{i}]"), f"pods[{i}]").raw for i, p in enumerate(pods)]
    elif kind == Plan.Kind.DRAIN:
        if not request.get("nodes") and not request.get("selector"):
            raise InputError("name the nodes to drain or give a selector", field="nodes")
    elif kind == Plan.Kind.SCALE_UP:
        templates = request.get("templates") or []
        if not templates:
            raise InputError(
                "at least one template (a node's name or a Node object) is needed", field="templates"
            )
        checked: list[Any] = []
        for i, t in enumerate(templates):
            if isinstance(t, str) and ":" not in t:  # a node's name (a manifest's text has a colon)
                checked.append(t)
                continue
            raw = _one(t, "Node", f"templates[{i}]")
            check_template(Template(str(raw["metadata"]["name"]), f"templates[{i}]", raw), f"templates[{i}]")
            checked.append(raw)
        out["templates"] = checked
    return out


def create_plan(
    owner: Any,
    snapshot: Snapshot,
    kind: str,
    request: dict[str, Any],
    config: dict[str, Any] | None,
    name: str = "",
) -> Plan:
    from .tasks import dispatch_plan

    checked = check_request(kind, request)
    with transaction.atomic():
        plan = Plan.objects.create(
            owner=owner,
            team=snapshot.team,
            snapshot=snapshot,
            kind=kind,
            name=name or f"{kind} of {snapshot.name}",
            request=checked,
            config=config,
        )
        dispatch_plan(plan.pk)
    return plan


# the command line's option -> the request's field, in the errors of a plan asked through the API
FIELDS = {
    "--pod": "pods",
    "--max": "max",
    "--order": "order",
    "--node": "nodes",
    "--selector": "selector",
    "--template": "templates",
    "--max-nodes": "max_nodes",
}


def compute(plan: Plan) -> tuple[dict[str, Any], list[tuple[str, Any, str]]]:
    """The answer, and the snapshots it replayed: (label, engine snapshot, preemption mode)."""
    from schedviz.replays.runner import budget_for

    budget = budget_for()  # each cycle bounded as a replay's is (SCHEDVIZ_CYCLE_SECONDS)
    try:
        return _compute(plan, budget)
    except InputError as exc:
        if exc.field in FIELDS:
            raise InputError(exc.problem, source=exc.source, obj=exc.obj, field=FIELDS[exc.field]) from None
        raise
    finally:
        budget.close()


def _compute(plan: Plan, budget: Any) -> tuple[dict[str, Any], list[tuple[str, Any, str]]]:
    snap = Snapshot.without_bulk(plan.snapshot_id).engine_snapshot()
    config = load_config(plan.config if plan.config is not None else snap.config)
    r = plan.request
    all_nodes = bool(r.get("allNodes"))
    if plan.kind == Plan.Kind.CAPACITY:
        specs = [pod_spec(p, f"pods[{i}]") for i, p in enumerate(r["pods"])]
        cap = capacity(
            snap,
            specs,
            config,
            max_replicas=r.get("max"),
            order=r.get("order") or "round-robin",
            all_nodes=all_nodes,
            budget=budget,
        )
        return cap.to_dict(utilization=True), [("capacity", cap.snapshot, "dry-run")]
    if plan.kind == Plan.Kind.DRAIN:
        dr = drain(
            snap, r.get("nodes") or [], r.get("selector") or None, config,
            respect_pdb=bool(r.get("respectPdb")), all_nodes=all_nodes, budget=budget,
        )  # fmt: skip
        return dr.to_dict(utilization=True), [("drain", dr.snapshot, "evict")]
    templates = [t if isinstance(t, str) else _template_file(t) for t in r["templates"]]
    up = scale_up(
        snap, templates, config, max_nodes=int(r.get("maxNodes", 10)), all_nodes=all_nodes, budget=budget
    )
    return up.to_dict(utilization=True), [(t.template.name, t.snapshot, "evict") for t in up.templates]


def _template_file(raw: dict[str, Any]) -> Any:
    """A Node object of a request as scale_up takes it: a Template (resolve_template reads names and files)."""
    return Template(str(raw["metadata"]["name"]), "request", raw)


def run_plan(plan_id: Any) -> str:
    from schedviz.replays.services import start_replay

    plan = claim_queued(Plan, plan_id)
    if plan is None:
        return "skipped"
    try:
        result, replayed = compute(plan)
        plan.result = result
        plan.status = Plan.Status.SUCCEEDED
    except SchedVizError as exc:
        plan.status, plan.error = Plan.Status.FAILED, str(exc)
    except Exception as exc:
        log.exception("plan %s failed", plan_id)
        plan.status, plan.error = Plan.Status.FAILED, f"internal error: {type(exc).__name__}: {exc}"
    if plan.status == Plan.Status.SUCCEEDED and plan.request.get("replay", True):
        replays = []
        for label, snap, preemption in replayed:
            try:
                parsed = parse_objects(snapshot_objects(snap), source=f"{plan.kind} plan")
            except UploadError as exc:  # the plan's own objects: cannot happen unless a limit is hit
                plan.error = f"the plan's snapshot was not stored: {exc}"
                break
            stored, _ = store_parsed(
                plan.owner, parsed, name=f"{plan.name} ({label})", config=plan.snapshot.config, team=plan.team
            )
            rp = start_replay(
                plan.owner, stored, inline_config=plan.config, all_nodes=bool(plan.request.get("allNodes")),
                name=f"{plan.name} ({label})", preemption=preemption, extenders="skip",
            )  # fmt: skip
            replays.append({"label": label, "replay": str(rp.pk), "snapshot": str(stored.pk)})
        plan.replays = replays
    plan.finished = timezone.now()
    save(plan)
    return str(plan.status)


def wait_for(plan: Plan, seconds: float) -> Plan:
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        plan.refresh_from_db()
        if plan.status in (Plan.Status.SUCCEEDED, Plan.Status.FAILED) or time.monotonic() >= deadline:
            return plan
        time.sleep(0.05)
