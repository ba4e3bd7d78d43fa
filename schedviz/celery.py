"""The Celery application: replays run on workers fed through Redis."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")

app = Celery("schedviz")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["schedviz.replays", "schedviz.ingestion", "schedviz.plans"])
