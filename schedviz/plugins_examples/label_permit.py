"""LabelPermit, an example custom Permit plugin: let a pod bind only to a node carrying a given label.

The node chosen for the pod must have one of ``labels``: a key (any value) or ``key=value``. When it
has none, the pod is rejected (Unschedulable) with a reason naming the labels, or, with
``onMismatch: Wait``, left waiting at Permit for ``timeout`` (as a gang or quota controller would make
it wait for an approval).

Configuration::

    profiles:
    - schedulerName: default-scheduler
      plugins:
        permit:
          enabled:
          - name: LabelPermit
      pluginConfig:
      - name: LabelPermit
        args:
          labels: [gpu-ready, "accelerator=nvidia"]   # required
          onMismatch: Deny                            # or Wait; default Deny
          timeout: 30s                                # how long Wait lasts, at most 15m; default 30s
"""

from __future__ import annotations

from typing import Any

from schedviz.engine.config import is_label_key, is_label_value, parse_duration_ns
from schedviz.engine.framework import Code, CycleState, Handle, Status
from schedviz.engine.objects import Pod
from schedviz.engine.plugin_args import index, invalid, not_supported, required, unknown_fields
from schedviz.engine.runtime.registry import register

NAME = "LabelPermit"
MODES = ("Deny", "Wait")
DEFAULT_TIMEOUT = "30s"
# framework/runtime/framework.go maxTimeout: the longest a Permit plugin may make a pod wait
MAX_TIMEOUT_NS = 15 * 60 * 10**9


def parse_label(item: str) -> tuple[str, str | None]:
    """``key`` -> (key, None); ``key=value`` -> (key, value)."""
    key, sep, value = item.partition("=")
    return key, (value if sep else None)


@register
class LabelPermit:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        # args arrive defaulted and validated (default_args, validate_args)
        self.labels = [parse_label(item) for item in args["labels"]]
        self.shown = "[" + " ".join(args["labels"]) + "]"
        self.wait = args["onMismatch"] == "Wait"
        self.timeout_seconds = parse_duration_ns(args["timeout"]) / 1e9

    @staticmethod
    def default_args(args: dict[str, Any]) -> dict[str, Any]:
        return {"onMismatch": "Deny", "timeout": DEFAULT_TIMEOUT, **args}

    @staticmethod
    def validate_args(args: dict[str, Any]) -> list[str]:
        problems = unknown_fields(args, ("labels", "onMismatch", "timeout"))
        labels = args.get("labels")
        if labels is None or labels == []:
            problems.append(required("labels", "at least one label key or key=value"))
        elif not isinstance(labels, list):
            problems.append(invalid("labels", labels, "must be a list of label keys or key=value"))
        else:
            for i, item in enumerate(labels):
                if not isinstance(item, str):
                    problems.append(invalid(index("labels", i), item, "must be a string"))
                    continue
                key, value = parse_label(item)
                problems.extend(invalid(index("labels", i), item, m) for m in is_label_key(key))
                if value is not None:
                    problems.extend(invalid(index("labels", i), item, m) for m in is_label_value(value))
        mode = args.get("onMismatch")
        if mode not in MODES:
            problems.append(not_supported("onMismatch", mode, MODES))
        timeout = args.get("timeout")
        if not isinstance(timeout, str):
            problems.append(invalid("timeout", timeout, 'must be a duration such as "30s"'))
        else:
            try:
                ns = parse_duration_ns(timeout)
            except ValueError as exc:
                problems.append(invalid("timeout", timeout, str(exc)))
            else:
                if not 0 < ns <= MAX_TIMEOUT_NS:
                    problems.append(invalid("timeout", timeout, "must be greater than 0s and at most 15m"))
        return problems

    def permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, float]:
        cluster = state.cluster
        labels = cluster.nodes[cluster.index[node]].labels
        for key, value in self.labels:
            if key in labels and (value is None or labels[key] == value):
                return Status.success(), 0.0
        reason = f"node(s) had none of the labels {self.shown}"
        if self.wait:
            return Status(Code.Wait, reason), self.timeout_seconds
        return Status(Code.Unschedulable, reason), 0.0
