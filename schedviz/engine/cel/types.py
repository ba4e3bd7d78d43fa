"""The types cel-go's checker infers, as far as the cost estimate depends on them, and the overloads
they resolve to.
"""

from __future__ import annotations

from .parse import (
    _DEVICE_FIELD_TYPES,
    _T_BOOL,
    _T_BYTES,
    _T_DEVICE,
    _T_DOUBLE,
    _T_DYN,
    _T_INT,
    _T_QUANTITY,
    _T_SEMVER,
    _T_STRING,
    _Call,
    _Comp,
    _Expr,
    _Ident,
    _List,
    _Lit,
    _Map,
    _Select,
    _Type,
)

# ----- types, as far as cel-go's cost estimate depends on them -------------------------------------------

_REL_PREFIX = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals"}
_NUMERIC = frozenset({"int", "uint", "double"})
_ADDABLE = frozenset({"int", "uint", "double", "duration", "timestamp", "dyn"})
_CONVERSION_TYPES: dict[str, _Type] = {
    "int": _T_INT,
    "uint": ("uint",),
    "double": _T_DOUBLE,
    "bool": _T_BOOL,
    "string": _T_STRING,
    "bytes": _T_BYTES,
    "type": ("type",),
    "duration": ("duration",),
    "timestamp": ("timestamp",),
    "dyn": _T_DYN,
}
_SETS_OVERLOADS = {
    "sets.contains": "list_sets_contains_list",
    "sets.intersects": "list_sets_intersects_list",
    "sets.equivalent": "list_sets_equivalent_list",
}
_RESULT_TYPES: dict[str, _Type] = {
    **dict.fromkeys(
        ["startsWith", "endsWith", "matches", "contains", "isSorted", "isQuantity", "isSemver", "isInteger"],
        _T_BOOL,
    ),
    **dict.fromkeys(["isGreaterThan", "isLessThan", *_SETS_OVERLOADS], _T_BOOL),
    **dict.fromkeys(
        ["lowerAscii", "upperAscii", "trim", "substring", "replace", "charAt", "join", "find"], _T_STRING
    ),
    "split": ("list", _T_STRING),
    "findAll": ("list", _T_STRING),
    **dict.fromkeys(
        ["indexOf", "lastIndexOf", "compareTo", "sign", "asInteger", "major", "minor", "patch", "size"],
        _T_INT,
    ),
    **dict.fromkeys(
        [
            "getDate",
            "getDayOfMonth",
            "getDayOfWeek",
            "getDayOfYear",
            "getFullYear",
            "getMonth",
            "getHours",
            "getMilliseconds",
            "getMinutes",
            "getSeconds",
        ],
        _T_INT,
    ),
    "asApproximateFloat": _T_DOUBLE,
    "quantity": _T_QUANTITY,
    "add": _T_QUANTITY,
    "sub": _T_QUANTITY,
    "semver": _T_SEMVER,
}


def _join_types(ts: list[_Type]) -> _Type:
    if not ts or any(t != ts[0] for t in ts):
        return _T_DYN
    return ts[0]


def _typecheck(e: _Expr, scope: dict[str, _Type]) -> _Type:
    """The type cel-go's checker gives ``e`` (dyn where it needs declarations SchedViz does not keep),
    and for calls the overloads it keeps (all the candidates when an argument is dyn)."""
    t: _Type
    if isinstance(e, _Lit):
        t = (e.kind,)
    elif isinstance(e, _Ident):
        t = scope.get(e.name) or (_T_DEVICE if e.name == "device" else _T_DYN)
    elif isinstance(e, _Select):
        ot = _typecheck(e.operand, scope)
        if e.test_only:
            t = _T_BOOL
        elif ot[0] == "device":
            t = _DEVICE_FIELD_TYPES.get(e.field, _T_DYN)
        elif ot[0] == "map":
            t = ot[2]
        else:
            t = _T_DYN
    elif isinstance(e, _List):
        t = ("list", _join_types([_typecheck(x, scope) for x in e.elems]))
    elif isinstance(e, _Map):
        keys = [_typecheck(k, scope) for k, _ in e.entries]
        values = [_typecheck(v, scope) for _, v in e.entries]
        t = ("map", _join_types(keys), _join_types(values))
    elif isinstance(e, _Comp):
        rt = _typecheck(e.iter_range, scope)
        elem = rt[1] if rt[0] in ("list", "map") else _T_DYN
        inner = {**scope, e.iter_var: elem}
        init = _typecheck(e.accu_init, scope)
        accu: _Type
        if e.macro == "bind":
            accu = init
        elif e.macro in ("all", "exists"):
            accu = _T_BOOL
        elif e.macro == "exists_one":
            accu = _T_INT
        elif e.macro == "map":
            accu = ("list", _typecheck(e.body, inner))
        else:
            accu = ("list", elem)
        inner[e.accu_var] = accu
        _typecheck(e.cond, inner)
        _typecheck(e.step, inner)
        t = _typecheck(e.result, inner)
    else:
        assert isinstance(e, _Call)
        target = _typecheck(e.target, scope) if e.target is not None else None
        args = [_typecheck(a, scope) for a in e.args]
        e.overloads, t = _resolve(e.fn, target, args)
    e.t = t
    return t


def _resolve(fn: str, target: _Type | None, args: list[_Type]) -> tuple[tuple[str, ...], _Type]:
    kinds = [a[0] for a in args]
    if fn in ("_&&_", "_||_"):
        return ("logical_and" if fn == "_&&_" else "logical_or",), _T_BOOL
    if fn == "_?_:_":
        return ("conditional",), _join_types(args[1:3])
    if fn in ("!_", "@not_strictly_false"):
        return (fn,), _T_BOOL
    if fn == "-_":
        return ("negate",), args[0] if kinds[0] in ("int", "double", "duration") else _T_DYN
    if fn in ("_==_", "_!=_"):
        return ("equals" if fn == "_==_" else "not_equals",), _T_BOOL
    if fn in _REL_PREFIX and len(args) == 2:
        prefix = _REL_PREFIX[fn]
        ids = [
            f"{prefix}_{k}" for k in ("string", "bytes") if kinds[0] in (k, "dyn") and kinds[1] in (k, "dyn")
        ]
        if not ids or not {kinds[0], kinds[1]} & {"string", "bytes"}:
            ids.append(f"{prefix}_other")
        return tuple(ids), _T_BOOL
    if fn == "_+_" and len(args) == 2:
        return _resolve_add(args)
    if fn in ("_-_", "_*_", "_/_", "_%_") and len(args) == 2:
        same = args[0] if args[0] == args[1] and kinds[0] != "dyn" else _T_DYN
        return ("arithmetic",), same
    if fn == "@in" and len(args) == 2:
        ids = [i for i, k in (("in_list", "list"), ("in_map", "map")) if kinds[1] in (k, "dyn")]
        return tuple(ids) or ("in_other",), _T_BOOL
    if fn == "_[_]" and len(args) == 2:
        ids = [i for i, k in (("index_list", "list"), ("index_map", "map")) if kinds[0] in (k, "dyn")]
        result = args[0][1] if kinds[0] == "list" else args[0][2] if kinds[0] == "map" else _T_DYN
        return tuple(ids) or ("index_other",), result
    if fn in ("string", "bytes") and target is None and len(args) == 1:
        special, source = ("bytes_to_string", "bytes") if fn == "string" else ("string_to_bytes", "string")
        ids = [special] if kinds[0] in (source, "dyn") else []
        if kinds[0] != source:
            ids.append(f"to_{fn}")
        return tuple(ids), _CONVERSION_TYPES[fn]
    if fn in _CONVERSION_TYPES and target is None:
        return (f"to_{fn}",), _CONVERSION_TYPES[fn]
    if fn == "matches":
        return ("matches_string" if target is not None else "matches",), _T_BOOL
    if target is not None and fn in ("startsWith", "endsWith", "contains"):
        return (
            {"startsWith": "starts_with_string", "endsWith": "ends_with_string"}.get(fn, "contains_string"),
        ), _T_BOOL
    if fn in _SETS_OVERLOADS:
        return (_SETS_OVERLOADS[fn],), _T_BOOL
    if fn in ("sum", "max", "min") and target is not None:
        return (fn,), target[1] if target[0] == "list" else _T_DYN
    return (fn,), _RESULT_TYPES.get(fn, _T_DYN)


def _resolve_add(args: list[_Type]) -> tuple[tuple[str, ...], _Type]:
    a, b = args
    ka, kb = a[0], b[0]
    ids = [f"add_{k}" for k in ("string", "bytes", "list") if ka in (k, "dyn") and kb in (k, "dyn")]
    if ka in _ADDABLE and kb in _ADDABLE:
        ids.append("add_other")
    if not ids:
        ids = ["add_other"]
    result = _T_DYN
    if ids == ["add_string"]:
        result = _T_STRING
    elif ids == ["add_bytes"]:
        result = _T_BYTES
    elif ids == ["add_list"]:
        elems = [t[1] for t in (a, b) if t[0] == "list"]
        result = ("list", _join_types(elems))
    elif ids == ["add_other"]:
        if a == b and ka != "dyn":
            result = a
        elif {ka, kb} - {"dyn"} and ({ka, kb} - {"dyn"}) <= _NUMERIC and "dyn" in (ka, kb):
            result = a if ka != "dyn" else b
    return tuple(ids), result
