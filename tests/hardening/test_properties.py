"""Property-based tests (hypothesis) of the engine's parsers and of the engine on anything they accept.

Two kinds of properties:

- robustness: whatever JSON-shaped value is given, each parser returns its result or raises the
  engine's own documented errors (``InputError``/``ConfigError``, both ``SchedVizError``), and a replay
  of any snapshot the loader accepted either runs or raises a ``SchedVizError`` -- never a
  ``KeyError``, ``TypeError``, ``decimal.Overflow``, numpy ``OverflowError``...;
- semantics, against small independent oracles: quantities' exact values and rounding, label
  selector and toleration matching.
"""

from __future__ import annotations

import contextlib
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from schedviz.engine import ConfigError, InputError, SchedVizError, replay
from schedviz.engine.config import load_config, parse_config_text
from schedviz.engine.labels import LabelSelector
from schedviz.engine.loader import load_objects
from schedviz.engine.nodeselectors import NodeSelector
from schedviz.engine.quantity import CPU, INT64_MAX, MEMORY, parse, to_int
from schedviz.engine.runtime import registry
from schedviz.engine.taints import Taint, Toleration, parse_tolerations
from schedviz.ingestion.parsing import UploadError, parse_objects

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

# --------------------------------------------------------------------------------------------------
# Strategies

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

SUFFIXES = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}


@st.composite
def quantities(draw: st.DrawFn) -> tuple[str, Decimal]:
    """A well-formed Quantity string and its exact value (computed here, not by the parser)."""
    whole = draw(st.integers(min_value=0, max_value=10**6))
    frac = draw(st.one_of(st.just(""), st.from_regex(r"[0-9]{1,4}", fullmatch=True)))
    suffix = draw(st.sampled_from(sorted(SUFFIXES)))
    exponent = draw(st.one_of(st.none(), st.integers(min_value=-6, max_value=6))) if suffix == "" else None
    text = f"{whole}.{frac}" if frac else str(whole)
    value = Decimal(text)
    if exponent is not None:
        text += f"e{exponent}"
        value = value.scaleb(exponent)
    else:
        text += suffix
        value *= SUFFIXES[suffix]
    return text, value


label_keys = st.sampled_from(["zone", "app", "tier", "example.com/role", "kubernetes.io/hostname", "gpu"])
label_values = st.sampled_from(["a", "b", "c", "1", "10", "x-y", ""])
labels_dicts = st.dictionaries(label_keys, label_values, max_size=4)
operators = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "in", "", "Equals"])


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the well-formed values, one time in twenty anything at all (a snapshot has many fields:
    more garbage than that and nearly every one is refused before the engine runs)."""
    return st.integers(min_value=0, max_value=19).flatmap(lambda i: json_values if i == 0 else strategy)


expressions = st.fixed_dictionaries(
    {"key": maybe(label_keys), "operator": maybe(operators)},
    optional={"values": maybe(st.lists(maybe(label_values), max_size=3))},
)
selectors = st.fixed_dictionaries(
    {},
    optional={
        "matchLabels": maybe(labels_dicts),
        "matchExpressions": maybe(st.lists(expressions, max_size=3)),
    },
)
node_selector_terms = st.fixed_dictionaries(
    {},
    optional={
        "matchExpressions": maybe(st.lists(expressions, max_size=3)),
        "matchFields": maybe(
            st.lists(
                st.fixed_dictionaries(
                    {"key": maybe(st.just("metadata.name")), "operator": maybe(operators)},
                    optional={"values": maybe(st.lists(st.sampled_from(["n0", "n1", "n2"]), max_size=2))},
                ),
                max_size=2,
            )
        ),
    },
)
node_selectors = st.fixed_dictionaries(
    {"nodeSelectorTerms": maybe(st.lists(maybe(node_selector_terms), max_size=3))}
)
effects = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute", "", "Sometimes"])
taints = st.fixed_dictionaries(
    {"key": maybe(label_keys), "effect": maybe(effects)}, optional={"value": maybe(label_values)}
)
tolerations = st.fixed_dictionaries(
    {},
    optional={
        "key": maybe(label_keys),
        "operator": maybe(st.sampled_from(["Exists", "Equal", "", "Lt", "Gt", "Bogus"])),
        "value": maybe(label_values),
        "effect": maybe(effects),
        "tolerationSeconds": maybe(st.integers(min_value=-5, max_value=10**12)),
    },
)
resource_amounts = maybe(
    st.one_of(
        quantities().map(lambda q: q[0]),
        st.sampled_from(["1e999999", "-1", "1E18", "0.5m", "abc", "1Ei", "9223372036854775807"]),
        st.integers(min_value=-10, max_value=10**20),
    )
)
resources = st.dictionaries(
    st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi"]),
    resource_amounts,
    max_size=3,
)


@st.composite
def nodes(draw: st.DrawFn, i: int) -> dict[str, Any]:
    alloc = draw(maybe(resources))
    status: dict[str, Any] = {"allocatable": alloc, "capacity": alloc}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": draw(maybe(labels_dicts))},
        "spec": draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "taints": maybe(st.lists(taints, max_size=2)),
                    "unschedulable": maybe(st.booleans()),
                },
            )
        ),
        "status": status,
    }


@st.composite
def pods(draw: st.DrawFn, i: int) -> dict[str, Any]:
    affinity = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "nodeAffinity": maybe(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "requiredDuringSchedulingIgnoredDuringExecution": maybe(node_selectors),
                            "preferredDuringSchedulingIgnoredDuringExecution": maybe(
                                st.lists(
                                    st.fixed_dictionaries(
                                        {
                                            "weight": maybe(st.integers(min_value=-5, max_value=200)),
                                            "preference": maybe(node_selector_terms),
                                        }
                                    ),
                                    max_size=2,
                                )
                            ),
                        },
                    )
                ),
                "podAntiAffinity": maybe(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "requiredDuringSchedulingIgnoredDuringExecution": st.lists(
                                st.fixed_dictionaries(
                                    {"topologyKey": maybe(label_keys), "labelSelector": maybe(selectors)}
                                ),
                                max_size=2,
                            )
                        },
                    )
                ),
            },
        )
    )
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": draw(maybe(resources))}}],
        **draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "affinity": st.just(affinity),
                    "tolerations": maybe(st.lists(tolerations, max_size=3)),
                    "nodeSelector": maybe(labels_dicts),
                    "priority": maybe(st.integers(min_value=-(2**31), max_value=2**31)),
                    "topologySpreadConstraints": maybe(
                        st.lists(
                            st.fixed_dictionaries(
                                {
                                    "maxSkew": maybe(st.integers(min_value=-1, max_value=3)),
                                    "topologyKey": maybe(label_keys),
                                    "whenUnsatisfiable": maybe(
                                        st.sampled_from(["DoNotSchedule", "ScheduleAnyway", "x"])
                                    ),
                                    "labelSelector": maybe(selectors),
                                }
                            ),
                            max_size=2,
                        )
                    ),
                },
            )
        ),
    }
    running = draw(st.booleans())
    if running:
        spec["nodeName"] = draw(st.sampled_from(["n0", "n1", "ghost"]))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"p{i}",
            "namespace": "default",
            "labels": draw(maybe(labels_dicts)),
            "creationTimestamp": f"2026-01-01T00:00:{i:02d}Z",
        },
        "spec": spec,
    }


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(min_value=1, max_value=3))
    p = draw(st.integers(min_value=1, max_value=4))
    return [draw(nodes(i)) for i in range(n)] + [draw(pods(i)) for i in range(p)]


# --------------------------------------------------------------------------------------------------
# Quantities


@FAST
@given(json_values)
def test_quantity_parse_returns_a_bounded_decimal_or_input_error(value: Any) -> None:
    try:
        q = parse(value)
    except InputError:
        return
    assert isinstance(q, Decimal) and q.is_finite() and abs(q) <= INT64_MAX
    for resource in (CPU, MEMORY):
        try:
            n = to_int(resource, value)
        except InputError:
            continue
        assert isinstance(n, int) and abs(n) <= INT64_MAX


@FAST
@given(st.text(alphabet="0123456789.eEkKMGTPimn+- ", max_size=14))
def test_quantity_like_text_never_escapes(text: str) -> None:
    try:
        q = parse(text)
        to_int(CPU, text)
    except InputError:
        return
    assert q.is_finite()


@FAST
@given(quantities())
def test_quantity_values_are_exact(q: tuple[str, Decimal]) -> None:
    text, value = q
    if value > INT64_MAX:  # beyond the scheduler's 64-bit arithmetic: refused, naming the limit
        with pytest.raises(InputError, match="larger than"):
            parse(text)
        return
    assert parse(text) == value
    assert to_int(MEMORY, text) == math.ceil(value)
    if math.ceil(value * 1000) > INT64_MAX:
        with pytest.raises(InputError, match="milli-CPU"):
            to_int(CPU, text)
    else:
        assert to_int(CPU, text) == math.ceil(value * 1000)


@FAST
@given(quantities(), quantities())
def test_quantity_conversion_is_monotonic(a: tuple[str, Decimal], b: tuple[str, Decimal]) -> None:
    (ta, _va), (tb, vb) = sorted([a, b], key=lambda q: q[1])
    assume(vb * 1000 <= INT64_MAX)
    assert to_int(CPU, ta) <= to_int(CPU, tb)
    assert to_int(MEMORY, ta) <= to_int(MEMORY, tb)


@pytest.mark.parametrize("text", ["1e999999", "1e9999999999", "9223372036854775808", "16Ei", "-1e30"])
def test_quantities_beyond_int64_are_input_errors(text: str) -> None:
    with pytest.raises(InputError, match="larger than 9223372036854775807"):
        parse(text)


def test_cpu_beyond_int64_milli_cpu_is_an_input_error() -> None:
    assert to_int(CPU, "9223372036854775") == 9223372036854775000
    with pytest.raises(InputError, match="milli-CPU"):
        to_int(CPU, "1E18")


# --------------------------------------------------------------------------------------------------
# Label selectors


def _oracle(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], set(e.get("values") or [])
        present = key in labels
        ok = {
            "In": present and labels.get(key) in values,
            "NotIn": not present or labels.get(key) not in values,
            "Exists": present,
            "DoesNotExist": not present,
        }[op]
        if not ok:
            return False
    return True


@FAST
@given(maybe(selectors), labels_dicts)
def test_label_selector_parse_never_escapes(raw: Any, labels: dict[str, str]) -> None:
    try:
        sel = LabelSelector.parse(raw, obj="Pod x", field="spec.selector")
    except InputError as exc:
        assert exc.field.startswith("spec.selector")
        return
    assert isinstance(sel.matches(labels), bool)


valid_expressions = st.one_of(
    st.fixed_dictionaries(
        {
            "key": label_keys,
            "operator": st.sampled_from(["In", "NotIn"]),
            "values": st.lists(label_values, min_size=1, max_size=3),
        }
    ),
    st.fixed_dictionaries({"key": label_keys, "operator": st.sampled_from(["Exists", "DoesNotExist"])}),
)


@FAST
@given(
    st.fixed_dictionaries(
        {},
        optional={"matchLabels": labels_dicts, "matchExpressions": st.lists(valid_expressions, max_size=3)},
    ),
    labels_dicts,
)
def test_label_selector_matches_as_kubernetes_does(raw: dict[str, Any], labels: dict[str, str]) -> None:
    assert LabelSelector.parse(raw).matches(labels) == _oracle(raw, labels)


@FAST
@given(labels_dicts, labels_dicts)
def test_match_labels_select_themselves_and_supersets(own: dict[str, str], extra: dict[str, str]) -> None:
    sel = LabelSelector.parse({"matchLabels": own})
    assert sel.matches(own)
    assert sel.matches({**extra, **own})


# --------------------------------------------------------------------------------------------------
# Node selector terms


@FAST
@given(maybe(node_selectors))
def test_node_selector_parse_never_escapes(raw: Any) -> None:
    try:
        ns = NodeSelector.parse(raw, obj="Pod x", field="spec.affinity.nodeAffinity.required")
    except InputError:
        return
    assert all(isinstance(e, str) and e for e in ns.errors)


# --------------------------------------------------------------------------------------------------
# Taints and tolerations


@FAST
@given(maybe(st.lists(tolerations, max_size=4)))
def test_parse_tolerations_never_escapes(raw: Any) -> None:
    try:
        out = parse_tolerations(raw, "Pod x")
    except InputError as exc:
        assert exc.field.startswith("spec.tolerations")
        return
    assert all(isinstance(t, Toleration) for t in out)


taint_values = st.builds(
    Taint, label_keys, label_values, st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])
)


@FAST
@given(
    taint_values,
    label_keys,
    label_values,
    st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]),
)
def test_toleration_matching(taint: Taint, key: str, value: str, effect: str) -> None:
    # an empty key with Exists tolerates every taint (of the effect, when one is given)
    assert Toleration("", "Exists", "", effect).tolerates(taint) == (effect in ("", taint.effect))
    # Equal: key and value equal, effect equal or empty
    expected = key == taint.key and value == taint.value and effect in ("", taint.effect)
    assert Toleration(key, "Equal", value, effect).tolerates(taint) == expected
    assert Toleration(key, "", value, effect).tolerates(taint) == expected
    # Exists with a key: any value
    assert Toleration(key, "Exists", "", effect).tolerates(taint) == (
        key == taint.key and effect in ("", taint.effect)
    )


@FAST
@given(st.integers(min_value=-(10**20), max_value=10**20), st.integers(min_value=-(10**20), max_value=10**20))
def test_comparison_tolerations_compare_int64_values(mine: int, theirs: int) -> None:
    taint = Taint("k", str(theirs), "NoSchedule")
    in_range = all(-(2**63) <= v <= 2**63 - 1 for v in (mine, theirs))
    assert Toleration("k", "Lt", str(mine), "").tolerates(taint, comparison_ops=True) == (
        in_range and theirs < mine
    )
    assert Toleration("k", "Gt", str(mine), "").tolerates(taint, comparison_ops=True) == (
        in_range and theirs > mine
    )
    assert not Toleration("k", "Gt", str(mine), "").tolerates(taint, comparison_ops=False)


# --------------------------------------------------------------------------------------------------
# KubeSchedulerConfiguration

PLUGINS = [
    "NodeResourcesFit",
    "NodeAffinity",
    "PodTopologySpread",
    "InterPodAffinity",
    "TaintToleration",
    "NodeResourcesBalancedAllocation",
    "DefaultPreemption",
    "ImageLocality",
    "VolumeBinding",
    "Bogus",
]
plugin_sets = st.fixed_dictionaries(
    {},
    optional={
        "enabled": st.lists(
            st.fixed_dictionaries(
                {"name": maybe(st.sampled_from(PLUGINS))}, optional={"weight": maybe(st.integers(-2, 200))}
            ),
            max_size=2,
        ),
        "disabled": st.lists(
            st.fixed_dictionaries({"name": maybe(st.sampled_from([*PLUGINS, "*"]))}), max_size=2
        ),
    },
)
plugin_args = st.fixed_dictionaries(
    {},
    optional={
        "scoringStrategy": maybe(
            st.fixed_dictionaries(
                {
                    "type": maybe(
                        st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", "X"])
                    )
                },
                optional={
                    "resources": maybe(
                        st.lists(
                            st.fixed_dictionaries(
                                {
                                    "name": maybe(st.sampled_from(["cpu", "memory", "x"])),
                                    "weight": maybe(st.integers(-1, 200)),
                                }
                            ),
                            max_size=2,
                        )
                    ),
                    "requestedToCapacityRatio": maybe(
                        st.fixed_dictionaries(
                            {
                                "shape": maybe(
                                    st.lists(
                                        st.fixed_dictionaries(
                                            {
                                                "utilization": maybe(st.integers(-1, 101)),
                                                "score": maybe(st.integers(-1, 11)),
                                            }
                                        ),
                                        max_size=3,
                                    )
                                )
                            }
                        )
                    ),
                },
            )
        ),
        "defaultConstraints": maybe(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "maxSkew": maybe(st.integers(-1, 3)),
                        "topologyKey": maybe(label_keys),
                        "whenUnsatisfiable": maybe(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                    }
                ),
                max_size=2,
            )
        ),
        "defaultingType": maybe(st.sampled_from(["System", "List", "Nope"])),
        "hardPodAffinityWeight": maybe(st.integers(-1, 101)),
        "minCandidateNodesPercentage": maybe(st.integers(-1, 101)),
        "minCandidateNodesAbsolute": maybe(st.integers(-1, 200)),
        "addedAffinity": maybe(
            st.fixed_dictionaries(
                {}, optional={"requiredDuringSchedulingIgnoredDuringExecution": maybe(node_selectors)}
            )
        ),
        "bindTimeoutSeconds": maybe(st.integers(-1, 1000)),
        "ignorePreferredTermsOfExistingPods": maybe(st.booleans()),
    },
)
profiles = st.fixed_dictionaries(
    {},
    optional={
        "schedulerName": maybe(st.sampled_from(["default-scheduler", "other", ""])),
        "percentageOfNodesToScore": maybe(st.integers(-1, 101)),
        "plugins": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    p: plugin_sets
                    for p in (
                        "queueSort",
                        "preFilter",
                        "filter",
                        "postFilter",
                        "preScore",
                        "score",
                        "reserve",
                        "permit",
                        "preBind",
                        "bind",
                        "multiPoint",
                    )
                },
            )
        ),
        "pluginConfig": maybe(
            st.lists(
                st.fixed_dictionaries({"name": maybe(st.sampled_from(PLUGINS)), "args": maybe(plugin_args)}),
                max_size=3,
            )
        ),
    },
)
configs = st.fixed_dictionaries(
    {
        "apiVersion": maybe(
            st.sampled_from(["kubescheduler.config.k8s.io/v1", "kubescheduler.config.k8s.io/v1beta3"])
        ),
        "kind": maybe(st.just("KubeSchedulerConfiguration")),
    },
    optional={
        "profiles": maybe(st.lists(profiles, max_size=2)),
        "percentageOfNodesToScore": maybe(st.integers(-1, 101)),
        "parallelism": maybe(st.integers(-1, 32)),
        "podInitialBackoffSeconds": maybe(st.integers(-1, 20)),
        "podMaxBackoffSeconds": maybe(st.integers(-1, 20)),
        "extenders": maybe(
            st.lists(st.fixed_dictionaries({"urlPrefix": maybe(st.just("http://127.0.0.1:1"))}), max_size=1)
        ),
    },
)


@SLOW
@given(configs)
def test_load_config_raises_only_config_errors(raw: dict[str, Any]) -> None:
    try:
        cfg = load_config(raw, implements=registry.implements_table())
    except ConfigError as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
        return
    assert cfg.profiles


@FAST
@given(st.one_of(st.text(max_size=200), json_values.map(str)))
def test_config_text_parsing_never_escapes(text: str) -> None:
    try:
        raw = parse_config_text(text, "config.yaml")
    except (ConfigError, InputError):
        return
    with contextlib.suppress(ConfigError):
        load_config(raw, implements=registry.implements_table())


# --------------------------------------------------------------------------------------------------
# The engine on anything the parsers accept


def _replay_or_engine_error(objects: list[dict[str, Any]], config: Any = None) -> None:
    try:
        trace = replay(load_objects(objects), config)
    except SchedVizError as exc:
        event(f"refused: {type(exc).__name__}")
        return
    cycles = trace.to_dict()["cycles"]
    event(f"replayed, {'some' if cycles else 'no'} cycles")
    assert all(
        c["result"]
        in ("Scheduled", "Unschedulable", "Error", "Waiting", "Skipped", "Gated", "Bound", "Rejected")
        for c in cycles
    ), {c["result"] for c in cycles}


@SLOW
@given(clusters())
def test_engine_raises_only_its_own_errors_on_any_loaded_snapshot(objects: list[dict[str, Any]]) -> None:
    """The loader's own checks, then the replay: nothing but SchedVizError escapes."""
    _replay_or_engine_error(objects)


@SLOW
@given(clusters())
def test_uploads_that_validate_replay_or_fail_with_an_engine_error(objects: list[dict[str, Any]]) -> None:
    """What the web application's parser accepts (and stores) replays, or fails with an InputError that
    names the object and field (some fields -- tolerations' operators, the label selectors of spread
    constraints -- are checked by the engine only when a plugin reads them)."""
    try:
        parsed = parse_objects(objects)
    except UploadError:
        event("refused at upload")
        return
    try:
        replay(parsed.engine_snapshot())
    except InputError as exc:
        assert exc.obj and exc.field, str(exc)
        event("accepted, replay failed with InputError")
        return
    event("accepted and replayed")


@SLOW
@given(clusters(), configs)
def test_engine_under_any_valid_configuration(objects: list[dict[str, Any]], raw: dict[str, Any]) -> None:
    try:
        cfg = load_config(raw, implements=registry.implements_table())
    except ConfigError:
        assume(False)
        return
    _replay_or_engine_error(objects, cfg)
