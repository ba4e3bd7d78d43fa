"""The checked expression: celpy's parse tree lowered into a small expression tree (literals,
identifiers, selections, calls, list and map literals, comprehensions with cel-go's macro
expansion) that the type inference, the cost estimate and the evaluator walk.
"""

from __future__ import annotations

import operator
from typing import Any

import celpy
import lark
from celpy import celtypes as ct
from celpy.evaluation import CELEvalError

from .check import _LITERAL_TYPES, _MACROS, _args, _bare_ident, _field_selection
from .library import _invoke
from .values import CelUnsupported

# ----- the checked expression ------------------------------------------------------------------------
#
# celpy's parse tree, lowered to the shape cel-go's parser gives it: operators and functions are calls
# ("_+_", "@in", "_[_]", ...), has() is a presence-test select, and the macros are expanded into
# comprehensions exactly as parser/macro.go (and ext/bindings.go for cel.bind) expand them, so that the
# cost estimate below walks what cel-go's checker/cost.go walks.

_Type = tuple[Any, ...]
_T_DYN: _Type = ("dyn",)
_T_BOOL: _Type = ("bool",)
_T_INT: _Type = ("int",)
_T_DOUBLE: _Type = ("double",)
_T_STRING: _Type = ("string",)
_T_BYTES: _Type = ("bytes",)
_T_QUANTITY: _Type = ("quantity",)
_T_SEMVER: _Type = ("semver",)
_T_DEVICE: _Type = ("device",)
# compile.go newCompiler: the fields of kubernetes.DRADevice (attribute values are dyn).
_DEVICE_FIELD_TYPES: dict[str, _Type] = {
    "driver": _T_STRING,
    "attributes": ("map", _T_STRING, ("map", _T_STRING, _T_DYN)),
    "capacity": ("map", _T_STRING, ("map", _T_STRING, _T_QUANTITY)),
}
_ACCU = "@result"  # parser.HiddenAccumulatorName
_ACCUMULATORS = frozenset({_ACCU, "__result__"})


class _Expr:
    __slots__ = ("overloads", "t")

    def __init__(self) -> None:
        self.t: _Type = _T_DYN
        self.overloads: tuple[str, ...] = ()


class _Lit(_Expr):
    __slots__ = ("kind", "value")

    def __init__(self, value: Any, kind: str) -> None:
        super().__init__()
        self.value = value
        self.kind = kind


class _Ident(_Expr):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class _Select(_Expr):
    __slots__ = ("field", "operand", "test_only")

    def __init__(self, operand: _Expr, field: str, test_only: bool) -> None:
        super().__init__()
        self.operand = operand
        self.field = field
        self.test_only = test_only


class _Call(_Expr):
    __slots__ = ("args", "fn", "target")

    def __init__(self, fn: str, target: _Expr | None, args: list[_Expr]) -> None:
        super().__init__()
        self.fn = fn
        self.target = target
        self.args = args


class _List(_Expr):
    __slots__ = ("elems",)

    def __init__(self, elems: list[_Expr]) -> None:
        super().__init__()
        self.elems = elems


class _Map(_Expr):
    __slots__ = ("entries",)

    def __init__(self, entries: list[tuple[_Expr, _Expr]]) -> None:
        super().__init__()
        self.entries = entries


class _Comp(_Expr):
    """A comprehension; ``macro`` names the macro it was expanded from and ``body`` is the macro's own
    expression (predicate, transform, or cel.bind's result)."""

    __slots__ = ("accu_init", "accu_var", "body", "cond", "iter_range", "iter_var", "macro", "result", "step")

    def __init__(
        self,
        macro: str,
        iter_var: str,
        iter_range: _Expr,
        accu_var: str,
        accu_init: _Expr,
        cond: _Expr,
        step: _Expr,
        result: _Expr,
        body: _Expr,
    ) -> None:
        super().__init__()
        self.macro = macro
        self.iter_var = iter_var
        self.iter_range = iter_range
        self.accu_var = accu_var
        self.accu_init = accu_init
        self.cond = cond
        self.step = step
        self.result = result
        self.body = body


_OPERATORS = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}


def _true() -> _Lit:
    return _Lit(ct.BoolType(True), "bool")


class _Lower:
    """Lowers a parse tree that passed _check."""

    def __init__(self) -> None:
        # celpy's own literal conversion (escapes, bytes, uint suffix).
        self._literals = celpy.evaluation.Evaluator(
            ast=lark.Tree("expr", []), activation=celpy.evaluation.Activation()
        )

    def lower(self, tree: Any, scope: frozenset[str]) -> _Expr:
        while True:
            kind, ch = tree.data, tree.children
            if kind == "expr" and len(ch) == 3:
                return _Call("_?_:_", None, [self.lower(c, scope) for c in ch])
            if kind in ("conditionalor", "conditionaland") and len(ch) == 2:
                fn = "_||_" if kind == "conditionalor" else "_&&_"
                return _Call(fn, None, [self.lower(ch[0], scope), self.lower(ch[1], scope)])
            if kind in ("relation", "addition", "multiplication") and len(ch) == 2:
                op = ch[0]
                return _Call(
                    _OPERATORS[op.data], None, [self.lower(op.children[0], scope), self.lower(ch[1], scope)]
                )
            if kind == "unary" and len(ch) == 2:
                operand = self.lower(ch[1], scope)
                if ch[0].data == "unary_not":
                    return _Call("!_", None, [operand])
                if isinstance(operand, _Lit) and operand.kind in ("int", "double"):
                    # cel-go's grammar reads "-" before a number as the number's sign.
                    v = _invoke(operator.neg, [operand.value])
                    if not isinstance(v, CELEvalError):
                        return _Lit(v, operand.kind)
                return _Call("-_", None, [operand])
            if kind == "member_dot":
                return _Select(self.lower(ch[0], scope), str(ch[1]), False)
            if kind == "member_dot_arg":
                return self._member_call(tree, scope)
            if kind == "member_index":
                return _Call("_[_]", None, [self.lower(ch[0], scope), self.lower(ch[1], scope)])
            if kind == "literal":
                tok = ch[0]
                lit_kind = _LITERAL_TYPES.get(tok.type, "dyn") if isinstance(tok, lark.Token) else "dyn"
                return _Lit(self._literals.literal(tree), lit_kind)
            if kind == "ident":
                return _Ident(str(ch[0]))
            if kind == "ident_arg":
                return self._global_call(tree, scope)
            if kind == "list_lit":
                return _List([self.lower(x, scope) for x in _args(tree, 0)])
            if kind == "map_lit":
                items = _args(tree, 0)
                keys = [self.lower(x, scope) for x in items[0::2]]
                values = [self.lower(x, scope) for x in items[1::2]]
                return _Map(list(zip(keys, values, strict=True)))
            if len(ch) == 1 and isinstance(ch[0], lark.Tree):
                tree = ch[0]  # expr, member, primary, paren_expr ... with a single child
                continue
            raise CelUnsupported(f"the construct {kind}")

    def _global_call(self, tree: lark.Tree[Any], scope: frozenset[str]) -> _Expr:
        name = str(tree.children[0])
        args = _args(tree, 1)
        if name == "has":
            sel = _field_selection(args[0])
            return _Select(self.lower(sel.children[0], scope), str(sel.children[1]), True)
        return _Call(name, None, [self.lower(a, scope) for a in args])

    def _member_call(self, tree: lark.Tree[Any], scope: frozenset[str]) -> _Expr:
        receiver, method = tree.children[0], str(tree.children[1])
        args = _args(tree, 2)
        namespace = _bare_ident(receiver)
        if namespace is not None and namespace not in scope:
            if namespace == "cel" and method == "bind":
                var = str(_bare_ident(args[0]))
                init = self.lower(args[1], scope)
                body = self.lower(args[2], scope | {var})
                # ext/bindings.go celBind
                return _Comp(
                    "bind",
                    "#unused",
                    _List([]),
                    var,
                    init,
                    _Lit(ct.BoolType(False), "bool"),
                    _Ident(var),
                    body,
                    body,
                )
            if namespace == "sets":
                return _Call(f"sets.{method}", None, [self.lower(a, scope) for a in args])
        if method in _MACROS and len(args) == 2:
            var = str(_bare_ident(args[0]))
            rng = self.lower(receiver, scope)
            body = self.lower(args[1], scope | {var})
            return _macro(method, var, rng, body)
        return _Call(method, self.lower(receiver, scope), [self.lower(a, scope) for a in args])


def _macro(name: str, var: str, rng: _Expr, body: _Expr) -> _Comp:
    """parser/macro.go makeQuantifier, MakeMap and MakeFilter."""
    accu = _Ident  # a fresh node per use, as cel-go's NewAccuIdent
    if name == "all":
        return _Comp(
            name,
            var,
            rng,
            _ACCU,
            _true(),
            _Call("@not_strictly_false", None, [accu(_ACCU)]),
            _Call("_&&_", None, [accu(_ACCU), body]),
            accu(_ACCU),
            body,
        )
    if name == "exists":
        return _Comp(
            name,
            var,
            rng,
            _ACCU,
            _Lit(ct.BoolType(False), "bool"),
            _Call("@not_strictly_false", None, [_Call("!_", None, [accu(_ACCU)])]),
            _Call("_||_", None, [accu(_ACCU), body]),
            accu(_ACCU),
            body,
        )
    if name == "exists_one":
        step = _Call(
            "_?_:_", None, [body, _Call("_+_", None, [accu(_ACCU), _Lit(ct.IntType(1), "int")]), accu(_ACCU)]
        )
        result = _Call("_==_", None, [accu(_ACCU), _Lit(ct.IntType(1), "int")])
        return _Comp(name, var, rng, _ACCU, _Lit(ct.IntType(0), "int"), _true(), step, result, body)
    if name == "map":
        step = _Call("_+_", None, [accu(_ACCU), _List([body])])
        return _Comp(name, var, rng, _ACCU, _List([]), _true(), step, accu(_ACCU), body)
    # filter
    step = _Call("_?_:_", None, [body, _Call("_+_", None, [accu(_ACCU), _List([_Ident(var)])]), accu(_ACCU)])
    return _Comp(name, var, rng, _ACCU, _List([]), _true(), step, accu(_ACCU), body)
