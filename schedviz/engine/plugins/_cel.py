"""A small evaluator for the CEL expressions of DRA device selectors.

dynamic-resource-allocation/cel/compile.go gives an expression one variable, ``device``, with
``driver`` (string), ``attributes`` and ``capacity`` (maps domain -> id -> value; a missing domain
is an empty map, a missing id is the runtime error "no such key"). This module covers the part of
CEL such selectors use: literals, ``.``/``[]`` access, ``has()``, the logical, relational,
arithmetic and ``in`` operators, ``?:``, lists, the string methods, ``size``, and the Kubernetes
``quantity()`` and ``semver()`` libraries with their methods. Errors follow CEL: ``&&``/``||``
absorb an error when the other side decides, comparisons of unrelated types raise "no such
overload". Anything outside that subset raises :class:`CelUnsupported` at compile time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import total_ordering
from typing import Any

from .. import quantity as qty
from ..errors import InputError

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class CelError(Exception):
    """A CEL runtime error (the message is cel-go's)."""


class CelCompileError(Exception):
    """The expression does not compile (syntax, unknown variable)."""


class CelUnsupported(Exception):
    """Valid CEL that this evaluator does not implement."""


@dataclass(frozen=True)
class Quantity:
    value: Decimal

    def cmp(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)


@total_ordering
@dataclass(frozen=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def cmp(self, other: Semver) -> int:
        if self._key() != other._key():
            return -1 if self._key() < other._key() else 1
        # A pre-release version has lower precedence than the release.
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            an, bn = a.isdigit(), b.isdigit()
            if an and bn:
                return -1 if int(a) < int(b) else 1
            if an != bn:
                return -1 if an else 1
            return -1 if a < b else 1
        return -1 if len(self.pre) < len(other.pre) else (1 if len(self.pre) > len(other.pre) else 0)

    def __lt__(self, other: Semver) -> bool:
        return self.cmp(other) < 0


_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def parse_semver(text: str) -> Semver | None:
    m = _SEMVER.match(text)
    if m is None:
        return None
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    return Semver(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)


class _DefaultMap(dict[str, Any]):
    """compile.go's mapper: a missing domain reads as an empty map."""


# ----- tokens ---------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>\d+[uU]?)
  | (?P<str>[rR]?(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|[<>!+\-*/%?:.,\[\](){}])
    """,
    re.VERBOSE,
)
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}


def _unquote(tok: str) -> str:
    raw = tok[0] in "rR"
    body = tok[2:-1] if raw else tok[1:-1]
    if raw:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif nxt == "x":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        else:
            raise CelCompileError(f"invalid escape sequence \\{nxt}")
    return "".join(out)


def _tokenize(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise CelCompileError(f"Syntax error: token recognition error at: '{text[pos]}'")
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append((kind, m.group()))
        pos = m.end()
    out.append(("eof", ""))
    return out


# ----- AST: closures over an environment ------------------------------------------------------

Env = Mapping[str, Any]
Node = Callable[[Env], Any]

_KEYWORDS = {"true": True, "false": False, "null": None}
_RESERVED = {
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


def _type_name(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if v is None:
        return "null_type"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if isinstance(v, Semver):
        return "kubernetes.Semver"
    return type(v).__name__


def _no_overload() -> CelError:
    return CelError("no such overload")


def _check_int(v: int) -> int:
    if v < INT64_MIN or v > INT64_MAX:
        raise CelError("integer overflow")
    return v


def _equal(a: Any, b: Any) -> bool:
    num = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, num) and isinstance(b, num):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, Quantity):
        return a.cmp(b) == 0
    return bool(a == b)


def _compare(a: Any, b: Any) -> int:
    num = (int, float)
    if isinstance(a, bool) and isinstance(b, bool):
        return (a > b) - (a < b)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return (a > b) - (a < b)
    if isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)
    raise _no_overload()


def _arith(op: str, a: Any, b: Any) -> Any:
    if isinstance(a, bool) or isinstance(b, bool):
        raise _no_overload()
    if isinstance(a, int) and isinstance(b, int):
        if op == "+":
            return _check_int(a + b)
        if op == "-":
            return _check_int(a - b)
        if op == "*":
            return _check_int(a * b)
        if b == 0:
            raise CelError("division by zero" if op == "/" else "modulus by zero")
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b > 0) else -q
        return _check_int(q) if op == "/" else a - b * q
    if isinstance(a, float) and isinstance(b, float):
        if op == "%":
            raise _no_overload()
        if op == "/":
            return a / b if b != 0 else (float("inf") if a > 0 else float("-inf") if a < 0 else float("nan"))
        return a + b if op == "+" else a - b if op == "-" else a * b
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return a + b
    if op == "+" and isinstance(a, list) and isinstance(b, list):
        return a + b
    raise _no_overload()


def _index(container: Any, key: Any) -> Any:
    if isinstance(container, dict):
        if isinstance(key, (str, int, bool)) and key in container:
            return container[key]
        if isinstance(container, _DefaultMap):
            return {}
        raise CelError(f"no such key: {key}")
    if isinstance(container, list):
        if isinstance(key, bool) or not isinstance(key, (int, float)):
            raise _no_overload()
        if isinstance(key, float) and not key.is_integer():
            raise CelError(f"unsupported index value {key} in list")
        i = int(key)
        if i < 0 or i >= len(container):
            raise CelError(f"index out of bounds: {i}")
        return container[i]
    raise _no_overload()


def _select(container: Any, name: str) -> Any:
    if isinstance(container, dict):
        return _index(container, name)
    raise CelError(f"no such key: {name}")


def _to_quantity(v: Any) -> Quantity:
    if not isinstance(v, str):
        raise _no_overload()
    try:
        return Quantity(qty.parse(v))
    except InputError:
        raise CelError(f"invalid quantity: {v!r}") from None


def _to_semver(v: Any) -> Semver:
    if not isinstance(v, str):
        raise _no_overload()
    s = parse_semver(v)
    if s is None:
        raise CelError(f"could not parse {v!r} as a semantic version")
    return s


def _global(name: str, args: list[Any]) -> Any:
    if name == "size" and len(args) == 1:
        return _method(args[0], "size", [])
    if name == "quantity" and len(args) == 1:
        return _to_quantity(args[0])
    if name == "isQuantity" and len(args) == 1:
        try:
            _to_quantity(args[0])
        except CelError:
            return False
        return True
    if name == "semver" and len(args) in (1, 2):
        return _to_semver(args[0])
    if name == "isSemver" and len(args) in (1, 2):
        return isinstance(args[0], str) and parse_semver(args[0]) is not None
    if name == "int" and len(args) == 1:
        v = args[0]
        if isinstance(v, bool):
            raise _no_overload()
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            return _check_int(int(v))
        if isinstance(v, str):
            try:
                return _check_int(int(v, 10))
            except ValueError:
                raise CelError(f"cannot convert {v!r} to int") from None
        raise _no_overload()
    if name == "double" and len(args) == 1:
        v = args[0]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, str):
            try:
                return float(v)
            except ValueError:
                raise CelError(f"cannot convert {v!r} to double") from None
        raise _no_overload()
    if name == "string" and len(args) == 1:
        v = args[0]
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float, str)):
            return str(v)
        raise _no_overload()
    raise CelUnsupported(f"function {name}/{len(args)}")


def _method(target: Any, name: str, args: list[Any]) -> Any:
    if name == "size" and not args:
        if isinstance(target, (str, list, dict)):
            return len(target)
        raise _no_overload()
    if isinstance(target, str):
        if (
            name in ("startsWith", "endsWith", "contains", "matches")
            and len(args) == 1
            and isinstance(args[0], str)
        ):
            a = args[0]
            if name == "startsWith":
                return target.startswith(a)
            if name == "endsWith":
                return target.endswith(a)
            if name == "contains":
                return a in target
            return re.search(a, target) is not None
        if name == "lowerAscii" and not args:
            return target.lower()
        if name == "upperAscii" and not args:
            return target.upper()
        raise _no_overload()
    if isinstance(target, Quantity):
        if name in ("compareTo", "isGreaterThan", "isLessThan", "add", "sub") and len(args) == 1:
            other = args[0]
            if isinstance(other, int) and not isinstance(other, bool) and name in ("add", "sub"):
                other = Quantity(Decimal(other))
            if not isinstance(other, Quantity):
                raise _no_overload()
            if name == "add":
                return Quantity(target.value + other.value)
            if name == "sub":
                return Quantity(target.value - other.value)
            c = target.cmp(other)
            return c if name == "compareTo" else (c > 0 if name == "isGreaterThan" else c < 0)
        if name == "sign" and not args:
            return (target.value > 0) - (target.value < 0)
        if name == "isInteger" and not args:
            return target.value == target.value.to_integral_value()
        if name == "asInteger" and not args:
            if target.value != target.value.to_integral_value():
                raise CelError("cannot convert value to integer")
            return _check_int(int(target.value))
        if name == "asApproximateFloat" and not args:
            return float(target.value)
        raise _no_overload()
    if isinstance(target, Semver):
        if name in ("compareTo", "isGreaterThan", "isLessThan") and len(args) == 1:
            if not isinstance(args[0], Semver):
                raise _no_overload()
            c = target.cmp(args[0])
            return c if name == "compareTo" else (c > 0 if name == "isGreaterThan" else c < 0)
        if name in ("major", "minor", "patch") and not args:
            return getattr(target, name)
        raise _no_overload()
    raise _no_overload()


_METHODS = {
    "size",
    "startsWith",
    "endsWith",
    "contains",
    "matches",
    "lowerAscii",
    "upperAscii",
    "compareTo",
    "isGreaterThan",
    "isLessThan",
    "add",
    "sub",
    "sign",
    "isInteger",
    "asInteger",
    "asApproximateFloat",
    "major",
    "minor",
    "patch",
}


class _Parser:
    def __init__(self, text: str, variables: frozenset[str]) -> None:
        self.toks = _tokenize(text)
        self.i = 0
        self.variables = variables

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str]:
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, text: str) -> None:
        kind, val = self.take()
        if val != text or kind not in ("op",):
            raise CelCompileError(f"Syntax error: expected '{text}', got '{val or '<EOF>'}'")

    def at(self, *texts: str) -> bool:
        kind, val = self.peek()
        return (kind == "op" or (kind == "ident" and val == "in")) and val in texts

    def parse(self) -> Node:
        node = self.expr()
        if self.peek()[0] != "eof":
            raise CelCompileError(f"Syntax error: unexpected '{self.peek()[1]}'")
        return node

    def expr(self) -> Node:
        cond = self.or_()
        if self.at("?"):
            self.take()
            then = self.or_()
            self.expect(":")
            other = self.expr()

            def ternary(env: Env) -> Any:
                c = cond(env)
                if not isinstance(c, bool):
                    raise _no_overload()
                return then(env) if c else other(env)

            return ternary
        return cond

    def or_(self) -> Node:
        left = self.and_()
        while self.at("||"):
            self.take()
            left = _logical(left, self.and_(), True)
        return left

    def and_(self) -> Node:
        left = self.rel()
        while self.at("&&"):
            self.take()
            left = _logical(left, self.rel(), False)
        return left

    def rel(self) -> Node:
        left = self.add()
        while self.at("==", "!=", "<", "<=", ">", ">=", "in"):
            op = self.take()[1]
            left = _relation(op, left, self.add())
        return left

    def add(self) -> Node:
        left = self.mul()
        while self.at("+", "-"):
            op = self.take()[1]
            left = _binary(op, left, self.mul())
        return left

    def mul(self) -> Node:
        left = self.unary()
        while self.at("*", "/", "%"):
            op = self.take()[1]
            left = _binary(op, left, self.unary())
        return left

    def unary(self) -> Node:
        if self.at("!"):
            self.take()
            inner = self.unary()

            def not_(env: Env) -> Any:
                v = inner(env)
                if not isinstance(v, bool):
                    raise _no_overload()
                return not v

            return not_
        if self.at("-"):
            self.take()
            kind, val = self.peek()
            if kind in ("int", "hex") and not val.lower().endswith("u"):
                self.take()
                neg_literal = -_int_literal(val)
                if neg_literal < INT64_MIN:
                    raise CelCompileError("integer literal out of range")
                return self.postfix(_const(neg_literal))
            inner = self.unary()

            def neg(env: Env) -> Any:
                v = inner(env)
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise _no_overload()
                return _check_int(-v) if isinstance(v, int) else -v

            return neg
        return self.postfix(self.primary())

    def postfix(self, node: Node) -> Node:
        while True:
            if self.at("."):
                self.take()
                kind, name = self.take()
                if kind != "ident":
                    raise CelCompileError(f"Syntax error: expected a field name, got '{name}'")
                if self.at("("):
                    if name not in _METHODS:
                        raise CelUnsupported(f"method or macro {name}()")
                    args = self.args(")")
                    node = _call_method(node, name, args)
                else:
                    node = (lambda base, nm: lambda env: _select(base(env), nm))(node, name)
            elif self.at("["):
                self.take()
                key = self.expr()
                self.expect("]")
                node = (lambda base, k: lambda env: _index(base(env), k(env)))(node, key)
            else:
                return node

    def args(self, close: str) -> list[Node]:
        self.take()
        out: list[Node] = []
        if self.at(close):
            self.take()
            return out
        while True:
            out.append(self.expr())
            if self.at(","):
                self.take()
                if self.at(close):
                    self.take()
                    return out
                continue
            self.expect(close)
            return out

    def primary(self) -> Node:
        kind, val = self.take()
        if kind == "int" or kind == "hex":
            n = _int_literal(val)
            if n > (2**64 - 1 if val.lower().endswith("u") else INT64_MAX):
                raise CelCompileError("integer literal out of range")
            return lambda env: n
        if kind == "float":
            f = float(val)
            return lambda env: f
        if kind == "str":
            s = _unquote(val)
            return lambda env: s
        if kind == "ident":
            if val in _KEYWORDS:
                lit = _KEYWORDS[val]
                return lambda env: lit
            if val in _RESERVED:
                raise CelCompileError(f"Syntax error: reserved identifier: {val}")
            if self.at("("):
                if val == "has":
                    return self.has()
                args = self.args(")")
                return _call_global(val, args)
            if val not in self.variables:
                raise CelCompileError(f"undeclared reference to '{val}' (in container '')")
            return _variable(val)
        if kind == "op" and val == "(":
            node = self.expr()
            self.expect(")")
            return node
        if kind == "op" and val == "[":
            self.i -= 1
            items = self.args("]")
            return lambda env: [it(env) for it in items]
        if kind == "op" and val == "{":
            raise CelUnsupported("map literals")
        raise CelCompileError(f"Syntax error: mismatched input '{val or '<EOF>'}'")

    def has(self) -> Node:
        self.expect("(")
        start = self.i
        node = self.postfix(self.primary())
        # has() takes a field selection: re-read its last ".name".
        toks = self.toks[start : self.i]
        self.expect(")")
        if len(toks) < 3 or toks[-2] != ("op", ".") or toks[-1][0] != "ident":
            raise CelCompileError("invalid argument to has() macro")
        sub = _Parser("", self.variables)
        sub.toks = [*toks[:-2], ("eof", "")]
        base = sub.postfix(sub.primary())
        if sub.peek()[0] != "eof":
            raise CelCompileError("invalid argument to has() macro")
        field_name = toks[-1][1]
        del node

        def has_field(env: Env) -> Any:
            container = base(env)
            if isinstance(container, _DefaultMap):
                return True
            if isinstance(container, dict):
                return field_name in container
            raise CelError(f"invalid type for field selection: {_type_name(container)}")

        return has_field


def _int_literal(text: str) -> int:
    body = text.rstrip("uU")
    return int(body[2:], 16) if body[:2].lower() == "0x" else int(body, 10)


def _const(value: Any) -> Node:
    return lambda env: value


def _variable(name: str) -> Node:
    return lambda env: env[name]


def _logical(left: Node, right: Node, is_or: bool) -> Node:
    def run(env: Env) -> Any:
        try:
            a = left(env)
            err_a: CelError | None = None
            if not isinstance(a, bool):
                err_a = _no_overload()
        except CelError as exc:
            err_a = exc
            a = None
        if err_a is None and a is is_or:
            return is_or
        try:
            b = right(env)
        except CelError:
            if err_a is not None:
                raise err_a from None
            raise
        if not isinstance(b, bool):
            if err_a is not None:
                raise err_a
            raise _no_overload()
        if b is is_or:
            return is_or
        if err_a is not None:
            raise err_a
        return b

    return run


def _relation(op: str, left: Node, right: Node) -> Node:
    def run(env: Env) -> Any:
        a, b = left(env), right(env)
        if op == "==":
            return _equal(a, b)
        if op == "!=":
            return not _equal(a, b)
        if op == "in":
            if isinstance(b, list):
                return any(_equal(a, x) for x in b)
            if isinstance(b, dict):
                return isinstance(a, (str, int, bool)) and a in b
            raise _no_overload()
        if isinstance(a, (Quantity, Semver)) or isinstance(b, (Quantity, Semver)):
            raise _no_overload()
        c = _compare(a, b)
        return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]

    return run


def _binary(op: str, left: Node, right: Node) -> Node:
    return lambda env: _arith(op, left(env), right(env))


def _call_method(target: Node, name: str, args: list[Node]) -> Node:
    return lambda env: _method(target(env), name, [a(env) for a in args])


def _call_global(name: str, args: list[Node]) -> Node:
    if name not in ("size", "quantity", "isQuantity", "semver", "isSemver", "int", "double", "string"):
        raise CelUnsupported(f"function {name}")
    return lambda env: _global(name, [a(env) for a in args])


@dataclass
class Program:
    expression: str
    node: Node

    def evaluate(self, env: Env) -> bool:
        v = self.node(env)
        if not isinstance(v, bool):
            raise CelError(f"CEL result of type {_type_name(v)} could not be converted to bool")
        return v


_CACHE: dict[str, Program | CelCompileError | CelUnsupported] = {}


def compile_selector(expression: str) -> Program:
    """Compile a device selector; raises CelCompileError or CelUnsupported."""
    hit = _CACHE.get(expression)
    if hit is None:
        try:
            hit = Program(expression, _Parser(expression, frozenset({"device"})).parse())
        except (CelCompileError, CelUnsupported) as exc:
            hit = exc
        except (ValueError, IndexError) as exc:
            hit = CelCompileError(f"Syntax error: {exc}")
        _CACHE[expression] = hit
    if isinstance(hit, Exception):
        raise hit
    return hit


def device_env(driver: str, attributes: Mapping[str, Any], capacity: Mapping[str, Any]) -> dict[str, Any]:
    """The ``device`` variable of compile.go DeviceMatches: attributes and capacity by domain, then id."""
    attrs: _DefaultMap = _DefaultMap()
    for name, value in attributes.items():
        domain, ident = _split_qualified(name, driver)
        attrs.setdefault(domain, {})[ident] = value
    caps: _DefaultMap = _DefaultMap()
    for name, value in capacity.items():
        domain, ident = _split_qualified(name, driver)
        caps.setdefault(domain, {})[ident] = value
    return {"device": {"driver": driver, "attributes": attrs, "capacity": caps}}


def _split_qualified(name: str, default_domain: str) -> tuple[str, str]:
    if "/" in name:
        domain, _, ident = name.partition("/")
        return domain, ident
    return default_domain, name
