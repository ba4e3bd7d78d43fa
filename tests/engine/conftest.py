"""The engine's tests run it as the command line does: extenders called directly, as kube-scheduler
calls them (the web application's guarded transport is installed when Django starts)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from schedviz.engine.runtime import extenders


@pytest.fixture(autouse=True)
def _direct_extender_transport() -> Iterator[None]:
    previous = extenders.set_transport(extenders.DIRECT)
    yield
    extenders.set_transport(previous)
