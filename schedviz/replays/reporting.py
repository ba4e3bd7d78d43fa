"""CI reports on the server: the same report `schedviz report --local` builds, run as a task."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import transaction
from django.utils import timezone

from schedviz.engine.config import load_config
from schedviz.engine.errors import SchedVizError
from schedviz.engine.runtime import registry
from schedviz.ingestion.models import Snapshot

from .models import Report

log = logging.getLogger(__name__)


def create_report(owner: Any, snapshot: Snapshot, candidate: dict[str, Any] | None, baseline: dict[str, Any] | None,
                  has_baseline: bool) -> Report:
    from .tasks import dispatch_report

    with transaction.atomic():
        rep = Report.objects.create(
            owner=owner, team=snapshot.team, snapshot=snapshot, candidate=candidate, baseline=baseline,
            has_baseline=has_baseline,
        )
        dispatch_report(rep.pk)
    return rep


def run_report(report_id: Any) -> str:
    from schedviz.reports import build_report

    with transaction.atomic():
        rep = Report.objects.select_for_update().filter(pk=report_id).first()
        if rep is None or rep.status != Report.Status.QUEUED:
            return "skipped"
        rep.status = Report.Status.RUNNING
        rep.save(update_fields=["status"])
    try:
        snap = rep.snapshot.engine_snapshot()
        impl = registry.implements_table()
        cand = load_config(rep.candidate if rep.candidate is not None else snap.config, implements=impl)
        base = load_config(rep.baseline, implements=impl) if rep.has_baseline else None
        result = build_report(snap, cand, base)
        rep.result = result
        rep.status = Report.Status.SUCCEEDED
    except SchedVizError as exc:
        rep.status, rep.error = Report.Status.FAILED, str(exc)
    except Exception as exc:
        log.exception("report %s failed", report_id)
        rep.status, rep.error = Report.Status.FAILED, f"internal error: {type(exc).__name__}: {exc}"
    rep.finished = timezone.now()
    rep.save()
    return str(rep.status)


def wait_for(report: Report, seconds: float) -> Report:
    """Poll until the report ends or ``seconds`` pass."""
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        report.refresh_from_db()
        if report.status in (Report.Status.SUCCEEDED, Report.Status.FAILED) or time.monotonic() >= deadline:
            return report
        time.sleep(0.05)
