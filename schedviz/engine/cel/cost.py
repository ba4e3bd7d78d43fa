"""The estimated worst-case cost (cel-go checker/cost.go with Kubernetes' CostEstimator,
apiserver/pkg/cel/library/cost.go, and compile.go's size estimates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .limits import (
    _DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH,
    _DEVICE_MAX_DOMAIN_LENGTH,
    _DEVICE_MAX_ID_LENGTH,
    _DRIVER_NAME_MAX_LENGTH,
    _LIST_CREATE_BASE_COST,
    _MAP_CREATE_BASE_COST,
    _MAX_ATTRIBUTES_AND_CAPACITIES,
    _REGEX_STRING_LENGTH_COST_FACTOR,
    _SELECT_AND_IDENT_COST,
    _STRING_TRAVERSAL_COST_FACTOR,
    _TWO_TO_64_F,
    _U64,
    _U64_F,
)
from .parse import _ACCUMULATORS, _Call, _Comp, _Expr, _Ident, _List, _Lit, _Map, _Select, _Type

# ----- the estimated cost (cel-go checker/cost.go, Kubernetes' library/cost.go) ---------------------

_Size = tuple[int, int]
_UNKNOWN: _Size = (0, _U64)


def _sat(n: int) -> int:
    return n if n < _U64 else _U64


def _factor(x: int, f: float) -> int:
    """multiplyByCostFactor: x * f rounded up, saturating."""
    xf = float(x)
    if xf > 0 and f > 0 and xf > _U64_F / f:
        return _U64
    c = math.ceil(xf * f)
    return _U64 if c >= _TWO_TO_64_F else int(c)


def _size_add(a: _Size, b: _Size) -> _Size:
    return _sat(a[0] + b[0]), _sat(a[1] + b[1])


def _size_mul(a: _Size, b: _Size) -> _Size:
    return _sat(a[0] * b[0]), _sat(a[1] * b[1])


def _size_union(a: _Size, b: _Size) -> _Size:
    return min(a[0], b[0]), max(a[1], b[1])


@dataclass
class _Decl:
    """The DeclType facts compile.go's sizeEstimator reads: fields, key and element types, MaxElements."""

    max: int
    key: _Decl | None = None
    elem: _Decl | None = None
    fields: dict[str, _Decl] | None = None


# compile.go: attributeType, domainType, idType, driverType, the attribute and capacity maps, the device.
_ATTRIBUTE_DECL = _Decl(_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)
_DOMAIN_DECL = _Decl(_DEVICE_MAX_DOMAIN_LENGTH)
_ID_DECL = _Decl(_DEVICE_MAX_ID_LENGTH)
_DEVICE_DECL = _Decl(
    0,
    fields={
        "driver": _Decl(_DRIVER_NAME_MAX_LENGTH),
        "allowMultipleAllocations": _Decl(1),
        "attributes": _Decl(
            _MAX_ATTRIBUTES_AND_CAPACITIES,
            _DOMAIN_DECL,
            _Decl(_MAX_ATTRIBUTES_AND_CAPACITIES, _ID_DECL, _ATTRIBUTE_DECL),
        ),
        "capacity": _Decl(
            _MAX_ATTRIBUTES_AND_CAPACITIES,
            _DOMAIN_DECL,
            _Decl(_MAX_ATTRIBUTES_AND_CAPACITIES, _ID_DECL, _Decl(0)),
        ),
    },
)


def _device_size(path: list[str] | None) -> _Size | None:
    """compile.go sizeEstimator.EstimateSize: the size bound of what a path from ``device`` reaches."""
    if not path or path[0] != "device":
        return None
    node: _Decl | None = _DEVICE_DECL
    for name in path[1:]:
        assert node is not None
        if name in ("@items", "@values"):
            node = node.elem
        elif name == "@keys":
            node = node.key
        else:
            found = (node.fields or {}).get(name)
            if found is None:
                # Any id of an attribute map reaches an attribute value.
                if node.elem is _ATTRIBUTE_DECL:
                    node = _ATTRIBUTE_DECL
                    continue
                return None
            node = found
        if node is None:
            return None
    assert node is not None
    return 0, node.max


_SCALAR_KINDS = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})


def _expr_size(e: _Expr) -> _Size | None:
    """computeExprSize: literals, list and map literals."""
    if isinstance(e, _Lit):
        if e.kind in ("string", "bytes") and isinstance(e.value, (str, bytes)):
            return len(e.value), len(e.value)
        if e.kind in _SCALAR_KINDS or e.kind == "null_type":
            return 1, 1
        return None
    if isinstance(e, _List):
        return len(e.elems), len(e.elems)
    if isinstance(e, _Map):
        return len(e.entries), len(e.entries)
    return None


@dataclass
class _EntrySize:
    container: str
    key: _Size
    val: _Size


def _entry_union(a: _EntrySize | None, b: _EntrySize | None) -> _EntrySize | None:
    if a is None or b is None:
        return None
    return _EntrySize(a.container, _size_union(a.key, b.key), _size_union(a.val, b.val))


@dataclass
class _LocalVar:
    path: list[str]
    size: _Size | None
    entry: _EntrySize | None


@dataclass
class _Node:
    """checker.AstNode: what function estimators see of an argument."""

    path: list[str] | None
    t: _Type
    expr: _Expr | None
    size: _Size | None


_LIST_FUNCTIONS = frozenset({"isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"})
_NOMINAL_FUNCTIONS = frozenset(
    {
        "sign",
        "asInteger",
        "isInteger",
        "asApproximateFloat",
        "isGreaterThan",
        "isLessThan",
        "compareTo",
        "add",
        "sub",
        "major",
        "minor",
        "patch",
    }
)
_SETS_FACTORS = {
    "list_sets_contains_list": 1.0,
    "list_sets_intersects_list": 1.0,
    "list_sets_equivalent_list": 2.0,
}
_ORDERING_OVERLOADS = frozenset(
    f"{p}_{k}" for p in ("less", "less_equals", "greater", "greater_equals") for k in ("string", "bytes")
) | {"equals", "not_equals"}


class _Coster:
    """cel-go checker/cost.go ``coster`` with Kubernetes' CostEstimator (library/cost.go) and compile.go's
    sizeEstimator. Only the upper bound is tracked for costs (validation compares the maximum); sizes
    keep both bounds, which the replace() estimate uses."""

    def __init__(self) -> None:
        self.paths: dict[int, list[str]] = {}
        self.local: dict[str, list[_LocalVar]] = {}
        self.sizes: dict[int, _Size] = {}
        self.entries: dict[int, _EntrySize] = {}

    # scopes ------------------------------------------------------------------------------------------
    def _peek(self, name: str) -> _LocalVar | None:
        stack = self.local.get(name)
        return stack[-1] if stack else None

    def _push(self, name: str, var: _LocalVar) -> None:
        self.local.setdefault(name, []).append(var)

    def _pop(self, name: str) -> None:
        self.local[name].pop()

    def _push_local(self, name: str, e: _Expr) -> None:
        self._push(name, _LocalVar(self._path(e), self._size(e), self._entry(e)))

    def _push_iter(self, name: str, rng: _Expr) -> None:
        """pushIterSingle: list items or map keys, with the range's entry sizes when it has them."""
        entry = self._entry(rng)
        container = entry.container if entry is not None else rng.t[0]
        if container == "list":
            size, sub = (entry.val if entry is not None else None), "@items"
        else:
            size, sub = (entry.key if entry is not None else None), "@keys"
        self._push(name, _LocalVar([*self._path(rng), sub], size, None))

    # paths and sizes -------------------------------------------------------------------------------------
    def _path(self, e: _Expr) -> list[str]:
        if isinstance(e, _Ident):
            var = self._peek(e.name)
            if var is not None:
                return list(var.path)
        return list(self.paths.get(id(e), []))

    def _size(self, e: _Expr) -> _Size | None:
        """computeSize."""
        hit = self.sizes.get(id(e))
        if hit is not None:
            return hit
        size = _expr_size(e)
        if size is not None:
            return size
        size = _device_size(self._path(e))
        if size is not None:
            self.sizes[id(e)] = size
            return size
        if e.t[0] in _SCALAR_KINDS:
            return 1, 1
        if isinstance(e, _Ident):
            var = self._peek(e.name)
            if var is not None and var.size is not None:
                return var.size
        return None

    def _entry(self, e: _Expr) -> _EntrySize | None:
        hit = self.entries.get(id(e))
        if hit is not None:
            return hit
        if isinstance(e, _Ident):
            var = self._peek(e.name)
            if var is not None:
                return var.entry
        return None

    def _copy_sizes(self, dst: _Expr, src: _Expr) -> None:
        size, entry = self._size(src), self._entry(src)
        if size is not None:
            self.sizes[id(dst)] = size
        if entry is not None:
            self.entries[id(dst)] = entry

    def _node(self, e: _Expr) -> _Node:
        path: list[str] | None = self._path(e)
        if path and path[0] in _ACCUMULATORS:
            path = None
        return _Node(path, e.t, e, self._size(e))

    @staticmethod
    def _known(node: _Node) -> _Size:
        """sizeOrUnknown / library CostEstimator.sizeEstimate."""
        if node.size is not None:
            return node.size
        return _device_size(node.path) or _UNKNOWN

    # costs -----------------------------------------------------------------------------------------------
    def cost(self, e: _Expr) -> int:
        if isinstance(e, _Lit):
            return 0
        if isinstance(e, _Ident):
            var = self._peek(e.name)
            self.paths[id(e)] = list(var.path) if var is not None else [e.name]
            return _SELECT_AND_IDENT_COST
        if isinstance(e, _Select):
            if e.test_only:
                # Kubernetes' base environment: checker.PresenceTestHasCost(false).
                return self.cost(e.operand)
            total = self.cost(e.operand)
            if e.operand.t[0] in ("map", "device"):
                total = _sat(total + _SELECT_AND_IDENT_COST)
            self.paths[id(e)] = [*self._path(e.operand), e.field]
            return total
        if isinstance(e, _Call):
            return self._call(e)
        if isinstance(e, _List):
            total, item = 0, ((_U64, 0) if e.elems else (0, 0))
            for x in e.elems:
                total = _sat(total + self.cost(x))
                item = _size_union(item, self._size(x) or _UNKNOWN)
            self.entries[id(e)] = _EntrySize("list", (1, 1), item)
            return _sat(total + _LIST_CREATE_BASE_COST)
        if isinstance(e, _Map):
            total = 0
            keys, values = ((_U64, 0), (_U64, 0)) if e.entries else ((0, 0), (0, 0))
            for k, v in e.entries:
                total = _sat(total + self.cost(k) + self.cost(v))
                keys = _size_union(keys, self._size(k) or _UNKNOWN)
                values = _size_union(values, self._size(v) or _UNKNOWN)
            self.entries[id(e)] = _EntrySize("map", keys, values)
            return _sat(total + _MAP_CREATE_BASE_COST)
        assert isinstance(e, _Comp)
        return self._bind(e) if e.macro == "bind" else self._comprehension(e)

    def _comprehension(self, e: _Comp) -> int:
        total = _sat(self.cost(e.iter_range) + self.cost(e.accu_init))
        self._push_local(e.accu_var, e.accu_init)
        self._push_iter(e.iter_var, e.iter_range)
        loop = self.cost(e.cond)
        step = self.cost(e.step)
        self._pop(e.iter_var)
        total = _sat(total + self.cost(e.result))
        self._pop(e.accu_var)
        count = self._size(e.iter_range) or _UNKNOWN
        total = _sat(total + _sat(count[1] * _sat(step + loop)))
        if isinstance(e.accu_init, _Lit):
            size = self._size(e.accu_init)
            if size is not None:
                self.sizes[id(e)] = size
        elif isinstance(e.accu_init, (_List, _Map)):
            self.sizes[id(e)] = count
            entry = self._entry(e.step)
            if entry is not None:
                self.entries[id(e)] = entry
        return total

    def _bind(self, e: _Comp) -> int:
        # Binds are lazily initialized: the cost of the empty range is kept.
        total = _sat(self.cost(e.iter_range) + self.cost(e.accu_init))
        self._push_local(e.accu_var, e.accu_init)
        total = _sat(total + self.cost(e.result))
        self._pop(e.accu_var)
        self._copy_sizes(e, e.result)
        return total

    def _call(self, e: _Call) -> int:
        if e.fn == "dyn" and e.args:
            total = _sat(1 + self.cost(e.args[0]))
            self._copy_sizes(e, e.args[0])
            return total
        arg_costs: list[int] = []
        args: list[_Node] = []
        for a in e.args:
            arg_costs.append(self.cost(a))
            args.append(self._node(a))
        total = 0
        target: _Node | None = None
        if e.target is not None:
            total = self.cost(e.target)
            target = self._node(e.target)
        fn_cost = 0
        result: _Size | None = None
        for ovl in e.overloads:
            cost, size = self._function_cost(e, ovl, target, args, arg_costs)
            fn_cost = max(fn_cost, cost)
            if size is not None:
                result = size if result is None else _size_union(result, size)
            if ovl in ("index_list", "index_map") and e.args:
                entry = self._entry(e.args[0])
                result = entry.val if entry is not None else None
                sub = "@items" if ovl == "index_list" else "@values"
                self.paths[id(e)] = [*self._path(e.args[0]), sub]
            if result is None:
                result = self._size(e)
        if result is not None:
            self.sizes[id(e)] = result
        return _sat(total + fn_cost)

    def _function_cost(
        self, e: _Call, ovl: str, target: _Node | None, args: list[_Node], arg_costs: list[int]
    ) -> tuple[int, _Size | None]:
        argsum = _sat(sum(arg_costs))
        # ext/sets.go estimateSetsCost (an overload estimator, consulted first)
        if ovl in _SETS_FACTORS and len(args) == 2:
            product = _size_mul(self._known(args[0]), self._known(args[1]))
            return _sat(_factor(product[1], _SETS_FACTORS[ovl]) + 1 + argsum), None
        k8s = self._library_cost(e.fn, target, args)
        if k8s is not None:
            return _sat(k8s[0] + argsum), k8s[1]
        traversal = _STRING_TRAVERSAL_COST_FACTOR
        if ovl in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return _sat(_factor(self._known(args[0])[1], traversal) + argsum), None
        if ovl == "in_list" and len(args) == 2:
            return _sat(_factor(self._known(args[1])[1], 1) + argsum), None
        if ovl == "matches_string" and target is not None and len(args) == 1:
            text = _factor(_size_add(self._known(target), (1, 1))[1], traversal)
            regex = _factor(self._known(args[0])[1], _REGEX_STRING_LENGTH_COST_FACTOR)
            return _sat(_sat(text * regex) + argsum), None
        if ovl == "contains_string" and target is not None and len(args) == 1:
            text = _factor(self._known(target)[1], traversal)
            sub = _factor(self._known(args[0])[1], traversal)
            return _sat(_sat(text * sub) + argsum), None
        if ovl in ("logical_or", "logical_and"):
            return _sat(arg_costs[0] + arg_costs[1]), None
        if ovl == "conditional" and len(args) == 3:
            size = _size_union(self._known(args[1]), self._known(args[2]))
            entry = _entry_union(self._entry(e.args[1]), self._entry(e.args[2]))
            if entry is not None:
                self.entries[id(e)] = entry
            return _sat(arg_costs[0] + max(arg_costs[1], arg_costs[2])), size
        if ovl in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = _size_add(self._known(args[0]), self._known(args[1]))
            entry = _entry_union(self._entry(e.args[0]), self._entry(e.args[1]))
            if entry is not None:
                self.entries[id(e)] = entry
            if ovl == "add_list":
                return _sat(1 + argsum), size
            return _sat(_factor(size[1], traversal) + argsum), size
        if ovl in _ORDERING_OVERLOADS and len(args) == 2:
            smallest = min(self._known(args[0])[1], self._known(args[1])[1])
            return _sat(_factor(smallest, traversal) + argsum), None
        if ovl in ("string_to_bytes", "bytes_to_string") and len(args) == 1:
            size = self._known(args[0])
            cost = _sat(_factor(size[1], traversal) + argsum)
            if ovl == "string_to_bytes":
                return cost, (size[0], _sat(size[1] * 4))
            return cost, (size[0] // 4, size[1])
        return _sat(1 + argsum), None

    def _element(self, target: _Node) -> _Node | None:
        """library CostEstimator.listElementNode."""
        if len(target.t) < 2:
            return None
        path = [*target.path, "@items"] if target.path else None
        return _Node(path, target.t[1], None, None)

    def _library_cost(
        self, fn: str, target: _Node | None, args: list[_Node]
    ) -> tuple[int, _Size | None] | None:
        """Kubernetes' CostEstimator.EstimateCallCost (apiserver/pkg/cel/library/cost.go)."""
        known = self._known
        traversal = _STRING_TRAVERSAL_COST_FACTOR
        if fn in _LIST_FUNCTIONS and target is not None:
            element = self._element(target)
            if element is None:
                return _factor(known(target)[1], traversal), None
            per_element = 1
            if element.t[0] in ("string", "bytes"):
                per_element = _sat(per_element + _factor(known(element)[1], traversal))
            return _sat(known(target)[1] * per_element), None
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            size = known(target)
            return _factor(size[1], traversal), size
        if fn == "replace" and target is not None and len(args) >= 2:
            return self._replace_cost(known(target), known(args[0]), known(args[1]))
        if fn == "split" and target is not None:
            size = known(target)
            most = size[1]
            if len(args) > 1 and isinstance(args[1].expr, _Lit) and args[1].expr.kind == "int":
                most = int(args[1].expr.value) & _U64  # uint64(int64)
            return _factor(size[1], 2 * traversal), (0, most)
        if fn == "join" and target is not None:
            length = known(target)
            joined: _Size = (0, 0)
            element = self._element(target)
            if element is not None:
                joined = _size_mul(length, known(element))
            if args:
                separators = (max(length[0] - 1, 0), max(length[1] - 1, 0))
                joined = _size_add(joined, _size_mul(known(args[0]), separators))
            return _factor(joined[1], traversal), joined
        if fn in ("find", "findAll") and target is not None and args:
            size = known(target)
            text = _factor(_size_add(size, (1, 1))[1], traversal)
            regex = _factor(known(args[0])[1], _REGEX_STRING_LENGTH_COST_FACTOR)
            return _sat(text * regex), (0, size[1])
        if fn in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return _factor(known(args[0])[1], traversal), None
        if fn in _NOMINAL_FUNCTIONS:
            return 1, None
        if (
            fn == "_==_"
            and len(args) == 2
            and args[0].t == args[1].t
            and args[0].t[0] in ("quantity", "semver")
        ):
            return 1, None
        return None

    @staticmethod
    def _replace_cost(size: _Size, old: _Size, new: _Size) -> tuple[int, _Size]:
        def ceil_div(a: int, b: int) -> int:
            return min(_U64, math.ceil(float(a) / float(b)))

        if old[0] == 0:
            count_max, kept_max = (size[1] + 1 if size[1] < _U64 else size[1]), size[1]
        elif new[1] <= old[0]:
            count_max, kept_max = 0, size[1]
        else:
            count_max, kept_max = ceil_div(size[1], old[0]), 0
        if old[1] == 0:
            count_min, kept_min = (size[0] + 1 if size[0] < _U64 else size[0]), size[0]
        elif old[1] <= new[0]:
            count_min, kept_min = 0, size[0]
        else:
            count_min, kept_min = ceil_div(size[0], old[1]), 0
        result = _size_add(_size_mul((count_min, count_max), new), (kept_min, kept_max))
        return _factor(size[1], 2 * _STRING_TRAVERSAL_COST_FACTOR), result
