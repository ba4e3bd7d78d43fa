"""KubeSchedulerConfiguration loading, defaulting, validation and multiPoint expansion.

Cases re-express upstream's pkg/scheduler/apis/config/v1/{default_plugins_test.go, defaults_test.go},
validation/{validation_test.go, validation_pluginargs_test.go} and
framework/runtime/framework_test.go (TestNewFrameworkMultiPointExpansion); expected values follow
from upstream's rules, not from running this implementation.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from schedviz.engine.config import (
    EXTENSION_POINTS,
    PluginRef,
    SchedulerConfig,
    default_plugins,
    format_duration,
    load_config,
    merge_plugin_set,
    parse_config_text,
    parse_duration,
)
from schedviz.engine.config.defaults import Entry as _Entry
from schedviz.engine.config.defaults import PluginSet as _Set
from schedviz.engine.errors import ConfigError

# The v1.35 in-tree plugins and the extension points each implements, read from the methods of
# pkg/scheduler/framework/plugins/*/ (e.g. DefaultPreemption has PreEnqueue and PostFilter;
# DynamicResources has no PreScore; VolumeBinding scores, gated inside the plugin).
IN_TREE: dict[str, frozenset[str]] = {
    name: frozenset(points)
    for name, points in {
        "PrioritySort": {"queueSort"},
        "SchedulingGates": {"preEnqueue"},
        "NodeUnschedulable": {"filter"},
        "NodeName": {"filter"},
        "TaintToleration": {"filter", "preScore", "score"},
        "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
        "NodePorts": {"preFilter", "filter"},
        "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
        "VolumeRestrictions": {"preFilter", "filter"},
        "NodeVolumeLimits": {"preFilter", "filter"},
        "VolumeBinding": {"preFilter", "filter", "reserve", "preBind", "preScore", "score"},
        "VolumeZone": {"preFilter", "filter"},
        "PodTopologySpread": {"preFilter", "filter", "preScore", "score"},
        "InterPodAffinity": {"preFilter", "filter", "preScore", "score"},
        "DefaultPreemption": {"preEnqueue", "postFilter"},
        "NodeResourcesBalancedAllocation": {"preScore", "score"},
        "ImageLocality": {"score"},
        "DefaultBinder": {"bind"},
        "DynamicResources": {
            "preEnqueue",
            "preFilter",
            "filter",
            "postFilter",
            "score",
            "reserve",
            "preBind",
        },
        "GangScheduling": {"preEnqueue", "reserve", "permit"},
        "NodeDeclaredFeatures": {"preFilter", "filter"},
    }.items()
}

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def cfg(**fields: Any) -> dict[str, Any]:
    return {**V1, **fields}


def prof(**fields: Any) -> dict[str, Any]:
    return {"schedulerName": "default-scheduler", **fields}


def one(profile: dict[str, Any], **top: Any) -> dict[str, Any]:
    return cfg(profiles=[profile], **top)


def names(refs: list[PluginRef]) -> list[str]:
    return [r.name for r in refs]


def load(source: Any, implements: dict[str, frozenset[str]] | None = None, **kw: Any) -> SchedulerConfig:
    return load_config(source, implements=implements or IN_TREE, **kw)


def problems(source: Any, implements: dict[str, frozenset[str]] | None = None, **kw: Any) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load(source, implements, **kw)
    return info.value.problems


# --------------------------------------------------------------------------------------------------
# The default configuration (v1/default_plugins.go, defaults.go)

DEFAULT_LISTS: dict[str, list[str]] = {
    "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    "queueSort": ["PrioritySort"],
    "preFilter": [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ],
    "filter": [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    "score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "permit": [],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
    "postBind": [],
}
DEFAULT_WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "VolumeBinding": 1,  # no weight in the default list: 0 means 1
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "DynamicResources": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}
DEFAULT_ARGS: dict[str, dict[str, Any]] = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    "DynamicResources": {"filterTimeout": "10s"},
    "InterPodAffinity": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
    "NodeAffinity": {},
    "NodeResourcesBalancedAllocation": {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    },
    "NodeResourcesFit": {
        "ignoredResources": [],
        "ignoredResourceGroups": [],
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
    },
    "PodTopologySpread": {"defaultConstraints": [], "defaultingType": "System"},
    "VolumeBinding": {"bindTimeoutSeconds": 600},
}


@pytest.mark.parametrize(
    "source",
    [None, cfg(), cfg(profiles=[{}]), cfg(profiles=[]), one({"plugins": {}, "pluginConfig": []})],
    ids=["none", "empty", "one-empty-profile", "no-profiles", "empty-plugins"],
)
def test_default_configuration(source: Any) -> None:
    c = load(source)
    assert c.parallelism == 16
    assert c.percentage_of_nodes_to_score is None
    assert (c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds) == (1, 10)
    assert c.extenders == []
    assert len(c.profiles) == 1
    p = c.profiles[0]
    assert p.scheduler_name == "default-scheduler"
    assert p.percentage_of_nodes_to_score is None
    assert list(p.plugins) == list(EXTENSION_POINTS)
    assert {k: names(v) for k, v in p.plugins.items()} == DEFAULT_LISTS
    assert p.score_weights() == DEFAULT_WEIGHTS
    for point in EXTENSION_POINTS:
        if point != "score":
            assert all(r.weight == 0 for r in p.plugins[point])
    for plugin, args in DEFAULT_ARGS.items():
        assert p.plugin_args[plugin] == args
    assert p.plugin_args["ImageLocality"] == {}


def test_default_multipoint_order() -> None:
    assert [(r.name, r.weight) for r in default_plugins()] == [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ]


@pytest.mark.parametrize(
    ("features", "point", "expected"),
    [
        ({"DynamicResourceAllocation": False}, "preEnqueue", ["SchedulingGates", "DefaultPreemption"]),
        ({"DynamicResourceAllocation": False}, "postFilter", ["DefaultPreemption"]),
        (
            {"DynamicResourceAllocation": False},
            "score",
            [n for n in DEFAULT_LISTS["score"] if n != "DynamicResources"],
        ),
        # NodeDeclaredFeatures is appended first, DynamicResources then inserted before DefaultPreemption
        ({"NodeDeclaredFeatures": True}, "filter", [*DEFAULT_LISTS["filter"], "NodeDeclaredFeatures"]),
        (
            {"GangScheduling": True},
            "preEnqueue",
            ["SchedulingGates", "DynamicResources", "DefaultPreemption", "GangScheduling"],
        ),
        ({"GangScheduling": True}, "permit", ["GangScheduling"]),
        ({"GangScheduling": True}, "reserve", ["VolumeBinding", "DynamicResources", "GangScheduling"]),
    ],
)
def test_feature_gated_default_plugins(features: dict[str, bool], point: str, expected: list[str]) -> None:
    p = load(None, features=features).profiles[0]
    assert names(p.plugins[point]) == expected


def test_dynamic_resources_off_drops_its_default_args() -> None:
    p = load(None, features={"DynamicResourceAllocation": False}).profiles[0]
    assert "DynamicResources" not in p.plugin_args


# --------------------------------------------------------------------------------------------------
# mergePlugins (default_plugins_test.go TestMergePlugins)


def _set(enabled: list[tuple[str, int]] | None = None, disabled: list[str] | None = None) -> _Set:
    return _Set([_Entry(n, w, "") for n, w in enabled or []], list(disabled or []))


@pytest.mark.parametrize(
    ("default", "custom", "want_enabled", "want_disabled"),
    [
        pytest.param(
            _set([("Default1", 0), ("Default2", 0)]),
            _set([("Custom", 0)]),
            [("Default1", 0), ("Default2", 0), ("Custom", 0)],
            [],
            id="append-custom",
        ),
        pytest.param(
            _set([("Default1", 0), ("Default2", 0)]),
            _set([("Custom", 0), ("Default2", 0)], ["Default2"]),
            [("Default1", 0), ("Custom", 0), ("Default2", 0)],
            ["Default2"],
            id="insert-after-default1",
        ),
        pytest.param(
            _set([("Default1", 0), ("Default2", 0)]),
            _set([("Custom", 0), ("Default1", 0), ("Default2", 0)], ["*"]),
            [("Custom", 0), ("Default1", 0), ("Default2", 0)],
            ["*"],
            id="insert-before-all",
        ),
        pytest.param(
            _set([("Default1", 0), ("Default2", 0)]),
            _set([("Default2", 0), ("Default1", 0)], ["*"]),
            [("Default2", 0), ("Default1", 0)],
            ["*"],
            id="reorder-defaults",
        ),
        pytest.param(
            _set([("Default1", 0), ("Default2", 0)]),
            _set(),
            [("Default1", 0), ("Default2", 0)],
            [],
            id="nothing-custom",
        ),
        pytest.param(
            _set([("Plugin1", 0), ("Plugin2", 0), ("Plugin3", 0)]),
            _set([("Plugin1", 2), ("Plugin3", 3)]),
            [("Plugin1", 2), ("Plugin2", 0), ("Plugin3", 3)],
            [],
            id="override-in-place",
        ),
        pytest.param(
            _set([("Plugin1", 0), ("Plugin2", 0), ("Plugin3", 0)]),
            _set([("Plugin2", 2), ("Plugin1", 1)]),
            [("Plugin1", 1), ("Plugin2", 2), ("Plugin3", 0)],
            [],
            id="order-kept-after-override",
        ),
        pytest.param(
            # the last repeated entry replaces the default in place, the earlier one is appended
            _set([("Plugin1", 0), ("Plugin2", 0), ("Plugin3", 0)]),
            _set([("Plugin1", 0), ("Plugin2", 2), ("Plugin3", 0), ("Plugin2", 4)]),
            [("Plugin1", 0), ("Plugin2", 4), ("Plugin3", 0), ("Plugin2", 2)],
            [],
            id="repeated-custom",
        ),
        pytest.param(
            _set([("Default", 0)], ["Default2"]),
            _set([("Custom", 0)]),
            [("Default", 0), ("Custom", 0)],
            ["Default2"],
            id="disabled-in-default-set-kept",
        ),
        pytest.param(
            _set([("Default", 0)]),
            _set(None, ["Default"]),
            [],
            ["Default"],
            id="only-disabled",
        ),
    ],
)
def test_merge_plugin_set(
    default: _Set, custom: _Set, want_enabled: list[tuple[str, int]], want_disabled: list[str]
) -> None:
    merged = merge_plugin_set(default, custom)
    assert [(e.name, e.weight) for e in merged.enabled] == want_enabled
    assert merged.disabled == want_disabled


# --------------------------------------------------------------------------------------------------
# expandMultiPointPlugins (framework_test.go TestNewFrameworkMultiPointExpansion), with test plugins.
# "*" in multiPoint.disabled only drops the default plugins; expansion never looks at it.

TEST_PLUGINS: dict[str, frozenset[str]] = {
    "TestPlugin": frozenset(set(EXTENSION_POINTS) - {"preEnqueue"}),
    "ScorePlugin1": frozenset({"preScore", "score"}),
    "ScoreWithNormalize1": frozenset({"score"}),
    "QueueSort": frozenset({"queueSort"}),
    "Bind": frozenset({"bind"}),
}
ALL_BUT_PRE_ENQUEUE = [p for p in EXTENSION_POINTS if p != "preEnqueue"]


def _mp(*plugins: dict[str, Any], **points: dict[str, Any]) -> dict[str, Any]:
    return one(
        prof(plugins={"multiPoint": {"enabled": list(plugins), "disabled": [{"name": "*"}]}, **points})
    )


def _expect(
    default: list[str], **override: list[tuple[str, int]] | list[str]
) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {p: [] for p in EXTENSION_POINTS}
    for p in ALL_BUT_PRE_ENQUEUE:
        out[p] = [(n, 0) for n in default]
    for p, v in override.items():
        out[p] = [x if isinstance(x, tuple) else (x, 0) for x in v]
    return out


MULTIPOINT_CASES = [
    pytest.param(
        _mp({"name": "TestPlugin", "weight": 5}),
        _expect(["TestPlugin"], score=[("TestPlugin", 5)]),
        id="plugin-expansion",
    ),
    pytest.param(
        _mp(
            {"name": "TestPlugin"},
            preScore={"disabled": [{"name": "TestPlugin"}]},
            score={"disabled": [{"name": "TestPlugin"}]},
        ),
        _expect(["TestPlugin"], preScore=[], score=[]),
        id="disabled-at-some-points",
    ),
    pytest.param(
        _mp({"name": "TestPlugin"}, {"name": "ScorePlugin1"}),
        _expect(
            ["TestPlugin"],
            preScore=["TestPlugin", "ScorePlugin1"],
            score=[("TestPlugin", 1), ("ScorePlugin1", 1)],
        ),
        id="multiple-multipoint-plugins",
    ),
    pytest.param(
        _mp({"name": "TestPlugin"}, {"name": "ScorePlugin1"}, preScore={"disabled": [{"name": "*"}]}),
        _expect(["TestPlugin"], preScore=[], score=[("TestPlugin", 1), ("ScorePlugin1", 1)]),
        id="disable-extension-point-with-star",
    ),
    pytest.param(
        _mp(
            {"name": "ScoreWithNormalize1"},
            {"name": "TestPlugin"},
            {"name": "ScorePlugin1"},
            score={"enabled": [{"name": "ScorePlugin1"}, {"name": "TestPlugin"}]},
        ),
        _expect(
            ["TestPlugin"],
            preScore=["TestPlugin", "ScorePlugin1"],
            score=[("ScorePlugin1", 1), ("TestPlugin", 1), ("ScoreWithNormalize1", 1)],
        ),
        id="specific-extension-order-wins",
    ),
    pytest.param(
        # ScoreWithNormalize1 is not in multiPoint: it stays after the multiPoint ones
        _mp(
            {"name": "TestPlugin"},
            {"name": "ScorePlugin1"},
            score={
                "enabled": [{"name": "ScoreWithNormalize1"}, {"name": "ScorePlugin1"}, {"name": "TestPlugin"}]
            },
        ),
        _expect(
            ["TestPlugin"],
            preScore=["TestPlugin", "ScorePlugin1"],
            score=[("ScorePlugin1", 1), ("TestPlugin", 1), ("ScoreWithNormalize1", 1)],
        ),
        id="specific-order-only-for-multipoint-plugins",
    ),
    pytest.param(
        _mp(
            {"name": "TestPlugin"},
            {"name": "ScorePlugin1"},
            score={"enabled": [{"name": "ScorePlugin1", "weight": 5}, {"name": "TestPlugin", "weight": 3}]},
        ),
        _expect(
            ["TestPlugin"],
            preScore=["TestPlugin", "ScorePlugin1"],
            score=[("ScorePlugin1", 5), ("TestPlugin", 3)],
        ),
        id="score-weights-override-multipoint",
    ),
    pytest.param(
        one(
            prof(
                plugins={
                    "multiPoint": {
                        "enabled": [{"name": "QueueSort"}, {"name": "Bind"}, {"name": "ScorePlugin1"}],
                        "disabled": [{"name": "ScorePlugin1"}, {"name": "*"}],
                    }
                }
            )
        ),
        _expect(
            [], queueSort=["QueueSort"], bind=["Bind"], preScore=["ScorePlugin1"], score=[("ScorePlugin1", 1)]
        ),
        id="multipoint-disabled-does-not-stop-expansion",
    ),
]


@pytest.mark.parametrize(("source", "expected"), MULTIPOINT_CASES)
def test_multipoint_expansion(source: dict[str, Any], expected: dict[str, list[tuple[str, int]]]) -> None:
    p = load(source, TEST_PLUGINS).profiles[0]
    assert {k: [(r.name, r.weight) for r in v] for k, v in p.plugins.items()} == expected


def test_multipoint_double_registration() -> None:
    got = problems(_mp({"name": "TestPlugin"}, {"name": "TestPlugin"}), TEST_PLUGINS)
    assert got[0] == (
        'profiles[0].plugins.multiPoint.enabled[1].name: Invalid value: "TestPlugin": '
        'plugin "TestPlugin" already registered as "PreFilterPlugin"'
    )


# --------------------------------------------------------------------------------------------------
# Score plugins and weights with the in-tree set


def _score(profile_plugins: dict[str, Any]) -> list[tuple[str, int]]:
    p = load(one(prof(plugins=profile_plugins))).profiles[0]
    return [(r.name, r.weight) for r in p.plugins["score"]]


D = DEFAULT_WEIGHTS


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        pytest.param(
            # the basic/ conformance profile: TaintToleration's Score off, two weights raised
            {
                "score": {
                    "disabled": [{"name": "TaintToleration"}],
                    "enabled": [
                        {"name": "NodeResourcesBalancedAllocation", "weight": 5},
                        {"name": "ImageLocality", "weight": 3},
                    ],
                }
            },
            [
                ("NodeResourcesBalancedAllocation", 5),
                ("ImageLocality", 3),
                ("NodeAffinity", 2),
                ("NodeResourcesFit", 1),
                ("VolumeBinding", 1),
                ("PodTopologySpread", 2),
                ("InterPodAffinity", 2),
                ("DynamicResources", 2),
            ],
            id="score-override-and-disable",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 7}]}},
            [(n, 7 if n == "NodeAffinity" else D[n]) for n in DEFAULT_LISTS["score"]],
            id="multipoint-weight-replaces-default-in-place",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 0}]}},
            [(n, 1 if n == "TaintToleration" else D[n]) for n in DEFAULT_LISTS["score"]],
            id="weight-zero-means-one",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "NodeName", "weight": 5}]}},
            [(n, D[n]) for n in DEFAULT_LISTS["score"]],
            id="weight-of-non-scoring-plugin-ignored",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "PodTopologySpread", "weight": 9}]}},
            [("PodTopologySpread", 9)]
            + [(n, D[n]) for n in DEFAULT_LISTS["score"] if n != "PodTopologySpread"],
            id="score-weight-wins-over-multipoint",
        ),
        pytest.param(
            # getScoreWeights reads score.enabled before multiPoint: the unset weight (1) beats multiPoint's 3
            {"score": {"enabled": [{"name": "TaintToleration"}]}},
            [("TaintToleration", 1)] + [(n, D[n]) for n in DEFAULT_LISTS["score"] if n != "TaintToleration"],
            id="score-entry-without-weight-beats-multipoint-weight",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}},
            [("ImageLocality", -1)] + [(n, D[n]) for n in DEFAULT_LISTS["score"] if n != "ImageLocality"],
            id="negative-weight-not-validated-upstream",
        ),
        pytest.param(
            {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality", "weight": 3}]}},
            [("ImageLocality", 3)],
            id="star-disables-multipoint-expansion",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "ImageLocality"}, {"name": "VolumeBinding"}]}},
            [(n, D[n]) for n in DEFAULT_LISTS["score"] if n not in ("ImageLocality", "VolumeBinding")],
            id="multipoint-disable-defaults",
        ),
    ],
)
def test_score_weights(plugins: dict[str, Any], expected: list[tuple[str, int]]) -> None:
    assert _score(plugins) == expected


def test_score_disabled_plugin_keeps_other_points() -> None:
    p = load(one(prof(plugins={"score": {"disabled": [{"name": "TaintToleration"}]}}))).profiles[0]
    assert "TaintToleration" in names(p.plugins["filter"])
    assert "TaintToleration" in names(p.plugins["preScore"])
    assert "TaintToleration" not in names(p.plugins["score"])


def test_replacing_queue_sort_needs_disabling_the_default() -> None:
    impl = {**IN_TREE, "CustomSort": frozenset({"queueSort"})}
    ok = one(
        prof(
            plugins={
                "multiPoint": {"disabled": [{"name": "PrioritySort"}]},
                "queueSort": {"enabled": [{"name": "CustomSort"}]},
            }
        )
    )
    assert names(load(ok, impl).profiles[0].plugins["queueSort"]) == ["CustomSort"]
    bad = one(prof(plugins={"queueSort": {"enabled": [{"name": "CustomSort"}]}}))
    assert problems(bad, impl) == [
        "profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
        '"default-scheduler", but got 2'
    ]


# --------------------------------------------------------------------------------------------------
# Errors: decoding, validation.go, framework construction


def _fit(args: dict[str, Any]) -> dict[str, Any]:
    return one(prof(pluginConfig=[{"name": "NodeResourcesFit", "args": args}]))


def _args(plugin: str, args: dict[str, Any]) -> dict[str, Any]:
    return one(prof(pluginConfig=[{"name": plugin, "args": args}]))


A = "profiles[0].pluginConfig[0].args"
ERROR_CASES = [
    # type meta and strict decoding
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
        [
            'no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3"'
        ],
        id="old-api-version",
    ),
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "Policy"},
        ['no kind "Policy" is registered for version "kubescheduler.config.k8s.io/v1"'],
        id="wrong-kind",
    ),
    pytest.param(
        {"profiles": []},
        [
            'apiVersion: Required value: must be "kubescheduler.config.k8s.io/v1"',
            'kind: Required value: must be "KubeSchedulerConfiguration"',
        ],
        id="no-type-meta",
    ),
    pytest.param(
        one(prof(plugins={"scores": {}}), healthzBindAddress="0.0.0.0"),
        [
            'strict decoding error: unknown field "profiles[0].plugins.scores"',
            'strict decoding error: unknown field "healthzBindAddress"',
        ],
        id="unknown-fields",
    ),
    pytest.param(
        one(prof(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": "3"}]}})),
        [
            "json: cannot unmarshal string into Go struct field "
            "profiles[0].plugins.score.enabled[0].weight of type int32"
        ],
        id="weight-not-a-number",
    ),
    pytest.param(
        one(prof(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 2**31}]}})),
        [
            "json: cannot unmarshal number 2147483648 into Go struct field "
            "profiles[0].plugins.score.enabled[0].weight of type int32"
        ],
        id="weight-overflows-int32",
    ),
    pytest.param(
        one(prof(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 1.5}]}})),
        [
            "json: cannot unmarshal number 1.5 into Go struct field "
            "profiles[0].plugins.score.enabled[0].weight of type int32"
        ],
        id="weight-fractional",
    ),
    pytest.param(
        _args("DefaultPreemption", {"minCandidateNodes": 3}),
        [f'strict decoding error: unknown field "{A}.minCandidateNodes"'],
        id="unknown-args-field",
    ),
    pytest.param(
        _args(
            "DefaultPreemption",
            {"kind": "InterPodAffinityArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"},
        ),
        [
            f"{A}: args for plugin DefaultPreemption were not of type "
            "kubescheduler.config.k8s.io/DefaultPreemptionArgs, got kubescheduler.config.k8s.io/v1, "
            "Kind=InterPodAffinityArgs"
        ],
        id="args-of-another-kind",
    ),
    pytest.param(
        _args("DynamicResources", {"filterTimeout": "soon"}),
        [f'{A}.filterTimeout: time: invalid duration "soon"'],
        id="bad-duration",
    ),
    # validation.go
    pytest.param(
        cfg(parallelism=0),
        ["parallelism: Invalid value: 0: should be an integer value greater than zero"],
        id="parallelism",
    ),
    pytest.param(
        cfg(percentageOfNodesToScore=101),
        ["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"],
        id="global-percentage",
    ),
    pytest.param(
        one(prof(percentageOfNodesToScore=-1)),
        ["profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"],
        id="profile-percentage",
    ),
    pytest.param(
        cfg(podInitialBackoffSeconds=0, podMaxBackoffSeconds=0),
        ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"],
        id="initial-backoff",
    ),
    pytest.param(
        cfg(podInitialBackoffSeconds=5, podMaxBackoffSeconds=3),
        ["podMaxBackoffSeconds: Invalid value: 3: must be greater than or equal to PodInitialBackoffSeconds"],
        id="max-backoff",
    ),
    pytest.param(
        cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
        ['profiles[1].schedulerName: Duplicate value: "a" (already used by profiles[0].schedulerName)'],
        id="duplicate-scheduler-name",
    ),
    pytest.param(
        cfg(profiles=[{"schedulerName": "a"}, {}]),
        ["profiles[1].schedulerName: Required value"],
        id="scheduler-name-needed-with-two-profiles",
    ),
    pytest.param(
        one({"schedulerName": ""}),
        ["profiles[0].schedulerName: Required value"],
        id="explicit-empty-scheduler-name",
    ),
    pytest.param(
        one(prof(plugins={"filter": {"enabled": [{"name": "EBSLimits"}]}})),
        [
            'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
            '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
        ],
        id="removed-plugin",
    ),
    pytest.param(
        one(prof(pluginConfig=[{"name": "GCEPDLimits"}])),
        [
            'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version '
            '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
        ],
        id="removed-plugin-config",
    ),
    pytest.param(
        one(prof(pluginConfig=[{"name": "NodeAffinity"}, {"name": "NodeAffinity"}])),
        ['profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity"'],
        id="duplicate-plugin-config",
    ),
    pytest.param(
        cfg(
            extenders=[
                {"urlPrefix": "http://a", "prioritizeVerb": "prioritize", "weight": -1},
                {"urlPrefix": "http://b", "bindVerb": "bind", "managedResources": [{"name": "foo.com/bar"}]},
                {"urlPrefix": "http://c", "bindVerb": "bind", "managedResources": [{"name": "foo.com/bar"}]},
                {"urlPrefix": "http://d", "managedResources": [{"name": "kubernetes.io/foo"}]},
            ]
        ),
        [
            "extenders[0].weight: Invalid value: -1: must have a positive weight applied to it",
            'extenders[2].managedResources[0].name: Invalid value: "foo.com/bar": duplicate extender managed resource name',
            'extenders[3].managedResources[0].name: Invalid value: "kubernetes.io/foo": is an invalid extended resource name',
            'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
        ],
        id="extenders",
    ),
    pytest.param(
        cfg(leaderElection={"leaderElect": True, "resourceLock": "endpoints", "leaseDuration": "5s"}),
        [
            'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
            'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
        ],
        id="leader-election",
    ),
    pytest.param(
        cfg(clientConnection={"burst": -1}),
        ["clientConnection.burst: Invalid value: -1: must be non-negative"],
        id="client-connection",
    ),
    # framework construction
    pytest.param(
        one(prof(plugins={"score": {"enabled": [{"name": "ImageLocality"}, {"name": "Foo"}]}})),
        [
            'profiles[0].plugins.score.enabled[1].name: Not found: "Foo": unknown plugin (ScorePlugin "Foo" does not exist)'
        ],
        id="unknown-score-plugin",
    ),
    pytest.param(
        one(prof(plugins={"multiPoint": {"enabled": [{"name": "Bar"}]}})),
        [
            'profiles[0].plugins.multiPoint.enabled[0].name: Not found: "Bar": '
            'unknown plugin (PreFilterPlugin "Bar" does not exist)'
        ],
        id="unknown-multipoint-plugin",
    ),
    pytest.param(
        one(prof(plugins={"score": {"enabled": [{"name": "NodeName", "weight": 2}]}})),
        [
            'profiles[0].plugins.score.enabled[0].name: Invalid value: "NodeName": '
            'plugin "NodeName" does not extend ScorePlugin plugin'
        ],
        id="weight-for-plugin-that-does-not-score",
    ),
    pytest.param(
        one(
            prof(
                plugins={
                    "score": {"enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality", "weight": 2}]}
                }
            )
        ),
        [
            'profiles[0].plugins.score.enabled[1].name: Invalid value: "ImageLocality": '
            'plugin "ImageLocality" already registered as "ScorePlugin"'
        ],
        id="score-plugin-twice",
    ),
    pytest.param(
        # mergePlugins keeps both entries; the framework rejects the second at the first point
        one(
            prof(
                plugins={
                    "multiPoint": {
                        "enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality", "weight": 4}]
                    }
                }
            )
        ),
        [
            'profiles[0].plugins.multiPoint.enabled[0].name: Invalid value: "ImageLocality": '
            'plugin "ImageLocality" already registered as "ScorePlugin"'
        ],
        id="multipoint-plugin-twice",
    ),
    pytest.param(
        one(prof(plugins={"queueSort": {"disabled": [{"name": "*"}]}})),
        [
            "profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
            '"default-scheduler", but got 0'
        ],
        id="no-queue-sort",
    ),
    pytest.param(
        one(prof(plugins={"multiPoint": {"disabled": [{"name": "DefaultBinder"}]}})),
        [
            'profiles[0].plugins.bind: at least one bind plugin is needed for profile with scheduler name "default-scheduler"'
        ],
        id="no-bind",
    ),
    pytest.param(
        cfg(
            profiles=[
                {"schedulerName": "a"},
                {"schedulerName": "b", "pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}]},
            ]
        ),
        ['profiles[1]: different queue sort plugin args for profile "b"'],
        id="queue-sort-args-differ",
    ),
]


@pytest.mark.parametrize(("source", "expected"), ERROR_CASES)
def test_errors(source: dict[str, Any], expected: list[str]) -> None:
    assert problems(source) == expected


def test_queue_sort_must_match_across_profiles() -> None:
    impl = {**IN_TREE, "CustomSort": frozenset({"queueSort"})}
    custom = {
        "multiPoint": {"disabled": [{"name": "PrioritySort"}]},
        "queueSort": {"enabled": [{"name": "CustomSort"}]},
    }
    source = cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "b", "plugins": custom}])
    assert problems(source, impl) == [
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":["CustomSort"],"Disabled":[]}: '
        "must be the same for all profiles",
        'profiles[1]: different queue sort plugins for profile "b": "CustomSort", first: "PrioritySort"',
    ]
    same = cfg(
        profiles=[{"schedulerName": "a", "plugins": custom}, {"schedulerName": "b", "plugins": custom}]
    )
    assert [p.scheduler_name for p in load(same, impl).profiles] == ["a", "b"]


def test_every_problem_is_reported() -> None:
    source = cfg(
        parallelism=-2,
        profiles=[
            prof(
                percentageOfNodesToScore=200,
                plugins={"score": {"enabled": [{"name": "Foo"}]}},
                pluginConfig=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}],
            )
        ],
    )
    assert problems(source) == [
        "parallelism: Invalid value: -2: should be an integer value greater than zero",
        "profiles[0].percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]",
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
        'profiles[0].plugins.score.enabled[0].name: Not found: "Foo": unknown plugin (ScorePlugin "Foo" does not exist)',
    ]


def test_config_error_names_the_source() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(cfg(parallelism=0), implements=IN_TREE, name="scenario-7")
    assert info.value.source == "scenario-7"
    assert str(info.value).startswith("scenario-7: invalid KubeSchedulerConfiguration: parallelism")


# --------------------------------------------------------------------------------------------------
# Plugin args: defaulting (defaults_test.go TestPluginArgsDefaults)


@pytest.mark.parametrize(
    ("plugin", "args", "features", "expected"),
    [
        ("DefaultPreemption", {}, {}, {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}),
        (
            "DefaultPreemption",
            {"minCandidateNodesPercentage": 50},
            {},
            {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100},
        ),
        (
            "InterPodAffinity",
            {"hardPodAffinityWeight": 0},
            {},
            {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False},
        ),
        (
            "InterPodAffinity",
            {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": True},
            {},
            {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": True},
        ),
        (
            "NodeResourcesBalancedAllocation",
            {
                "resources": [
                    {"name": "cpu"},
                    {"name": "scalar.io/scalar0"},
                    {"name": "scalar.io/scalar1", "weight": 1},
                ]
            },
            {},
            {
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "scalar.io/scalar0", "weight": 1},
                    {"name": "scalar.io/scalar1", "weight": 1},
                ]
            },
        ),
        (
            "PodTopologySpread",
            {
                "defaultConstraints": [
                    {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}
                ],
                "defaultingType": "List",
            },
            {},
            {
                "defaultConstraints": [
                    {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}
                ],
                "defaultingType": "List",
            },
        ),
        (
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "MostAllocated"}},
            {},
            {
                "ignoredResources": [],
                "ignoredResourceGroups": [],
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                },
            },
        ),
        (
            "NodeResourcesFit",
            {
                "ignoredResourceGroups": ["example.com"],
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "cpu", "weight": 0}, {"name": "memory", "weight": 3}],
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                },
            },
            {},
            {
                "ignoredResources": [],
                "ignoredResourceGroups": ["example.com"],
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3}],
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                },
            },
        ),
        ("VolumeBinding", {}, {"StorageCapacityScoring": False}, {"bindTimeoutSeconds": 600}),
        (
            "VolumeBinding",
            {"bindTimeoutSeconds": 0},
            {"StorageCapacityScoring": True},
            {
                "bindTimeoutSeconds": 0,
                "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
            },
        ),
        (
            "DynamicResources",
            {},
            {"DRADeviceBindingConditions": True},
            {"filterTimeout": "10s", "bindingTimeout": "10m0s"},
        ),
        ("DynamicResources", {"filterTimeout": "0s"}, {}, {"filterTimeout": "0s"}),
        ("DynamicResources", {}, {"DRASchedulerFilterTimeout": False}, {}),
        (
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                }
            },
            {},
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                }
            },
        ),
    ],
)
def test_args_defaults(
    plugin: str, args: dict[str, Any], features: dict[str, bool], expected: dict[str, Any]
) -> None:
    p = load(_args(plugin, args), features=features).profiles[0]
    assert p.plugin_args[plugin] == expected


def test_args_with_type_meta_and_unknown_plugins() -> None:
    source = one(
        prof(
            pluginConfig=[
                {
                    "name": "InterPodAffinity",
                    "args": {**V1, "kind": "InterPodAffinityArgs", "hardPodAffinityWeight": 4},
                },
                {"name": "FooPlugin", "args": {"anything": [1, 2]}},
                {"name": "ImageLocality", "args": {"ignored": True}},
                {"name": "BarPlugin"},
            ]
        )
    )
    p = load(source).profiles[0]
    assert p.plugin_args["InterPodAffinity"] == {
        "hardPodAffinityWeight": 4,
        "ignorePreferredTermsOfExistingPods": False,
    }
    assert p.plugin_args["FooPlugin"] == {"anything": [1, 2]}
    assert p.plugin_args["ImageLocality"] == {"ignored": True}
    assert p.plugin_args["BarPlugin"] == {}
    # defaults are still appended for the enabled plugins that were not configured
    assert p.plugin_args["DefaultPreemption"] == DEFAULT_ARGS["DefaultPreemption"]


def test_profiles_and_percentages() -> None:
    source = cfg(
        percentageOfNodesToScore=10,
        parallelism=1,
        podInitialBackoffSeconds=2,
        podMaxBackoffSeconds=20,
        profiles=[
            {"schedulerName": "a", "percentageOfNodesToScore": 50},
            {"schedulerName": "b", "percentageOfNodesToScore": 0},
            {"schedulerName": "c"},
        ],
    )
    c = load(source)
    assert (c.percentage_of_nodes_to_score, c.parallelism) == (10, 1)
    assert (c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds) == (2, 20)
    assert [(p.scheduler_name, p.percentage_of_nodes_to_score) for p in c.profiles] == [
        ("a", 50),
        ("b", 0),
        ("c", None),
    ]
    assert c.profile("b") is c.profiles[1]
    assert c.profile("zzz") is None


# --------------------------------------------------------------------------------------------------
# Plugin args: validation (validation_pluginargs_test.go)

LABEL_KEY_REGEX_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

ARGS_ERROR_CASES = [
    # DefaultPreemption
    (
        "DefaultPreemption",
        {"minCandidateNodesPercentage": -1},
        {},
        [f"{A}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"],
    ),
    (
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 900},
        {},
        [f"{A}.minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"],
    ),
    (
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
        {},
        [f"{A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"],
    ),
    (
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
        {},
        [
            f"{A}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
            f"{A}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
        ],
    ),
    (
        "DefaultPreemption",
        {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
        {},
        [
            f"{A}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
            f"{A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
        ],
    ),
    # InterPodAffinity
    (
        "InterPodAffinity",
        {"hardPodAffinityWeight": -1},
        {},
        [f"{A}.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"],
    ),
    (
        "InterPodAffinity",
        {"hardPodAffinityWeight": 101},
        {},
        [f"{A}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"],
    ),
    # PodTopologySpread
    (
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}
            ],
        },
        {},
        [f"{A}.defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"],
    ),
    (
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
        },
        {},
        [f"{A}.defaultConstraints[0].topologyKey: Required value: can not be empty"],
    ),
    (
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "a/b/c", "whenUnsatisfiable": "DoNotSchedule"}
            ],
        },
        {},
        [
            f"{A}.defaultConstraints[0].topologyKey: Invalid value: \"a/b/c\": a valid label key {LABEL_KEY_REGEX_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ],
    ),
    (
        "PodTopologySpread",
        {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "node"}]},
        {},
        [f"{A}.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"],
    ),
    (
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "unknown action"}
            ],
        },
        {},
        [
            f'{A}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": supported values: "DoNotSchedule", "ScheduleAnyway"'
        ],
    ),
    (
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
            ],
        },
        {},
        [f'{A}.defaultConstraints[1]: Duplicate value: "{{node, DoNotSchedule}}"'],
    ),
    (
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "key",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"a": "b"}},
                }
            ],
        },
        {},
        [
            f"{A}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"
        ],
    ),
    (
        "PodTopologySpread",
        {"defaultingType": "unknown"},
        {},
        [f'{A}.defaultingType: Unsupported value: "unknown": supported values: "System", "List"'],
    ),
    (
        "PodTopologySpread",
        {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": "DoNotSchedule"}]},
        {},
        [f'{A}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
    ),
    # NodeResourcesBalancedAllocation
    (
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]},
        {},
        [f"{A}.resources[0].weight: Invalid value: 2: must be 1"],
    ),
    (
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
        {},
        [f'{A}.resources[1].name: Duplicate value: "cpu"'],
    ),
    # NodeAffinity
    (
        "NodeAffinity",
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}
                            ]
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}
                            ]
                        },
                    }
                ],
            }
        },
        {},
        [
            f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: "
            f'Invalid value: "invalid/label/key": a valid label key {LABEL_KEY_REGEX_MSG} with an optional DNS subdomain '
            "prefix and '/' (e.g. 'example.com/MyName')",
            f"{A}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: "
            'Invalid value: ["node-1","node-2"]: must have one element',
        ],
    ),
    (
        "NodeAffinity",
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {},  # empty terms are skipped
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "Near", "values": ["a"]},
                                {"key": "size", "operator": "Gt", "values": ["big"]},
                            ]
                        },
                    ]
                },
                # weight 0: skipped, even though its term is invalid
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 0, "preference": {"matchFields": [{"key": "x", "operator": "Exists"}]}}
                ],
            }
        },
        {},
        [
            f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[0].operator: "
            'Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
            f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[1].values[0]: "
            "Invalid value: \"big\": for 'Gt', 'Lt' operators, the value must be an integer",
        ],
    ),
    # VolumeBinding
    (
        "VolumeBinding",
        {"bindTimeoutSeconds": -10},
        {},
        [
            f"{A}.bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value"
        ],
    ),
    (
        "VolumeBinding",
        {"shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]},
        {},
        [
            f'{A}.shape: Invalid value: [{{"utilization":1,"score":1}},{{"utilization":3,"score":3}}]: '
            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
        ],
    ),
    (
        "VolumeBinding",
        {"shape": [{"utilization": 3, "score": 3}, {"utilization": 1, "score": 1}]},
        {"StorageCapacityScoring": True},
        [f"{A}.shape[1].utilization: Invalid value: 1: values must be sorted in increasing order"],
    ),
    (
        "VolumeBinding",
        {
            "shape": [
                {"utilization": -1, "score": 1},
                {"utilization": 10, "score": -1},
                {"utilization": 20, "score": 11},
                {"utilization": 101, "score": 1},
            ]
        },
        {"StorageCapacityScoring": True},
        [
            f"{A}.shape[0].utilization: Invalid value: -1: not in valid range [0, 100]",
            f"{A}.shape[1].score: Invalid value: -1: not in valid range [0, 10]",
            f"{A}.shape[2].score: Invalid value: 11: not in valid range [0, 10]",
            f"{A}.shape[3].utilization: Invalid value: 101: not in valid range [0, 100]",
        ],
    ),
    # NodeResourcesFit
    (
        "NodeResourcesFit",
        {"ignoredResources": ["longvalue" + "a" * 64]},
        {},
        [
            f'{A}.ignoredResources[0]: Invalid value: "longvalue{"a" * 64}": name part must be no more than 63 bytes'
        ],
    ),
    (
        "NodeResourcesFit",
        {"ignoredResources": ["example.com/"]},
        {},
        [
            f'{A}.ignoredResources[0]: Invalid value: "example.com/": name part must be non-empty',
            f'{A}.ignoredResources[0]: Invalid value: "example.com/": name part {LABEL_KEY_REGEX_MSG}',
        ],
    ),
    (
        "NodeResourcesFit",
        {"ignoredResourceGroups": ["example.com/aa"]},
        {},
        [
            f"{A}.ignoredResourceGroups[0]: Invalid value: \"example.com/aa\": resource group name can't contain '/'"
        ],
    ),
    (
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 101}, {"name": "memory", "weight": 0}],
            }
        },
        {},
        [
            f"{A}.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"
        ],
    ),
    (
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "Balanced"}},
        {},
        [
            f'{A}.scoringStrategy.type: Unsupported value: "Balanced": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        ],
    ),
    (
        "NodeResourcesFit",
        {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1}]}},
        {},
        [
            f'{A}.scoringStrategy.type: Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        ],
    ),
    (
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {}}},
        {},
        [f"{A}.scoringStrategy.shape: Required value: at least one point must be specified"],
    ),
    (
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [
                        {"utilization": 10, "score": 3},
                        {"utilization": 20, "score": 11},
                        {"utilization": 15, "score": 3},
                    ]
                },
            }
        },
        {},
        [
            f"{A}.scoringStrategy.shape[2].utilization: Invalid value: 15: values must be sorted in increasing order",
            f"{A}.scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]",
        ],
    ),
    # DynamicResources
    (
        "DynamicResources",
        {"filterTimeout": "-1s"},
        {},
        [f'{A}.filterTimeout: Invalid value: "-1s": must be zero or positive'],
    ),
    (
        "DynamicResources",
        {"filterTimeout": "1s"},
        {"DRASchedulerFilterTimeout": False},
        [f"{A}.filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled"],
    ),
    (
        "DynamicResources",
        {"bindingTimeout": "1m"},
        {},
        [
            f"{A}.bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"
        ],
    ),
    (
        "DynamicResources",
        {"bindingTimeout": "500ms"},
        {"DRADeviceBindingConditions": True},
        [f'{A}.bindingTimeout: Invalid value: "500ms": must be at least 1 second'],
    ),
]


@pytest.mark.parametrize(("plugin", "args", "features", "expected"), ARGS_ERROR_CASES)
def test_args_validation(
    plugin: str, args: dict[str, Any], features: dict[str, bool], expected: list[str]
) -> None:
    assert problems(_args(plugin, args), features=features) == expected


@pytest.mark.parametrize(
    ("plugin", "args"),
    [
        ("InterPodAffinity", {"hardPodAffinityWeight": 0}),
        ("InterPodAffinity", {"hardPodAffinityWeight": 100}),
        ("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}),
        ("PodTopologySpread", {"defaultingType": "List"}),
        ("NodeResourcesFit", {"ignoredResources": ["example.com"], "ignoredResourceGroups": ["example.com"]}),
        (
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}},
        ),
        ("VolumeBinding", {"bindTimeoutSeconds": 0}),
        ("DynamicResources", {"filterTimeout": "0s"}),
        (
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "label-1", "operator": "In", "values": ["label-1-val"]}
                                ]
                            }
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["node-1"]}
                                ]
                            },
                        }
                    ],
                }
            },
        ),
    ],
)
def test_valid_args(plugin: str, args: dict[str, Any]) -> None:
    load(_args(plugin, args))


def test_fit_args_checked_only_when_the_plugin_is_built() -> None:
    # validatePluginConfig has no entry for NodeResourcesFit; NewFit validates, so a disabled plugin passes
    bad = {"scoringStrategy": {"type": "Balanced"}}
    source = one(
        prof(
            plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
            pluginConfig=[{"name": "NodeResourcesFit", "args": bad}],
        )
    )
    p = load(source).profiles[0]
    assert "NodeResourcesFit" not in names(p.plugins["filter"])
    with pytest.raises(ConfigError):
        load(_fit(bad))


# --------------------------------------------------------------------------------------------------
# Files


def test_yaml_file(tmp_path: Path) -> None:
    f = tmp_path / "sched.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: bin-packer\n"
        "  pluginConfig:\n"
        "  - name: NodeResourcesFit\n"
        "    args:\n"
        "      scoringStrategy:\n"
        "        type: MostAllocated\n"
    )
    c = load(f)
    assert c.profiles[0].scheduler_name == "bin-packer"
    assert c.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    assert load(str(f)).profiles[0].scheduler_name == "bin-packer"


def test_parse_config_text() -> None:
    assert parse_config_text('{"apiVersion": "v", "kind": "K"}') == {"apiVersion": "v", "kind": "K"}
    assert parse_config_text("") == {}
    with pytest.raises(ConfigError) as info:
        parse_config_text("- a\n- b\n", "inline")
    assert info.value.source == "inline"
    assert "expected an object, got array" in info.value.problems[0]
    with pytest.raises(ConfigError):
        parse_config_text("a: [1,\n")


def test_json_file(tmp_path: Path) -> None:
    f = tmp_path / "sched.json"
    f.write_text(json.dumps(cfg(parallelism=4)))
    assert load(f).parallelism == 4


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    f = tmp_path / "dup.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 1\nparallelism: 2\n"
    )
    with pytest.raises(ConfigError) as info:
        load(f)
    assert 'key "parallelism" already set in map' in info.value.problems[0]
    assert info.value.source == str(f)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path / "nope.yaml")
    assert info.value.problems[0].startswith(f"open {tmp_path / 'nope.yaml'}:")


def test_source_is_not_modified() -> None:
    source = one(prof(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 3}]}}))
    before = copy.deepcopy(source)
    c = load(source)
    assert source == before
    assert c.raw == before


# --------------------------------------------------------------------------------------------------
# Durations


@pytest.mark.parametrize(
    ("text", "seconds", "canonical"),
    [
        ("10s", 10.0, "10s"),
        ("1m30s", 90.0, "1m30s"),
        ("90s", 90.0, "1m30s"),
        ("1.5h", 5400.0, "1h30m0s"),
        ("500ms", 0.5, "500ms"),
        ("0", 0.0, "0s"),
        ("-2s", -2.0, "-2s"),
    ],
)
def test_durations(text: str, seconds: float, canonical: str) -> None:
    assert parse_duration(text) == seconds
    assert format_duration(round(seconds * 1e9)) == canonical


@pytest.mark.parametrize("text", ["", "s", "10", "1x", "1.s.", "--1s"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


# --------------------------------------------------------------------------------------------------
# Conformance scenarios: every configuration loads, and the score plugins and weights are the real ones


def _conformance_dir() -> Path | None:
    for d in (
        Path(__file__).resolve().parents[2] / "conformance" / "fixtures",
        Path("/work/shared/conformance"),
    ):
        if d.is_dir():
            return d
    return None


CONF = _conformance_dir()
SCENARIOS = sorted(p for p in CONF.rglob("*.json") if not p.name.endswith(".expected.json")) if CONF else []


@pytest.mark.skipif(not SCENARIOS, reason="no conformance fixtures")
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_conformance_configs(scenario: Path) -> None:
    data = json.loads(scenario.read_text())
    c = load(data["config"], name=scenario.stem)
    expected_file = scenario.with_name(scenario.stem + ".expected.json")
    if not expected_file.exists():
        return
    expected = json.loads(expected_file.read_text())
    for result in expected["results"]:
        if "scoreWeights" not in result:
            continue
        p = c.profile(result["profile"])
        assert p is not None, result["pod"]
        assert p.score_weights() == result["scoreWeights"], result["pod"]
        skipped = set(result.get("skippedScorePlugins") or [])
        scored = set(result.get("scores") or {})
        assert skipped | scored == set(p.score_weights()), result["pod"]


def test_a_negative_score_weight_is_accepted_as_kube_scheduler_accepts_it() -> None:
    """v1.35.4 validates no score-plugin weight: validation.go has no rule for it, and the framework
    (framework/runtime/framework.go getScoreWeights) only turns 0 into 1 and checks that the weighted
    maximum cannot overflow int64. A negative weight is a penalty, and replays must keep it."""
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": -3}]}},
                }
            ],
        }
    )
    assert cfg.profiles[0].score_weights()["ImageLocality"] == -3
