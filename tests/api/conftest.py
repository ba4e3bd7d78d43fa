"""The API plumbing's tests, and those across every app's endpoints (access, bad input, queries,
the schema, throttling): the web fixtures."""

from __future__ import annotations

from tests.webfixtures import (  # noqa: F401  (fixtures and helpers re-exported for this directory)
    _sync_tasks,
    alice,
    api,
    bob,
    carol,
    carol_api,
    client_for,
    cluster_yaml,
    error_of,
    make_user,
    other_api,
    team,
    throttle_rates,
    upload,
)
