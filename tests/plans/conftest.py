"""The plans app's tests: the web fixtures."""

from __future__ import annotations

from tests.webfixtures import (  # noqa: F401  (fixtures re-exported for this directory)
    _sync_tasks,
    alice,
    api,
    bob,
    make_user,
    other_api,
    throttle_rates,
    upload,
)
