"""Errors the engine raises on purpose. Anything else escaping the engine is a bug."""

from __future__ import annotations


class SchedVizError(Exception):
    """Base class of every error the engine raises deliberately."""


class InputError(SchedVizError):
    """Bad input: names where it was found (file, object, field) and what is wrong."""

    def __init__(self, message: str, *, source: str = "", obj: str = "", field: str = "") -> None:
        self.source = source
        self.obj = obj
        self.field = field
        self.problem = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.source:
            where.append(self.source)
        if self.obj:
            where.append(self.obj)
        if self.field:
            where.append(f"field {self.field}")
        prefix = ": ".join(where)
        return f"{prefix}: {self.problem}" if prefix else self.problem

    def with_source(self, source: str) -> InputError:
        if self.source:
            return self
        return InputError(self.problem, source=source, obj=self.obj, field=self.field)


class ConfigError(SchedVizError):
    """An invalid KubeSchedulerConfiguration; lists every problem found, upstream style."""

    def __init__(self, problems: list[str], source: str = "") -> None:
        self.problems = problems
        self.source = source
        head = f"{source}: " if source else ""
        super().__init__(head + "invalid KubeSchedulerConfiguration: " + "; ".join(problems))
