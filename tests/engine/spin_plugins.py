"""Custom plugins that loop on purpose, for the tests of the replay budget (engine/budget.py).

A pod labelled ``spin: filter`` (``spin: score``) makes SpinFilter (SpinScore) loop in Python; ``spin:
hold`` makes SpinFilter wait until ``release`` is set. Nothing spins longer than ``SAFETY_SECONDS``: a
budget that failed to stop a cycle makes the test fail, not hang.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from schedviz.engine.framework import Code, CycleState, Handle, Verdicts
from schedviz.engine.objects import Pod
from schedviz.engine.runtime import registry

SAFETY_SECONDS = 30.0
FILTER = "test.schedviz/SpinFilter"
SCORE = "test.schedviz/SpinScore"
SLOW_START = "test.schedviz/SlowStart"

entered = threading.Event()  # set whenever a spin or a hold starts
release = threading.Event()  # ends every hold
spins_done: list[str] = []  # pods whose spin ran to its end (never, when the budget works)


def spin(key: str) -> None:
    entered.set()
    end = time.monotonic() + SAFETY_SECONDS
    n = 0
    while time.monotonic() < end:
        n += 1
    spins_done.append(key)


def hold() -> None:
    entered.set()
    end = time.monotonic() + SAFETY_SECONDS
    while not release.is_set() and time.monotonic() < end:
        time.sleep(0.005)


class SpinFilter:
    name = FILTER

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle

    def filter(self, state: CycleState, pod: Pod, nodes: Any) -> Verdicts:
        mode = pod.labels.get("spin")
        if mode == "filter":
            spin(pod.key)
        elif mode == "hold":
            hold()
        return Verdicts.from_mask(np.zeros(len(nodes), dtype=bool), Code.Unschedulable, "")


class SpinScore:
    name = SCORE

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle

    def score(self, state: CycleState, pod: Pod, nodes: Any) -> Any:
        if pod.labels.get("spin") == "score":
            spin(pod.key)
        return np.zeros(len(nodes), dtype=np.int64)


class SlowStart:
    name = SLOW_START

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        spin("SlowStart constructor")

    def filter(self, state: CycleState, pod: Pod, nodes: Any) -> Verdicts:
        return Verdicts.from_mask(np.zeros(len(nodes), dtype=bool), Code.Unschedulable, "")


@contextmanager
def registered() -> Iterator[None]:
    """The three plugins registered for the block (and the hold released after it)."""
    entered.clear()
    release.clear()
    spins_done.clear()
    for cls in (SpinFilter, SpinScore, SlowStart):
        registry.register(cls)
    try:
        yield
    finally:
        release.set()
        for cls in (SpinFilter, SpinScore, SlowStart):
            registry.unregister(cls.name)


def config(filter: bool = True, score: bool = False, slow_start: bool = False, profiles: int = 1) -> dict[str, Any]:
    """A KubeSchedulerConfiguration with the plugins enabled next to the defaults."""
    plugins: dict[str, Any] = {}
    filters = [{"name": FILTER}] if filter else []
    if slow_start:
        filters.append({"name": SLOW_START})
    if filters:
        plugins["filter"] = {"enabled": filters}
    if score:
        plugins["score"] = {"enabled": [{"name": SCORE, "weight": 1}]}
    names = ["default-scheduler"] + [f"profile-{k}" for k in range(1, profiles)]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": n, "plugins": plugins} for n in names],
    }
