"""Helpers shared by several plugins (pkg/scheduler/framework/plugins/helper/)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def go_div(num: IntArray, den: int) -> IntArray:
    """Go's int64 division, which truncates toward zero (numpy's // floors); ``den`` > 0."""
    return np.where(num >= 0, num // den, -((-num) // den)).astype(np.int64)


def default_normalize_score(max_priority: int, reverse: bool, scores: IntArray) -> IntArray:
    """helper/normalize_score.go DefaultNormalizeScore: scale [0, max(scores)] to [0, max_priority]
    with integer division, optionally reversed (max_priority - score). Scores are assumed
    non-negative, as upstream assumes."""
    out = np.asarray(scores, dtype=np.int64).copy()
    if len(out) == 0:
        return out
    top = int(out.max())
    if top <= 0:
        # upstream's running maximum starts at 0: all-zero (or negative) scores leave it at 0
        if reverse:
            out[:] = max_priority
        return out
    out = go_div(max_priority * out, top)
    if reverse:
        out = max_priority - out
    return out
