"""Label selectors (apimachinery/pkg/apis/meta/v1 LabelSelectorAsSelector, pkg/labels).

A nil selector selects nothing; an empty one selects everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import InputError

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class Requirement:
    __slots__ = ("key", "op", "values")

    def __init__(self, key: str, op: str, values: frozenset[str]) -> None:
        self.key = key
        self.op = op
        self.values = values

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "In":
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist

    def __repr__(self) -> str:
        return f"{self.key} {self.op} {sorted(self.values)}"


class LabelSelector:
    """A parsed metav1.LabelSelector."""

    __slots__ = ("nothing", "requirements")

    def __init__(self, requirements: list[Requirement], nothing: bool = False) -> None:
        self.requirements = requirements
        self.nothing = nothing

    @classmethod
    def parse(cls, raw: Any, *, obj: str = "", field: str = "") -> LabelSelector:
        if raw is None:
            return cls([], nothing=True)
        if not isinstance(raw, dict):
            raise InputError("expected a label selector object", obj=obj, field=field)
        reqs: list[Requirement] = []
        ml = raw.get("matchLabels") or {}
        if not isinstance(ml, dict):
            raise InputError("expected an object", obj=obj, field=f"{field}.matchLabels")
        for k, v in ml.items():
            reqs.append(Requirement(str(k), "In", frozenset({"" if v is None else str(v)})))
        exprs = raw.get("matchExpressions") or []
        if not isinstance(exprs, list):
            raise InputError("expected a list", obj=obj, field=f"{field}.matchExpressions")
        for i, e in enumerate(exprs):
            f = f"{field}.matchExpressions[{i}]"
            if not isinstance(e, dict):
                raise InputError("expected an object", obj=obj, field=f)
            key = e.get("key")
            op = e.get("operator")
            if not isinstance(key, str) or not key:
                raise InputError("key is required", obj=obj, field=f"{f}.key")
            if op not in OPERATORS:
                raise InputError(
                    f"{op!r} is not a valid label selector operator", obj=obj, field=f"{f}.operator"
                )
            values = e.get("values") or []
            if not isinstance(values, list):
                raise InputError("expected a list", obj=obj, field=f"{f}.values")
            if op in ("In", "NotIn") and not values:
                raise InputError(
                    "must be specified when `operator` is 'In' or 'NotIn'", obj=obj, field=f"{f}.values"
                )
            if op in ("Exists", "DoesNotExist") and values:
                raise InputError(
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    obj=obj,
                    field=f"{f}.values",
                )
            reqs.append(Requirement(key, str(op), frozenset(str(v) for v in values)))
        return cls(reqs)

    @classmethod
    def everything(cls) -> LabelSelector:
        return cls([])

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> LabelSelector:
        """labels.SelectorFromSet: every key must equal its value."""
        return cls([Requirement(k, "In", frozenset({v})) for k, v in labels.items()])

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def is_empty(self) -> bool:
        return not self.nothing and not self.requirements

    def add(self, *requirements: Requirement) -> LabelSelector:
        if self.nothing:
            return self
        return LabelSelector([*self.requirements, *requirements])

    def __repr__(self) -> str:
        if self.nothing:
            return "LabelSelector(<nothing>)"
        return f"LabelSelector({self.requirements!r})"
