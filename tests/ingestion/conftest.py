"""The ingestion app's tests: the web fixtures for its endpoints' and import-cluster's tests, without
the autouse ones (the parser's tests need none; test_snapshots.py and test_import_cluster.py apply
``sync_tasks`` and ``generous_throttles`` themselves)."""

from __future__ import annotations

from tests.webfixtures import (  # noqa: F401  (fixtures re-exported for this directory)
    alice,
    api,
    bob,
    make_user,
    other_api,
    upload,
)
