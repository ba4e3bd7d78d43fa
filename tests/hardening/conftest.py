"""Fixtures for the hardening tests: the API fixtures (users, token clients), generous throttles."""

from __future__ import annotations

from tests.webfixtures import (  # noqa: F401  (fixtures re-exported for this directory)
    _sync_tasks,
    alice,
    api,
    bob,
    carol,
    make_user,
    other_api,
    throttle_rates,
    upload,
)
