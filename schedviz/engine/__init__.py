"""The scheduling engine: kube-scheduler v1.35's framework and in-tree plugins, in Python.

Usage::

    from schedviz.engine import load_paths, load_config, replay
    trace = replay(load_paths(["cluster.yaml"]))
    print(trace.to_dict()["cycles"][0]["selectedNode"])
"""

from .config import SchedulerConfig, load_config
from .errors import ConfigError, InputError, SchedVizError
from .loader import Snapshot, load_paths, load_texts
from .runtime.replay import Replay, ReplayOptions, replay
from .trace import KUBERNETES_VERSION, CycleRecord, ReplayTrace

__all__ = [
    "KUBERNETES_VERSION",
    "ConfigError",
    "CycleRecord",
    "InputError",
    "Replay",
    "ReplayOptions",
    "ReplayTrace",
    "SchedVizError",
    "SchedulerConfig",
    "Snapshot",
    "load_config",
    "load_paths",
    "load_texts",
    "replay",
]
