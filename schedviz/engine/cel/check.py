"""Compile-time checks in the manner of cel-go's type-checker: undeclared variables, unknown
functions, fields ``device`` lacks, ``has()`` without a field selection (CelCompileError), and valid
CEL SchedViz does not evaluate (CelUnsupported); the static types of literals.
"""

from __future__ import annotations

from typing import Any

import lark

from .library import _FUNCTIONS
from .values import CelCompileError, CelUnsupported

# ----- compile-time checks -------------------------------------------------------------------------

_VARIABLES = frozenset({"device"})
_DEVICE_FIELDS = frozenset({"driver", "attributes", "capacity"})
_GLOBALS = frozenset(
    {
        "size",
        "int",
        "uint",
        "double",
        "string",
        "bool",
        "bytes",
        "dyn",
        "type",
        "duration",
        "timestamp",
        "matches",
        "quantity",
        "isQuantity",
        "semver",
        "isSemver",
    }
)
_METHODS = frozenset(_FUNCTIONS) | {
    "startsWith",
    "endsWith",
    "matches",
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
    "min",
}
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
# In Kubernetes' environment but not evaluated here.
_UNSUPPORTED_FUNCTIONS = frozenset(
    {
        "url",
        "isURL",
        "ip",
        "isIP",
        "cidr",
        "isCIDR",
        "format",
        "reverse",
        "quote",
        "transformList",
        "transformMap",
        "transformMapEntry",
        "existsOne",
        "optMap",
        "optFlatMap",
        "orValue",
        "hasValue",
        "value",
        "or",
        # methods of the IP, CIDR and URL libraries
        "family",
        "isUnspecified",
        "isLoopback",
        "isGlobalUnicast",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "prefixLength",
        "masked",
        "containsIP",
        "containsCIDR",
        "getScheme",
        "getHost",
        "getHostname",
        "getPort",
        "getEscapedPath",
        "getQuery",
        "isCanonical",
    }
)
_UNSUPPORTED_NAMESPACES = frozenset({"optional", "strings", "base64", "math", "lists", "authorizer"})
_RESERVED = frozenset(
    {
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)


def _undeclared(name: str) -> CelCompileError:
    return CelCompileError(f"undeclared reference to '{name}' (in container '')")


def _bare_ident(tree: Any) -> str | None:
    """The name when ``tree`` is nothing but an identifier (through the grammar's single-child levels)."""
    while isinstance(tree, lark.Tree):
        if tree.data == "ident":
            tok = tree.children[0]
            return str(tok) if isinstance(tok, lark.Token) else None
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None


def _args(tree: lark.Tree[Any], at: int) -> list[Any]:
    if len(tree.children) > at and isinstance(tree.children[at], lark.Tree):
        return list(tree.children[at].children)
    return []


def _check(tree: Any, scope: frozenset[str]) -> None:
    """cel-go's checks that need no types beyond the ``device`` variable."""
    if not isinstance(tree, lark.Tree):
        return
    kind = tree.data
    if kind == "ident":
        name = str(tree.children[0])
        if name in _RESERVED:
            raise CelCompileError(f"Syntax error: reserved identifier: {name}")
        if name not in scope:
            raise _undeclared(name)
        return
    if kind == "ident_arg":
        name = str(tree.children[0])
        args = _args(tree, 1)
        if name == "has":
            if len(args) != 1 or _field_selection(args[0]) is None:
                raise CelCompileError("invalid argument to has() macro")
            _check(args[0], scope)
            return
        if name in _UNSUPPORTED_FUNCTIONS:
            raise CelUnsupported(f"function {name}()")
        if name not in _GLOBALS:
            raise _undeclared(name)
        for a in args:
            _check(a, scope)
        return
    if kind == "member_dot_arg":
        receiver, method = tree.children[0], str(tree.children[1])
        args = _args(tree, 2)
        namespace = _bare_ident(receiver)
        if namespace is not None and namespace not in scope:
            if namespace == "sets" and method in ("contains", "equivalent", "intersects") and len(args) == 2:
                for a in args:
                    _check(a, scope)
                return
            if namespace == "cel" and method == "bind":
                # ext/bindings.go celBind: cel.bind(name, init, body), name in scope in the body only.
                if len(args) != 3:
                    raise _undeclared("cel.bind")
                var = _bare_ident(args[0])
                if var is None:
                    raise CelCompileError("cel.bind() variable names must be simple identifiers")
                _check(args[1], scope)
                _check(args[2], scope | {var})
                return
            if namespace in _UNSUPPORTED_NAMESPACES or namespace == "sets":
                raise CelUnsupported(f"function {namespace}.{method}()")
            raise _undeclared(f"{namespace}.{method}")
        if method in _MACROS:
            if len(args) == 3 and method in ("all", "exists", "exists_one"):
                raise CelUnsupported(f"the two-variable form of {method}()")
            if len(args) == 3 and method == "map":
                raise CelUnsupported("map() with a filter")
            if len(args) != 2:
                raise CelCompileError(f"invalid argument count to {method}() macro")
            var = _bare_ident(args[0])
            if var is None:
                raise CelCompileError("argument must be a simple name")
            _check(receiver, scope)
            _check(args[1], scope | {var})
            return
        _check(receiver, scope)
        if method in _UNSUPPORTED_FUNCTIONS:
            raise CelUnsupported(f"method {method}()")
        if method not in _METHODS:
            raise _undeclared(method)
        for a in args:
            _check(a, scope)
        return
    if kind == "member_dot":
        receiver, name = tree.children[0], str(tree.children[1])
        if _bare_ident(receiver) == "device" and "device" in scope and name not in _DEVICE_FIELDS:
            raise CelCompileError(f"undefined field '{name}'")
        _check(receiver, scope)
        return
    if kind in ("dot_ident_arg", "dot_ident"):
        raise CelUnsupported("names with a leading '.'")
    if kind == "member_object":
        raise CelUnsupported("message construction")
    if kind in ("list_lit", "map_lit"):
        _check_homogeneous(tree)
    for child in tree.children:
        _check(child, scope)


def _check_homogeneous(tree: lark.Tree[Any]) -> None:
    """cel.HomogeneousAggregateLiterals (Kubernetes' base environment): the elements of a list
    literal, and the keys and values of a map literal, share one type (where the checker knows it)."""
    items = _args(tree, 0)
    groups = [items] if tree.data == "list_lit" else [items[0::2], items[1::2]]
    for group in groups:
        seen: str | None = None
        for item in group:
            t = _static_type(item)
            if t is None:
                continue
            if seen is not None and t != seen:
                raise CelCompileError(f"expected type '{seen}' but found '{t}'")
            seen = t


def _field_selection(tree: Any) -> Any:
    """The member_dot node when ``tree`` is a field selection (what has() accepts)."""
    while isinstance(tree, lark.Tree):
        if tree.data == "member_dot":
            return tree
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None


_LITERAL_TYPES = {
    "INT_LIT": "int",
    "UINT_LIT": "uint",
    "FLOAT_LIT": "double",
    "STRING_LIT": "string",
    "MLSTRING_LIT": "string",
    "BYTES_LIT": "bytes",
    "BOOL_LIT": "bool",
    "NULL_LIT": "null_type",
}


def _static_type(tree: Any) -> str | None:
    """The type cel-go's checker gives ``tree`` where it needs no variable types: literals, list and map
    literals, comparisons and logic (bool), ``device.driver`` (string); None where it is dyn."""
    while isinstance(tree, lark.Tree):
        kind = tree.data
        if kind == "literal":
            tok = tree.children[0]
            return _LITERAL_TYPES.get(tok.type) if isinstance(tok, lark.Token) else None
        if kind == "list_lit":
            return "list"
        if kind == "map_lit":
            return "map"
        if kind in ("conditionalor", "conditionaland", "relation") and len(tree.children) == 2:
            return "bool"
        if kind == "unary" and len(tree.children) == 2:
            op = tree.children[0]
            return "bool" if isinstance(op, lark.Tree) and op.data == "unary_not" else None
        if kind == "member_dot":
            if _bare_ident(tree.children[0]) == "device" and str(tree.children[1]) == "driver":
                return "string"
            return None
        if kind == "expr" and len(tree.children) == 3:
            a, b = _static_type(tree.children[1]), _static_type(tree.children[2])
            return a if a == b else None
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None
