"""Status codes and Status (kube-scheduler/framework/interface.go)."""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    """Upstream's status codes, same numeric values."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


class Status:
    """The outcome of one plugin call: a code, reasons, and the plugin that produced it."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code = Code.Success, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin

    @classmethod
    def success(cls) -> Status:
        return cls(Code.Success)

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.Skip)

    @classmethod
    def error(cls, message: str) -> Status:
        return cls(Code.Error, message)

    def is_success(self) -> bool:
        return self.code == Code.Success

    def is_skip(self) -> bool:
        return self.code == Code.Skip

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def __repr__(self) -> str:
        return f"Status({self.code.name}, {list(self.reasons)!r}, plugin={self.plugin!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return (self.code, self.reasons) == (other.code, other.reasons)

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))


class CycleError(Exception):
    """A plugin returned Error: the cycle ends with this message."""

    def __init__(self, message: str, plugin: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin
