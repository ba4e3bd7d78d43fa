"""The CEL expressions of DRA device selectors, evaluated with cel-python (PyPI ``cel-python``,
module ``celpy``) plus the Kubernetes parts of the environment they run in.

dynamic-resource-allocation/cel/compile.go compiles a selector in Kubernetes' base CEL environment
(apiserver/pkg/cel/environment/base.go) with one variable, ``device``: ``driver`` (string),
``attributes`` and ``capacity`` (maps domain -> id -> value; a missing domain reads as an empty
map, a missing id is the runtime error "no such key"). celpy parses the expression and provides the
values and most operators; this module adds what cel-go and Kubernetes bring on top of it:

- a compile-time check in the manner of cel-go's type-checker: undeclared variables, unknown
  functions, fields ``device`` does not have, ``has()`` without a field selection
  (:class:`CelCompileError`); valid CEL that is not available here raises :class:`CelUnsupported`
  (two-variable comprehensions, optional types, the URL, IP, CIDR and format libraries);
- cel-go's operators where celpy differs: heterogeneous equality (``"a" == 1`` is false) and the
  cross-type numeric comparisons Kubernetes enables (``1 < 1.5``, ``1 == 1.0``);
- the Kubernetes libraries selectors use: ``quantity()`` and ``semver()`` with their methods, the
  lists library (``isSorted``, ``sum``, ``max``, ``indexOf`` ...), regex (``find``, ``findAll``), the
  cel-go string extensions (v2: ``lowerAscii``, ``split``, ``substring`` ...), ``sets.*`` and
  ``cel.bind``;
- runtime errors worded as cel-go words them ("no such key: memoryGiB", "no such overload",
  "division by zero");
- Kubernetes' CEL cost limits (below).

Cost limits. The API server stores a selector only if it is at most CELSelectorExpressionMaxLength
(10 KiB) long and cel-go's *estimated* worst-case cost is at most CELSelectorExpressionMaxCost
(1,000,000; k8s.io/api/resource/v1/types.go), else validation.go refuses it ("Too long: may not be
more than 10240 bytes", "Forbidden: too complex, exceeds cost limit"): ``compile_selector(expr,
validate=True)`` raises :class:`CelRefused`. kube-scheduler compiles without the estimate but gives
every evaluation a *runtime* budget of the same figure (compile.go: cel.CostLimit), ending it with
cel-go's "operation cancelled: actual cost limit exceeded" (:data:`COST_LIMIT_EXCEEDED`).

- The estimate follows cel-go's checker/cost.go with Kubernetes' CostEstimator
  (apiserver/pkg/cel/library/cost.go) and compile.go's size estimates: strings reached through
  ``device`` are at most 63 (driver, domains), 32 (ids) or 64 (attribute values) long, the attribute
  and capacity maps hold at most 32 entries, list and map literals have their exact sizes, and a
  comprehension costs its range's size times the cost of one iteration (cel-go's expansion of the
  macro: loop condition plus step), so each nested macro multiplies. It reproduces the figures
  upstream's tests expect (compile_test.go, library/cost_test.go). It needs the types cel-go's checker
  infers; SchedViz infers them for what the estimate depends on (literals, ``device``'s fields, the
  macros, the operators and library functions), and takes dyn (every candidate overload, as cel-go
  does for dyn arguments) where it has no declaration, which can only raise the estimate.
- The runtime budget is charged as cel-go's cost tracker (interpreter/runtimecost.go) charges with
  Kubernetes' options (OptOptimize folding constant literals; has() costing nothing): 1 per variable,
  field selection and index, 10 per list and 30 per map built at runtime, and per call the function's
  cost from the actual sizes of its arguments (e.g. 0.1 per character of a string concatenation, the
  list's size for ``in``), by the overload the checker resolved. To count steps this way SchedViz
  evaluates the expression itself (closures over the lowered expression; celpy supplies parsing,
  values and operators) instead of through celpy's interpreter. Calls are charged before they run.
- SchedViz copies values cel-go shares (a concatenated list is a view there and costs 1): every
  evaluation may build at most about :data:`MATERIALIZED_MAX` bytes of strings, lists and maps, and
  ends with the same cost-limit error beyond that, so no expression builds gigabytes.
"""

from .limits import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    COST_LIMIT_EXCEEDED,
    MATERIALIZED_MAX,
    TOO_COMPLEX,
    TOO_LONG,
    CelRefused,
    CostTracker,
)
from .program import Program, compile_selector, estimate_cost
from .values import (
    INT64_MAX,
    INT64_MIN,
    CelCompileError,
    CelError,
    CelUnsupported,
    Quantity,
    Semver,
    device_env,
    parse_semver,
)

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "COST_LIMIT_EXCEEDED",
    "INT64_MAX",
    "INT64_MIN",
    "MATERIALIZED_MAX",
    "TOO_COMPLEX",
    "TOO_LONG",
    "CelCompileError",
    "CelError",
    "CelRefused",
    "CelUnsupported",
    "CostTracker",
    "Program",
    "Quantity",
    "Semver",
    "compile_selector",
    "device_env",
    "estimate_cost",
    "parse_semver",
]
