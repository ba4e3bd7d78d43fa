"""Bounds on YAML read from users (scheduler configurations, kubeconfigs), checked before loading.

PyYAML's loaders give every alias the very object its anchor built, so a "billion laughs" document
loads in microseconds and then explodes in whatever walks it next (validation, ``json.dumps``, a
database column); and the composer recurses once per nesting level, so deep nesting ends in a
``RecursionError`` rather than a YAML error. Both are measured here on the parser's event stream,
before any object is built: nesting depth, and the number of nodes the document holds with every
alias counted as the nodes it stands for. (Snapshot uploads have their own, budgeted reader:
schedviz/ingestion/parsing.py.)
"""

from __future__ import annotations

import yaml

MAX_DEPTH = 100
MAX_NODES = 200_000

try:  # libyaml's parser when available: the same events, ten times faster
    from yaml import CSafeLoader as _Parser
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Parser  # type: ignore[assignment]


class YamlBoundsError(ValueError):
    """The text would nest or expand beyond the bounds; the message says which and where."""


def check(text: str, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> None:
    """Raises YamlBoundsError if ``text`` nests deeper than ``max_depth`` or expands to more than
    ``max_nodes`` nodes; YAML syntax errors propagate as ``yaml.YAMLError``."""
    anchors: dict[str, int] = {}
    sizes: list[int] = []  # nodes so far of each collection being read, outermost first
    names: list[str | None] = []  # and its anchor
    total = 0

    def close(size: int, anchor: str | None, mark: object) -> None:
        nonlocal total
        if anchor is not None:
            anchors[anchor] = size
        if sizes:
            sizes[-1] += size
            count = sizes[-1]
        else:
            total += size
            count = total
        if count > max_nodes:
            raise YamlBoundsError(
                f"more than {max_nodes} values once aliases are expanded{_line(mark)} "
                "(refused: possible alias bomb)"
            )

    for event in yaml.parse(text, Loader=_Parser):
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            sizes.append(1)
            names.append(event.anchor)
            if len(sizes) > max_depth:
                raise YamlBoundsError(f"nested deeper than {max_depth} levels{_line(event.start_mark)}")
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            close(sizes.pop(), names.pop(), event.start_mark)
        elif isinstance(event, yaml.ScalarEvent):
            close(1, event.anchor, event.start_mark)
        elif isinstance(event, yaml.AliasEvent):
            # an undefined alias counts as one: the loader then reports it as the error it is
            close(anchors.get(str(event.anchor), 1), None, event.start_mark)


def _line(mark: object) -> str:
    line = getattr(mark, "line", None)
    return f" (line {line + 1})" if isinstance(line, int) else ""


def check_value(value: object, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> None:
    """The same bounds on an already parsed value (a configuration given as a JSON object): raises
    YamlBoundsError when it nests deeper than ``max_depth`` or holds more than ``max_nodes`` values.
    Iterative, so a value nested thousands of levels deep is refused, not a RecursionError."""
    count = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        count += 1
        if count > max_nodes:
            raise YamlBoundsError(f"more than {max_nodes} values")
        if isinstance(v, dict | list):
            if depth > max_depth:
                raise YamlBoundsError(f"nested deeper than {max_depth} levels")
            items = v.values() if isinstance(v, dict) else v
            stack.extend((item, depth + 1) for item in items)
