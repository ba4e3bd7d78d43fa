"""Kubernetes' CEL cost limits for DRA device selectors.

The estimated cost (cel-go checker/cost.go with apiserver/pkg/cel/library/cost.go and the size
estimates of dynamic-resource-allocation/cel/compile.go) that pkg/apis/resource/validation compares
with CELSelectorExpressionMaxCost, and the runtime budget kube-scheduler gives every evaluation
(cel-go interpreter/runtimecost.go). Everything here is bounded by counted cost, never by time.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine import cel as _cel
from schedviz.engine.errors import InputError
from schedviz.engine.framework import Code
from tests.engine.cel import test_cel
from tests.engine.plugins._storage_builders import device, device_class, exact, resource_claim, resource_slice
from tests.engine.plugins.dynamicresources.test_dynamicresources import GPU, replay_of, verdicts

ENV = test_cel.ENV
LIMIT = _cel.CEL_SELECTOR_EXPRESSION_MAX_COST


def literal(n: int) -> str:
    return "[" + ", ".join(str(i) for i in range(n)) + "]"


L100 = literal(100)
# The selector of the report: a million steps over a 100-element list literal.
MILLION = f"{L100}.all(a, {L100}.all(b, {L100}.all(c, a + b + c >= 0)))"
L10 = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
# compile_test.go "expensive" (from validatingadmissionpolicy_test.go), refused by validation_test.go.
EXPENSIVE = (
    f"{L10}.all(x, {L10}.all(y, {L10}.all(z, {L10}.all(z2, {L10}.all(z3, {L10}.all(z4, "
    f"{L10}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
DRA = 'device.attributes["dra.example.com"]'
CAP = 'device.capacity["dra.example.com"]'


@pytest.mark.parametrize(
    ("expr", "cost"),
    [
        # dynamic-resource-allocation/cel/compile_test.go expectCost
        ("true", 0),
        (f"{DRA.replace('dra.example.com', 'no-such-domain')}.noSuchAttr.isGreaterThan(quantity('0'))", 6),
        ('"no-such-domain" in device.attributes', 3),
        ('device.driver == ""', 2),
        ('device.driver == "dra.example.com"', 4),
        (f"{DRA}.name", 4),
        (f'{DRA}["name"]', 4),
        (f"cel.bind(dra, {DRA}, dra.name)", 15),
        (f"{DRA}.name > 0", 5),
        (f'{DRA}.name == "fish"', 5),
        (f'{DRA}.name.isGreaterThan(semver("0.0.1"))', 6),
        (f'{DRA}.name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)', 7),
        (f'{CAP}.name.isGreaterThan(quantity("1Ki"))', 6),
        (f'"name" in {CAP} && {CAP}.name.isGreaterThan(quantity("1Ki"))', 10),
        (f'!("name" in {CAP}) || {CAP}.name.isGreaterThan(quantity("1Ki"))', 11),
        (f"{DRA}.a && {DRA}.b && {DRA}.c", 12),
        ('device.attributes.exists_one(x, x == "dra.example.com")', 164),
        (f'{DRA}.exists_one(x, x == "services")', 133),
        ('device.capacity.exists_one(x, x == "dra.example.com")', 164),
        (f'{CAP}.exists_one(x, x == "memory")', 133),
        (f'{DRA}.services.split("example").size() >= 2', 19),
        (f'{DRA}.services.matches("[^a]?sym")', 18),
        (EXPENSIVE, 85555551),
        # A macro over an attribute value: at most DeviceAttributeMaxValueLength (64) elements in v1.35.
        (f"{DRA}.name.exists(x, x > 0)", 5 + (3 + 3) * 64),
        (f'{DRA}.names.all(x, x != "")', 5 + (2 + 2) * 64),
        # apiserver/pkg/cel/library/cost_test.go
        ("sets.intersects([1], [1])", 22),
        ("!sets.equivalent([1], [1, 2])", 26),
        ('semver("1234.56789012345.67890123456789")', 4),
        ('semver("1.0.0").compareTo(semver("1.2.3"))', 3),
        ("[1, 2, 3, 4, 5].sum()", 15),
        ("[1, 2, 3, 4, 5].indexOf(3)", 15),
        ("'01234567890123456789012345678901234567890123456789'.indexOf('123')", 5),
    ],
)
def test_estimates_are_upstreams(expr: str, cost: int) -> None:
    assert _cel.estimate_cost(expr) == cost


def test_the_selector_of_the_report_is_refused_by_validation() -> None:
    # Each all() over the 100-element literal: list 10 + result 1 + 100 x (condition 2 + step).
    inner = 10 + 1 + 100 * (2 + 1 + 6)
    middle = 10 + 1 + 100 * (2 + 1 + inner)
    assert _cel.estimate_cost(MILLION) == 10 + 1 + 100 * (2 + 1 + middle) == 9_141_411
    for expr in (MILLION, EXPENSIVE):
        with pytest.raises(_cel.CelRefused) as info:
            _cel.compile_selector(expr, validate=True)
        assert str(info.value) == "Forbidden: too complex, exceeds cost limit"


def test_estimates_at_the_limit() -> None:
    # Two levels over 100 elements stay well under the limit; the bound itself is inclusive.
    two = f"{L100}.all(a, {L100}.all(b, a + b >= 0))"
    assert _cel.estimate_cost(two) == 71_411
    assert _cel.compile_selector(two, validate=True).max_cost == 71_411


def test_the_runtime_budget_stops_what_the_estimate_would_have_refused() -> None:
    # kube-scheduler compiles without estimating (cel.Cache) and relies on the runtime limit.
    program = _cel.compile_selector(MILLION)
    tracker = _cel.CostTracker()
    with pytest.raises(_cel.CelError, match=r"^operation cancelled: actual cost limit exceeded$"):
        program.evaluate(ENV, tracker)
    # Stopped by the step that went past the limit: a few hundredths of the million steps ran.
    assert LIMIT < tracker.cost <= LIMIT + 2
    # compile_test.go "expensive": "actual cost limit exceeded" (here under a tenth of the budget).
    tracker = _cel.CostTracker(limit=LIMIT // 10)
    with pytest.raises(_cel.CelError, match="actual cost limit exceeded"):
        _cel.compile_selector(EXPENSIVE).evaluate(ENV, tracker)
    assert LIMIT // 10 < tracker.cost <= LIMIT // 10 + 4


@pytest.mark.parametrize(
    ("expr", "cost"),
    [
        # device 1, .attributes 1, ["gpu.example.com"] 1, .model 1, == ceil(min(4, 4) x 0.1)
        ('device.attributes["gpu.example.com"].model == "a100"', 5),
        # per inner element: condition 2, @result 1, a 1, b 1, + 1, >= 1; the literal lists are constants
        (f"{L100}.all(a, {L100}.all(b, a + b >= 0))", 100 * (2 + 1 + (100 * 7 + 1)) + 1),
        # all() stops after the first false element: its condition 2, x 1, == 1 and @result 1, then the
        # condition that ends the loop 2 and the result 1
        ("[1, 2, 3].all(x, x == 0)", 2 + 1 + 1 + 1 + 2 + 1),
        # map(): @result + [x * 2] per element: 1 + 10 + (x 1, * 1) + 1; the result 1; == of two lists
        ("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", 3 * 14 + 1 + 1),
        # cel.bind: only the body runs, the value when first used (device.driver: 2), then x 1, size 1
        ("cel.bind(x, device.driver, x.size() > 0 && x.size() < 100)", 2 + 1 + 1 + 1 + 1 + 1 + 1),
        # has() costs nothing beyond its operand (Kubernetes: PresenceTestHasCost(false))
        ('has(device.attributes["gpu.example.com"].model)', 3),
        # a string concatenation: 0.1 per character of the result
        ('device.driver + "0123456789" != ""', 2 + 3 + 0),
    ],
)
def test_runtime_cost_is_counted_as_cel_go_counts(expr: str, cost: int) -> None:
    tracker = _cel.CostTracker()
    _cel.compile_selector(expr).evaluate(ENV, tracker)
    assert tracker.cost == cost


def test_an_underestimated_selector_is_stopped_at_runtime_in_the_cycle() -> None:
    # Fields of a dyn value cost nothing in cel-go's estimate but 1 each at runtime: Kubernetes admits
    # this selector (estimate under the limit) and kube-scheduler ends its evaluation at the limit.
    def selector(n: int) -> str:
        nested = '{"a": ' * 8 + "1" + "}" * 8
        return (
            f"cel.bind(m, dyn({nested}), cel.bind(L, {literal(n)}, "
            "L.all(x, L.all(y, L.all(z, m.a.a.a.a.a.a.a.a == 1)))))"
        )

    def runtime_cost(n: int) -> int:
        # per innermost element: condition 2, @result 1, m 1, eight fields 8, == 1 (the constant map
        # and dyn() of it are folded); L and each result 1
        innermost = 13 * n + 2
        middle = n * (3 + innermost) + 2
        return n * (3 + middle) + 2

    tracker = _cel.CostTracker()
    assert _cel.compile_selector(selector(12)).evaluate(ENV, tracker) is True
    assert tracker.cost == runtime_cost(12)
    expr = selector(56)
    assert _cel.estimate_cost(expr) == 894_313
    assert _cel.compile_selector(expr, validate=True).max_cost <= LIMIT
    assert runtime_cost(56) == 2_298_970  # more than twice the budget
    claim = resource_claim("c", exact("gpu", 1, "gpu", expr))
    objects = [GPU, resource_slice("n0", [device("gpu-0", model="a100")]), claim]
    msg = "claim default/c: selector #0: CEL runtime error: operation cancelled: actual cost limit exceeded"
    got = verdicts(objects, "c")
    assert got[0] == (Code.Error, (msg,))
    assert got[1][0] == Code.UnschedulableAndUnresolvable  # no devices on n1 and n2


def snapshot_of_the_report(class_selector: str, claim_selector: str | None = None) -> list[dict[str, Any]]:
    selectors = (claim_selector,) if claim_selector else ()
    return [
        device_class("gpu", class_selector),
        resource_slice("n0", [device("gpu-0", model="a100")]),
        resource_claim("c", exact("gpu", 1, "gpu", *selectors)),
    ]


def test_a_replay_with_an_over_cost_selector_is_an_input_error() -> None:
    from tests.engine.builders import node, pod
    from tests.engine.plugins._storage_builders import pod_claims

    with pytest.raises(InputError) as info:
        replay_of(snapshot_of_the_report(MILLION), [pod("p", **pod_claims("c"))], nodes=[node("n0")])
    # refused when the snapshot is read, as the API server would have refused the object
    assert str(info.value) == (
        "snapshot: DeviceClass gpu: spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit"
    )
    objects = snapshot_of_the_report("true", MILLION)
    with pytest.raises(InputError) as info:
        replay_of(objects, [pod("p", **pod_claims("c"))], nodes=[node("n0")])
    assert str(info.value) == (
        "snapshot: ResourceClaim default/c: spec.devices.requests[0].exactly.selectors[0].cel.expression: "
        "Forbidden: too complex, exceeds cost limit"
    )


def test_the_length_limit() -> None:
    # validation_test.go: "device.driver == ..." padded to exactly CELSelectorExpressionMaxLength is
    # valid, one byte more is too long (not even compiled).
    base = 'device.driver == ""'
    fits = base.replace('""', '"' + "x" * (_cel.CEL_SELECTOR_EXPRESSION_MAX_LENGTH - len(base)) + '"')
    assert len(fits) == 10240
    assert _cel.compile_selector(fits, validate=True).evaluate(ENV) is False
    too_long = fits.replace('"x', '"xx')
    with pytest.raises(_cel.CelRefused, match=r"^Too long: may not be more than 10240 bytes$"):
        _cel.compile_selector(too_long, validate=True)
    with pytest.raises(_cel.CelRefused, match="Too long"):
        _cel.compile_selector("?!" + "x" * 10240, validate=True)


def test_a_list_blow_up_is_stopped_before_it_is_built() -> None:
    # Doubling a list 40 times: cel-go concatenates lists as views (cost 1 each), so Kubernetes admits
    # it; SchedViz would copy 2^40 x 100 elements and stops at MATERIALIZED_MAX instead.
    expr = "a40.size() > 0"
    for k in range(40, 0, -1):
        expr = f"cel.bind(a{k}, a{k - 1} + a{k - 1}, {expr})"
    expr = f"cel.bind(a0, {literal(100)}, {expr})"
    assert _cel.compile_selector(expr, validate=True).max_cost < 1000
    tracker = _cel.CostTracker()
    with pytest.raises(_cel.CelError, match=r"^operation cancelled: actual cost limit exceeded$"):
        _cel.compile_selector(expr).evaluate(ENV, tracker)
    assert tracker.cost < 1000
    assert tracker.materialized <= _cel.MATERIALIZED_MAX


def test_string_blow_ups_are_stopped_by_cost() -> None:
    s = "x" * 1000
    # Doubling a string: the estimate follows the sizes through cel.bind.
    doubling = "s30.size() > 0"
    for k in range(30, 0, -1):
        doubling = f"cel.bind(s{k}, s{k - 1} + s{k - 1}, {doubling})"
    doubling = f'cel.bind(s0, "{s}", {doubling})'
    # Concatenations in nested comprehensions, kept by map(): 8 GB if nothing stopped it.
    nested = f'cel.bind(L, {L100}, L.map(a, L.map(b, L.map(c, "{s * 4}" + "{s * 4}"))))'
    for expr in (doubling, nested):
        with pytest.raises(_cel.CelRefused, match="too complex"):
            _cel.compile_selector(expr, validate=True)
        tracker = _cel.CostTracker()
        with pytest.raises(_cel.CelError, match="actual cost limit exceeded"):
            _cel.compile_selector(expr).evaluate(ENV, tracker)
        # Concatenations are paid for (0.1 per character) before they are built: what was built is at
        # most about ten characters per unit of the budget; the one that would pass it was not built.
        assert tracker.cost > LIMIT
        assert tracker.materialized <= 11 * LIMIT


def _params(test: Any) -> list[Any]:
    return [p[0] for m in test.pytestmark if m.name == "parametrize" for p in m.args[1]]


# The selectors of test_cel.py that Kubernetes would not store: join() over a list whose elements'
# sizes compile.go's size estimator does not know (a list literal's) is estimated at ~1.8e18.
REFUSED = {'"  x ".trim() == "x" && ["a", "b"].join("-") == "a-b"'}


@pytest.mark.parametrize("expr", _params(test_cel.test_selectors) + _params(test_cel.test_runtime_errors))
def test_ordinary_selectors_pass_and_cost_no_more_than_estimated(expr: str) -> None:
    program = _cel.compile_selector(expr)
    if expr in REFUSED:
        assert program.max_cost > LIMIT
        with pytest.raises(_cel.CelRefused, match="too complex"):
            _cel.compile_selector(expr, validate=True)
        return
    assert _cel.compile_selector(expr, validate=True) is program
    tracker = _cel.CostTracker()
    try:
        program.evaluate(ENV, tracker)
    except _cel.CelError as exc:
        assert "cost limit" not in str(exc)
    assert tracker.cost <= program.max_cost < 1000


def test_ordinary_replays_are_unaffected() -> None:
    from tests.engine.builders import node, pod
    from tests.engine.plugins._storage_builders import pod_claims

    selector = f'cel.bind(g, {test_cel.GPU}, ["a100", "h100"].exists(m, m == g.model) && g.index >= 0)'
    objects = [
        device_class("gpu", 'device.driver == "gpu.example.com"'),
        resource_slice("n0", [device("gpu-0", model="a100", index=0)]),
        resource_claim("c", exact("gpu", 1, "gpu", selector)),
    ]
    r = replay_of(objects, [pod("p", **pod_claims("c"))], nodes=[node("n0")])
    cycle = r.trace.cycle("default/p")
    assert (cycle.result, cycle.selected_node) == ("Scheduled", "n0")


def test_a_snapshot_with_an_over_cost_selector_is_refused_when_it_is_read() -> None:
    """As the API server refuses it at admission: the snapshot is broken before any replay."""
    import yaml

    from schedviz.engine import load_texts
    from tests.engine.builders import node

    text = yaml.safe_dump_all([node("n0"), device_class("gpu", MILLION)])
    with pytest.raises(InputError) as info:
        load_texts([("cluster.yaml", text)])
    assert str(info.value) == (
        "cluster.yaml: DeviceClass gpu: spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit"
    )
    load_texts([("cluster.yaml", yaml.safe_dump_all([node("n0"), device_class("gpu", "true")]))])
