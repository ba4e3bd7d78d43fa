"""The writes of a queued job (replays, reports, plans): claimed once, saved whole, retried on a lock."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import OperationalError

from schedviz.ingestion.services import create_snapshot
from schedviz.replays import jobs
from schedviz.replays.models import Report
from tests.webfixtures import cluster_yaml


@pytest.fixture
def report(alice: User) -> Report:
    snap, _ = create_snapshot(alice, cluster_yaml().encode(), "cluster.yaml")
    return Report.objects.create(owner=alice, snapshot=snap, candidate=None, baseline=None, has_baseline=False)


def test_a_queued_job_is_claimed_once(report: Report) -> None:
    claimed = jobs.claim_queued(Report, report.pk)
    assert claimed is not None and claimed.pk == report.pk
    assert claimed.status == Report.Status.RUNNING
    report.refresh_from_db()
    assert report.status == Report.Status.RUNNING
    assert jobs.claim_queued(Report, report.pk) is None  # another worker's now


def test_a_job_that_ended_or_is_gone_is_not_claimed(report: Report) -> None:
    Report.objects.filter(pk=report.pk).update(status=Report.Status.SUCCEEDED)
    assert jobs.claim_queued(Report, report.pk) is None
    report.refresh_from_db()
    assert report.status == Report.Status.SUCCEEDED
    assert jobs.claim_queued(Report, uuid.uuid4()) is None


def test_claim_keeps_what_take_saved_when_it_declines(report: Report) -> None:
    seen: list[Any] = []

    def decline(job: Report) -> bool:
        seen.append(job.pk)
        job.error = "looked at"
        job.save(update_fields=["error"])
        return False

    assert jobs.claim(Report, report.pk, decline) is None
    assert seen == [report.pk]
    report.refresh_from_db()
    assert (report.status, report.error) == (Report.Status.QUEUED, "looked at")
    assert jobs.claim(Report, report.pk, lambda job: True) == report


def test_save_stores_the_whole_job(report: Report) -> None:
    report.status, report.error, report.result = Report.Status.FAILED, "no", {"a": 1}
    jobs.save(report)
    report.refresh_from_db()
    assert (report.status, report.error, report.result) == (Report.Status.FAILED, "no", {"a": 1})


def test_a_write_that_failed_on_a_lock_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(jobs.time, "sleep", waits.append)
    calls: list[int] = []

    @jobs.retrying
    def write(fail: int, message: str) -> str:
        calls.append(1)
        if len(calls) <= fail:
            raise OperationalError(message)
        return "done"

    assert write(2, "database is locked") == "done"
    assert waits == [0.1, 0.2]

    calls.clear()
    with pytest.raises(OperationalError, match="no such table"):
        write(1, "no such table: x")  # not a lock: at once
    assert len(calls) == 1

    calls.clear()
    with pytest.raises(OperationalError, match="deadlock"):
        write(jobs.RETRIES, "deadlock detected")  # every try failed
    assert len(calls) == jobs.RETRIES
