"""The replays app's tests (configurations, replays, reports, the replay websocket): the web fixtures."""

from __future__ import annotations

from tests.webfixtures import (  # noqa: F401  (fixtures re-exported for this directory)
    _sync_tasks,
    alice,
    api,
    bob,
    carol,
    carol_api,
    make_user,
    other_api,
    team,
    throttle_rates,
    upload,
)
