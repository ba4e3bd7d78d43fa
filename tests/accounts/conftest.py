"""The accounts app's tests: the web fixtures for the API tokens endpoints' tests, without the autouse
ones (the sign-in throttle's tests order their own settings and cache fixtures; test_tokens.py applies
``sync_tasks`` and ``generous_throttles`` itself)."""

from __future__ import annotations

from tests.webfixtures import (  # noqa: F401  (fixtures re-exported for this directory)
    alice,
    api,
    bob,
    make_user,
    other_api,
)
