"""DRA device selectors in CEL (dynamic-resource-allocation/cel/compile.go), evaluated by cel-python
with Kubernetes' CEL libraries (apiserver/pkg/cel/library) and cel-go's operator semantics.

Expected values follow the CEL language definition, cel-go's behaviour as Kubernetes configures it
(heterogeneous equality, cross-type numeric comparisons) and the Kubernetes libraries' documentation.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from schedviz.engine import cel as _cel

ENV = _cel.device_env(
    "gpu.example.com",
    {
        "model": "a100",
        "index": 2,
        "gpu.example.com/mig": True,
        "other.io/driverVersion": _cel.Semver(1, 2, 3),
        "other.io/ports": "80,443",
    },
    {"memory": _cel.Quantity(Decimal(80 * 2**30)), "other.io/slots": _cel.Quantity(Decimal("1.5"))},
)
GPU = 'device.attributes["gpu.example.com"]'


def run(expr: str) -> bool:
    return _cel.compile_selector(expr).evaluate(ENV)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        # The device variable: driver, attributes and capacity by domain (unqualified names are the driver's).
        ('device.driver == "gpu.example.com"', True),
        (f'{GPU}.model == "a100"', True),
        (f'{GPU}.model != "a100"', False),
        (f"{GPU}.mig && {GPU}.index >= 2", True),
        (f"{GPU}.index in [1, 2, 3]", True),
        (f'{GPU}.model.startsWith("a") || false', True),
        ('device.attributes["other.io"].ports.split(",") == ["80", "443"]', True),
        # A domain without attributes is an empty map (compile.go's mapper), but "in" sees real keys only.
        ('size(device.attributes["unknown.io"]) == 0', True),
        ('"unknown.io" in device.attributes', False),
        ('"gpu.example.com" in device.attributes', True),
        (f"has({GPU}.model)", True),
        (f"has({GPU}.serial)", False),
        ('has(device.attributes["unknown.io"].x)', False),
        # Errors are absorbed when the other side of && / || decides.
        (f'{GPU}.serial == "x" || true', True),
        (f'false && {GPU}.serial == "x"', False),
        (f"true || {GPU}.model < 1", True),
        # Heterogeneous equality: values of different types are unequal, numbers compare by value.
        (f"{GPU}.model == 1", False),
        (f"{GPU}.mig == 1", False),
        ("1 == 1.0 && 1u == 1 && [1, 2] == [1.0, 2.0]", True),
        ('{"a": 1} == {"a": 1.0}', True),
        # Cross-type numeric comparisons (enabled in Kubernetes' environment).
        (f"{GPU}.index > 1.5 && {GPU}.index < 3u", True),
        ("7 / -2 == -3 && 7 % -2 == 1 && -7 % 2 == -1", True),
        (f'{GPU}.index > 1 ? "yes" == "yes" : false', True),
        # Macros over lists and maps (maps iterate their keys).
        ('device.attributes.exists(domain, domain == "other.io")', True),
        ("device.attributes.all(domain, size(device.attributes[domain]) > 0)", True),
        (f'{GPU}.exists_one(k, k.startsWith("m"))', False),  # model and mig
        ("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", True),
        ("[1, 2, 3, 4].filter(x, x % 2 == 0) == [2, 4]", True),
        ("[1, 2].all(x, x / 0 == 1 || true)", True),
        ("[].exists(x, x > 0) == false", True),
        # cel.bind (compile.go enables the bindings extension)
        (f'cel.bind(g, {GPU}, g.model == "a100" && g.index == 2)', True),
        ("cel.bind(x, 2, cel.bind(y, x * 3, y == 6))", True),
        # Kubernetes quantity library
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) == 0', True),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("40Gi"))', False),
        ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("81920Mi"))', False),
        ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
        ('device.capacity["other.io"].slots.isInteger()', False),
        ('device.capacity["other.io"].slots.asApproximateFloat() == 1.5', True),
        ('quantity("1500m").add(quantity("500m")).asInteger() == 2', True),
        ('quantity("2").sub(3).sign() == -1', True),
        ('isQuantity("10Gi") && !isQuantity("ten")', True),
        # Kubernetes semver library
        ('device.attributes["other.io"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
        ('device.attributes["other.io"].driverVersion.compareTo(semver("1.10.0")) < 0', True),
        ('device.attributes["other.io"].driverVersion == semver("1.2.3")', True),
        ('semver("1.2.3-alpha").isLessThan(semver("1.2.3"))', True),
        ('semver("1.2.3-alpha.2").isGreaterThan(semver("1.2.3-alpha.10"))', False),
        ('semver("1.2.3+build.5") == semver("1.2.3")', True),
        ('semver("v1.2", true) == semver("1.2.0")', True),
        (
            'semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3',
            True,
        ),
        ('isSemver("1.2.3") && !isSemver("1.2") && isSemver("1.2", true)', True),
        # cel-go string extensions
        ('"GPU-A".lowerAscii() == "gpu-a" && "gpu".upperAscii() == "GPU"', True),
        ('"hello".substring(1, 3) == "el" && "hello".substring(3) == "lo"', True),
        ('"hello".indexOf("l") == 2 && "hello".lastIndexOf("l") == 3 && "hello".indexOf("z") == -1', True),
        ('"hello".charAt(1) == "e" && "hello".charAt(5) == ""', True),
        ('"a-b-c".replace("-", "/") == "a/b/c" && "a-b-c".replace("-", "/", 1) == "a/b-c"', True),
        ('"a,b,c".split(",", 2) == ["a", "b,c"]', True),
        ('"  x ".trim() == "x" && ["a", "b"].join("-") == "a-b"', True),
        # Kubernetes lists and regex libraries
        ("[1, 2, 2].isSorted() && ![2, 1].isSorted()", True),
        ("[1, 2, 3].sum() == 6 && [3, 1, 2].max() == 3 && [3, 1, 2].min() == 1", True),
        ("[1, 2, 3].indexOf(3) == 2 && [1, 2, 1].lastIndexOf(1) == 2", True),
        ('"abc123def".find("[0-9]+") == "123" && "a1b2".findAll("[0-9]") == ["1", "2"]', True),
        ('"abc".matches("^a.c$")', True),
        # ext.Sets
        ("sets.contains([1, 2, 3], [1, 3]) && !sets.contains([1], [2])", True),
        ("sets.equivalent([1, 2], [2, 1, 1]) && sets.intersects([1, 2], [2, 3])", True),
    ],
)
def test_selectors(expr: str, want: bool) -> None:
    assert run(expr) is want


@pytest.mark.parametrize(
    ("expr", "error"),
    [
        (f'{GPU}.serial == "x"', "no such key: serial"),
        (f'{GPU}.serial == "x" && true', "no such key: serial"),
        (f"{GPU}.model < 1", "no such overload"),
        ('device.capacity["gpu.example.com"].memory < quantity("1")', "no such overload"),
        ('quantity("1").compareTo(semver("1.0.0")) == 0', "no such overload"),
        ("1 / 0 == 1", "division by zero"),
        ("1 % 0 == 1", "modulus by zero"),
        ("9223372036854775807 + 1 > 0", "integer overflow"),
        ('quantity("ten") == quantity("10")', "quantities must match the regular expression"),
        ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
        ('"abc".substring(2, 1) == ""', "invalid substring range"),
        ("[].max() == 0", "max called on empty list"),
        (
            f"{GPU}.model",
            "^CEL result of type string could not be converted to bool: unsupported native conversion",
        ),
        (
            f"{GPU}.index",
            "^CEL result of type int could not be converted to bool: unsupported type conversion",
        ),
    ],
)
def test_runtime_errors(expr: str, error: str) -> None:
    with pytest.raises(_cel.CelError, match=error):
        run(expr)


@pytest.mark.parametrize(
    ("expr", "exc", "message"),
    [
        ("foo == 1", _cel.CelCompileError, "undeclared reference to 'foo'"),
        ("nosuch(1)", _cel.CelCompileError, "undeclared reference to 'nosuch'"),
        ("device.driver.frobnicate()", _cel.CelCompileError, "undeclared reference to 'frobnicate'"),
        ("device.model == 1", _cel.CelCompileError, "undefined field 'model'"),
        ("device.driver ==", _cel.CelCompileError, "Syntax error"),
        ("has(device)", _cel.CelCompileError, "invalid argument to has"),
        ("[1].all(1, true)", _cel.CelCompileError, "simple name"),
        # Kubernetes' environment: homogeneous aggregate literals, a bool (or dyn) result.
        ('[1, "a"].size() == 2', _cel.CelCompileError, "expected type 'int' but found 'string'"),
        ('{"a": 1, "b": true}.size() == 2', _cel.CelCompileError, "expected type 'int' but found 'bool'"),
        ("device.driver", _cel.CelCompileError, "must evaluate to bool or the unknown type, not string"),
        ("42", _cel.CelCompileError, "not int"),
        # In Kubernetes' environment, not evaluated by SchedViz.
        ("device.attributes.all(d, ids, true)", _cel.CelUnsupported, "two-variable"),
        ('isURL("https://example.com")', _cel.CelUnsupported, "isURL"),
        ('ip("10.0.0.1").family() == 4', _cel.CelUnsupported, "ip"),
        ("optional.of(1).hasValue()", _cel.CelUnsupported, "optional"),
        ('device.attributes[?"x"].hasValue()', _cel.CelUnsupported, "optional"),
    ],
)
def test_compile_problems(expr: str, exc: type[Exception], message: str) -> None:
    with pytest.raises(exc, match=message):
        _cel.compile_selector(expr)


def test_result_type_problem_is_not_a_compilation_failure() -> None:
    # compile.go reports a non-bool result without the "compilation failed: " of checker issues.
    with pytest.raises(_cel.CelCompileError) as info:
        _cel.compile_selector('"yes"')
    assert (
        info.value.stage == "" and str(info.value) == "must evaluate to bool or the unknown type, not string"
    )
    with pytest.raises(_cel.CelCompileError) as info:
        _cel.compile_selector("nope")
    assert info.value.stage == "compilation failed: "


def test_macro_variables_are_scoped() -> None:
    # The iteration variable exists inside the macro only.
    with pytest.raises(_cel.CelCompileError, match="undeclared reference to 'x'"):
        _cel.compile_selector("[1].all(x, x > 0) && x > 0")


def test_parse_semver_normalizes_on_request() -> None:
    assert _cel.parse_semver("1.2") is None
    assert _cel.parse_semver("v01.2", normalize=True) == _cel.Semver(1, 2, 0)
    assert _cel.parse_semver("1.2.3-rc.1") == _cel.Semver(1, 2, 3, ("rc", "1"))
