"""The Kubernetes client side's tests: the stand-in API server."""

from __future__ import annotations

from tests.kubefixtures import apiserver  # noqa: F401  (re-exported for this directory)
