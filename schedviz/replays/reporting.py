"""CI reports on the server: the same report `schedviz report --local` builds, run as a task."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import transaction
from django.utils import timezone

from schedviz.engine.config import load_config
from schedviz.engine.errors import SchedVizError
from schedviz.engine.runtime.replay import ReplayOptions
from schedviz.ingestion.models import Snapshot
from schedviz.outbound import extenders as outbound_extenders

from .jobs import claim_queued, save
from .models import Report
from .runner import budget_for

log = logging.getLogger(__name__)


def create_report(
    owner: Any,
    snapshot: Snapshot,
    candidate: dict[str, Any] | None,
    baseline: dict[str, Any] | None,
    has_baseline: bool,
    extenders: str = "call",
) -> Report:
    """Queue a report. The configurations are checked as the server runs them: ``extenders`` "call"
    refuses extenders it may not call (ConfigError), "skip" leaves them out and names them."""
    from .tasks import dispatch_report

    own = candidate is None
    candidate, cand_skipped = outbound_extenders.vet(
        snapshot.config if own else candidate, extenders, "config"
    )
    if own and not cand_skipped:
        candidate = None  # the snapshot's own configuration, as it is
    base_skipped: list[str] = []
    if has_baseline:
        baseline, base_skipped = outbound_extenders.vet(baseline, extenders, "baseline")
    options: dict[str, Any] = {}
    if cand_skipped or base_skipped:
        options["extendersNotCalled"] = {"config": cand_skipped, "baseline": base_skipped}
    with transaction.atomic():
        rep = Report.objects.create(
            owner=owner, team=snapshot.team, snapshot=snapshot, candidate=candidate, baseline=baseline,
            has_baseline=has_baseline, options=options,
        )
        dispatch_report(rep.pk)
    return rep


def run_report(report_id: Any) -> str:
    from schedviz.reports import build_report

    rep = claim_queued(Report, report_id)
    if rep is None:
        return "skipped"
    budget = budget_for()  # each cycle bounded as a replay's is (SCHEDVIZ_CYCLE_SECONDS)
    try:
        snap = Snapshot.without_bulk(rep.snapshot_id).engine_snapshot()
        cand = load_config(rep.candidate if rep.candidate is not None else snap.config)
        base = load_config(rep.baseline) if rep.has_baseline else None
        options = ReplayOptions(extender_transport=outbound_extenders.transport(), budget=budget)
        result = build_report(snap, cand, base, options)
        if rep.options.get("extendersNotCalled"):
            result["extendersNotCalled"] = rep.options["extendersNotCalled"]
        rep.result = result
        rep.status = Report.Status.SUCCEEDED
    except SchedVizError as exc:
        rep.status, rep.error = Report.Status.FAILED, str(exc)
    except Exception as exc:
        log.exception("report %s failed", report_id)
        rep.status, rep.error = Report.Status.FAILED, f"internal error: {type(exc).__name__}: {exc}"
    finally:
        budget.close()
    rep.finished = timezone.now()
    save(rep)
    return str(rep.status)


def wait_for(report: Report, seconds: float) -> Report:
    """Poll until the report ends or ``seconds`` pass."""
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        report.refresh_from_db()
        if report.status in (Report.Status.SUCCEEDED, Report.Status.FAILED) or time.monotonic() >= deadline:
            return report
        time.sleep(0.05)
