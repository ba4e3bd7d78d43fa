"""Kubernetes' CEL limits for DRA selectors (k8s.io/api/resource/v1/types.go,
dynamic-resource-allocation/cel/compile.go) and the runtime cost tracker.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

# ----- Kubernetes' cost limits ---------------------------------------------------------------------

# k8s.io/api/resource/v1/types.go (pkg/apis/resource/types.go declares the same values).
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength
_DRIVER_NAME_MAX_LENGTH = 63  # DriverNameMaxLength
_DEVICE_MAX_DOMAIN_LENGTH = 63  # DeviceMaxDomainLength
_DEVICE_MAX_ID_LENGTH = 32  # DeviceMaxIDLength
_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64  # DeviceAttributeMaxValueLength
_MAX_ATTRIBUTES_AND_CAPACITIES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice

# pkg/apis/resource/validation/validation.go validateCELSelector: the bodies of field.Forbidden and
# field.TooLong (apimachinery field.Error.ErrorBody) on <selector>.cel.expression.
TOO_COMPLEX = "Forbidden: too complex, exceeds cost limit"
TOO_LONG = f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"
# cel-go interpreter/runtimecost.go: the EvalCancelledError (cause CostLimitExceeded) an evaluation
# ends with once its cost passes the program's CostLimit.
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"

# cel-go common/cost.go
_SELECT_AND_IDENT_COST = 1
_LIST_CREATE_BASE_COST = 10
_MAP_CREATE_BASE_COST = 30
_STRING_TRAVERSAL_COST_FACTOR = 0.1
_REGEX_STRING_LENGTH_COST_FACTOR = 0.25

# SchedViz's own bound (no upstream counterpart): about how many bytes of strings, lists and maps one
# evaluation may build. cel-go shares what SchedViz copies (list concatenation is O(1) there and costs
# 1); an evaluation that would build more ends with COST_LIMIT_EXCEEDED like one over its budget.
MATERIALIZED_MAX = 64 * 2**20

_U64 = 2**64 - 1
_U64_F = float(_U64)
_TWO_TO_64_F = math.ldexp(1.0, 64)


class CelRefused(Exception):
    """The API server would refuse the expression (validation.go validateCELSelector): longer than
    CELSelectorExpressionMaxLength, or an estimated cost over CELSelectorExpressionMaxCost. The message
    is the field error's body, e.g. "Forbidden: too complex, exceeds cost limit"."""


class _CostLimit(Exception):
    """The budget of an evaluation is spent (cel-go panics with EvalCancelledError)."""


class CostTracker:
    """cel-go's interpreter.CostTracker for one evaluation: ``cost`` is the actual cost so far,
    ``limit`` the program's CostLimit (compile.go: CELSelectorExpressionMaxCost unless overridden).
    ``materialized`` counts the bytes (roughly) of values the evaluation built, against
    ``materialized_limit`` (MATERIALIZED_MAX)."""

    __slots__ = ("cost", "frame", "limit", "materialized", "materialized_limit", "vars")

    def __init__(
        self, limit: int = CEL_SELECTOR_EXPRESSION_MAX_COST, materialized_limit: int = MATERIALIZED_MAX
    ) -> None:
        self.cost = 0
        self.limit = limit
        self.materialized = 0
        self.materialized_limit = materialized_limit
        self.frame: list[Any] = []
        self.vars: Mapping[str, Any] = {}

    def charge(self, n: int) -> None:
        self.cost += n
        if self.cost > self.limit:
            raise _CostLimit()

    def materialize(self, n: int) -> None:
        """Account for a value about to be built (``materialized`` only counts what was built)."""
        if self.materialized + n > self.materialized_limit:
            raise _CostLimit()
        self.materialized += n
