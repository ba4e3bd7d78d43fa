"""Planning: capacity, drain and scale-up questions answered by replays (no Django).

- ``capacity``: how many more copies of a pod (or of several, an application) the scheduler would
  place, where, and kube-scheduler's message for the first copy that does not fit;
- ``drain``: cordon nodes, evict their pods as ``kubectl drain`` does, and replay the pods their
  controllers recreate;
- ``scale_up``: add clones of a template node one at a time until the pending pods fit.

Each answer carries the snapshot it replayed (``plan.snapshot``): replaying it gives the answer.
"""

from .base import parse_selector, snapshot_document
from .capacity import IN_ORDER, ORDERS, ROUND_ROBIN, CapacityPlan, PodSpec, capacity, pod_spec, read_pod_spec
from .drain import DrainPlan, drain
from .scaleup import ScaleUpPlan, TemplatePlan, scale_up

__all__ = [
    "IN_ORDER",
    "ORDERS",
    "ROUND_ROBIN",
    "CapacityPlan",
    "DrainPlan",
    "PodSpec",
    "ScaleUpPlan",
    "TemplatePlan",
    "capacity",
    "drain",
    "parse_selector",
    "pod_spec",
    "read_pod_spec",
    "scale_up",
    "snapshot_document",
]
