"""Plans run where replays run: a Celery task, or the in-process fair queue (replays/tasks.py),
within the owner's share of replay slots."""

from __future__ import annotations

from typing import Any

from schedviz.celery import app
from schedviz.replays.tasks import dispatch_job, owner_slot, retry_seconds

from .models import Plan
from .services import run_plan


@app.task(  # type: ignore[untyped-decorator]
    name="schedviz.run_plan", bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None
)
def run_plan_task(self: Any, plan_id: str) -> str:
    info = getattr(self.request, "delivery_info", None) or {}
    with owner_slot(Plan, plan_id, reclaim=bool(info.get("redelivered"))) as granted:
        if not granted:
            raise self.retry(countdown=retry_seconds())
        return run_plan(plan_id)


def dispatch_plan(plan_id: Any) -> None:
    dispatch_job(run_plan, run_plan_task, Plan, plan_id)
