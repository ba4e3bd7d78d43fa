"""Filter verdicts for a batch of nodes.

A filter plugin judges many nodes at once and answers with one code per node and, for rejected
nodes, an index into a small table of reason tuples (most rejections share a handful of messages).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .status import Code

CodeArray = npt.NDArray[np.int8]
ReasonArray = npt.NDArray[np.int32]


class Verdicts:
    """``codes[k]`` and ``reasons[reason_ids[k]]`` describe the k-th node of the batch."""

    __slots__ = ("codes", "reason_ids", "reasons")

    def __init__(self, codes: CodeArray, reason_ids: ReasonArray, reasons: Sequence[tuple[str, ...]]) -> None:
        self.codes = codes
        self.reason_ids = reason_ids
        self.reasons: list[tuple[str, ...]] = list(reasons)

    @classmethod
    def all_pass(cls, count: int) -> Verdicts:
        return cls(np.zeros(count, dtype=np.int8), np.full(count, -1, dtype=np.int32), [])

    @classmethod
    def from_mask(cls, failed: npt.NDArray[np.bool_], code: Code, *reasons: str) -> Verdicts:
        """Nodes where ``failed`` is true are rejected with one status; the others pass."""
        codes = np.where(failed, np.int8(code), np.int8(0)).astype(np.int8)
        ids = np.where(failed, np.int32(0), np.int32(-1)).astype(np.int32)
        return cls(codes, ids, [tuple(reasons)])

    @classmethod
    def build(cls, count: int) -> VerdictBuilder:
        return VerdictBuilder(count)

    @property
    def passed(self) -> npt.NDArray[np.bool_]:
        passed: npt.NDArray[np.bool_] = self.codes == 0
        return passed

    def __len__(self) -> int:
        return len(self.codes)

    def at(self, k: int) -> tuple[Code, tuple[str, ...]]:
        rid = int(self.reason_ids[k])
        return Code(int(self.codes[k])), (self.reasons[rid] if rid >= 0 else ())


class VerdictBuilder:
    """Accumulates rejections with varied reasons; reason tuples are interned."""

    def __init__(self, count: int) -> None:
        self.codes = np.zeros(count, dtype=np.int8)
        self.reason_ids = np.full(count, -1, dtype=np.int32)
        self._table: dict[tuple[str, ...], int] = {}

    def reject(
        self, where: npt.NDArray[np.bool_] | npt.NDArray[np.intp] | int, code: Code, *reasons: str
    ) -> None:
        """Reject the nodes at ``where`` (a mask or positions) that have not been rejected yet."""
        rid = self._table.setdefault(tuple(reasons), len(self._table))
        if isinstance(where, int):
            if self.codes[where] == 0:
                self.codes[where] = code
                self.reason_ids[where] = rid
            return
        if where.dtype == np.bool_:
            sel = where & (self.codes == 0)
        else:
            pos = np.asarray(where, dtype=np.intp)
            sel = np.zeros(len(self.codes), dtype=bool)
            sel[pos] = True
            sel &= self.codes == 0
        self.codes[sel] = code
        self.reason_ids[sel] = rid

    def done(self) -> Verdicts:
        table = [r for r, _ in sorted(self._table.items(), key=lambda kv: kv[1])]
        return Verdicts(self.codes, self.reason_ids, table)
