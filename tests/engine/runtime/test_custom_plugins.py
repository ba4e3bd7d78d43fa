"""Custom plugins: registration (register, --plugin-module, SCHEDVIZ_PLUGIN_MODULES, entry points),
configuration (args defaulted and validated by the class, errors with field paths) and full replays
with the two examples, through the library, the CLI and the web application's startup."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedviz.cli import main
from schedviz.engine import ConfigError, load_config, replay
from schedviz.engine.errors import SchedVizError
from schedviz.engine.explain import explain
from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.loader import Snapshot, load_objects
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.registry import PluginError
from schedviz.engine.trace import ReplayTrace
from schedviz.plugins_examples.gpu_binpack import GpuBinpack
from schedviz.plugins_examples.label_permit import LabelPermit
from tests.engine.builders import container, node, pod

GPU = "nvidia.com/gpu"
GPU_MODULE = "schedviz.plugins_examples.gpu_binpack"
PERMIT_MODULE = "schedviz.plugins_examples.label_permit"


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with no custom plugin registered or discovered; the state is restored after."""
    monkeypatch.setattr(registry, "_extra", {})
    monkeypatch.setattr(registry, "_entry_points", None)
    monkeypatch.delenv(registry.ENV_VAR, raising=False)


def config(profile: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", **profile}],
    }


def only_score(plugin: str, args: dict[str, Any] | None = None, weight: int = 1) -> dict[str, Any]:
    """A configuration whose only Score plugin is ``plugin`` (every default Score plugin disabled)."""
    profile: dict[str, Any] = {
        "plugins": {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": plugin, "weight": weight}]}}
    }
    if args is not None:
        profile["pluginConfig"] = [{"name": plugin, "args": args}]
    return config(profile)


def permit(args: dict[str, Any] | None) -> dict[str, Any]:
    profile: dict[str, Any] = {"plugins": {"permit": {"enabled": [{"name": "LabelPermit"}]}}}
    if args is not None:
        profile["pluginConfig"] = [{"name": "LabelPermit", "args": args}]
    return config(profile)


def gpu_node(name: str, gpus: int | None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return node(
        name, cpu="16", memory="64Gi", labels=labels, extra={GPU: str(gpus)} if gpus is not None else None
    )


def gpu_pod(name: str, gpus: int, created: str) -> dict[str, Any]:
    extra = {GPU: str(gpus)} if gpus else None
    return pod(name, containers=[container(cpu="1", memory="1Gi", extra=extra)], created=created)


GPU_CLUSTER = [
    gpu_node("g8", 8),
    gpu_node("g4", 4),
    gpu_node("g2", 2),
    gpu_node("c0", None),
    gpu_pod("train", 2, "2026-01-01T00:00:00Z"),
    gpu_pod("web", 0, "2026-01-01T00:00:01Z"),
]


def scores(trace: ReplayTrace, pod_key: str, plugin: str) -> dict[str, tuple[int, int]]:
    """node -> (raw, normalized) of ``plugin`` in ``pod_key``'s cycle."""
    cycle = next(c for c in trace.to_dict()["cycles"] if c["pod"] == pod_key)
    return {
        n: (e["scores"][plugin]["raw"], e["scores"][plugin]["normalized"])
        for n, e in cycle["nodes"].items()
        if "scores" in e
    }


def run(objects: list[dict[str, Any]], cfg: dict[str, Any]) -> ReplayTrace:
    return replay(load_objects(objects, config=cfg))


def write(tmp_path: Path, name: str, obj: object) -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(obj))
    return p


def write_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    """A fresh importable module with ``source``; returns its name."""
    name = f"sv_custom_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


# ----- GpuBinpack: Score + NormalizeScore through full replays --------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # free GPUs after placing 2: g8 6, g4 2, g2 0; weight points off per unit beyond the tightest
        (None, {"g8": (6, 40), "g4": (2, 80), "g2": (0, 100)}),
        ({"weight": 30}, {"g8": (6, 0), "g4": (2, 40), "g2": (0, 100)}),
        ({"weight": 100}, {"g8": (6, 0), "g4": (2, 0), "g2": (0, 100)}),
        ({"weight": 1, "resource": GPU}, {"g8": (6, 94), "g4": (2, 98), "g2": (0, 100)}),
    ],
)
def test_gpu_binpack_scores_the_free_gpus_left(args: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    registry.load_module(GPU_MODULE)
    trace = run(GPU_CLUSTER, only_score("GpuBinpack", args))
    got = scores(trace, "default/train", "GpuBinpack")
    assert got == expected  # c0 has no GPU: NodeResourcesFit rejected it, it was not scored
    first = trace.cycles[0]
    assert first.pod == "default/train" and first.selected_node == "g2" and first.result == "Scheduled"


def test_gpu_binpack_keeps_gpu_nodes_for_gpu_pods() -> None:
    registry.load_module(GPU_MODULE)
    trace = run(GPU_CLUSTER, only_score("GpuBinpack", None, weight=3))
    # web asks for no GPU; g2 is full after train, c0 has none
    assert scores(trace, "default/web", "GpuBinpack") == {
        "g8": (8, 20),
        "g4": (4, 60),
        "g2": (0, 100),
        "c0": (0, 100),
    }
    web = trace.to_dict()["cycles"][1]
    assert web["scoreWeights"] == {"GpuBinpack": 3}
    assert web["nodes"]["g4"]["scores"]["GpuBinpack"]["weighted"] == 180
    assert web["tiedNodes"] == ["g2", "c0"] and web["selectedNode"] == "g2"


def test_gpu_binpack_resource_arg() -> None:
    registry.load_module(GPU_MODULE)
    fpga = "example.com/fpga"
    objects = [
        node("f3", extra={fpga: "3"}),
        node("f1", extra={fpga: "1"}),
        pod("p", containers=[container(cpu="100m", extra={fpga: "1"})]),
    ]
    by_fpga = run(objects, only_score("GpuBinpack", {"resource": fpga}))
    assert scores(by_fpga, "default/p", "GpuBinpack") == {"f3": (2, 80), "f1": (0, 100)}
    assert by_fpga.cycles[0].selected_node == "f1"
    # counting GPUs instead, both nodes have none: a tie, the first node wins
    by_gpu = run(objects, only_score("GpuBinpack", {}))
    assert scores(by_gpu, "default/p", "GpuBinpack") == {"f3": (0, 100), "f1": (0, 100)}
    assert by_gpu.cycles[0].selected_node == "f3"


def test_gpu_binpack_alongside_the_default_plugins() -> None:
    """Enabled through multiPoint with a weight, next to every default Score plugin."""
    registry.load_module(GPU_MODULE)
    cfg = config(
        {
            "plugins": {"multiPoint": {"enabled": [{"name": "GpuBinpack", "weight": 50}]}},
            "pluginConfig": [{"name": "GpuBinpack", "args": {"weight": 50}}],
        }
    )
    trace = run(GPU_CLUSTER, cfg)
    first = trace.to_dict()["cycles"][0]
    assert "GpuBinpack" in first["scorePlugins"] and "NodeResourcesFit" in first["scorePlugins"]
    assert first["scoreWeights"]["GpuBinpack"] == 50
    assert first["nodes"]["g2"]["scores"]["GpuBinpack"]["weighted"] == 5000
    assert first["nodes"]["g4"]["scores"]["GpuBinpack"]["normalized"] == 0
    assert first["selectedNode"] == "g2"
    stages = [(s["point"], s["plugin"]) for s in first["stages"]]
    assert ("Score", "GpuBinpack") in stages and ("NormalizeScore", "GpuBinpack") in stages


# ----- LabelPermit: Permit through full replays --------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "allowed"),
    [
        ({"gpu-ready": "true"}, True),
        ({"gpu-ready": ""}, True),  # a key alone matches any value
        ({"accelerator": "nvidia"}, True),
        ({"accelerator": "amd"}, False),  # key=value needs that value
        ({"zone": "a"}, False),
        ({}, False),
    ],
)
def test_label_permit_allow_and_deny(labels: dict[str, str], allowed: bool) -> None:
    registry.load_module(PERMIT_MODULE)
    objects = [node("n1", labels=labels), pod("p", cpu="100m")]
    trace = run(objects, permit({"labels": ["gpu-ready", "accelerator=nvidia"]}))
    c = trace.to_dict()["cycles"][0]
    stage = next(s for s in c["stages"] if s["point"] == "Permit")
    assert stage["plugin"] == "LabelPermit"
    if allowed:
        assert (c["result"], c["selectedNode"], stage["code"]) == ("Scheduled", "n1", "Success")
        assert any(s["point"] == "Bind" for s in c["stages"])
    else:
        assert (c["result"], c["selectedNode"], stage["code"]) == ("Unschedulable", None, "Unschedulable")
        assert stage["reason"] == "node(s) had none of the labels [gpu-ready accelerator=nvidia]"
        assert (
            c["message"]
            == "0/1 nodes are available: 1 node(s) had none of the labels [gpu-ready accelerator=nvidia]."
        )
        assert not any(s["point"] == "Bind" for s in c["stages"])


def test_label_permit_deny_releases_the_node() -> None:
    registry.load_module(PERMIT_MODULE)
    objects = [
        node("n1", cpu="1"),
        pod("big", cpu="1", created="2026-01-01T00:00:00Z"),
        pod("next", cpu="1", created="2026-01-01T00:00:01Z", nodeSelector={"kubernetes.io/hostname": "n1"}),
    ]
    # both pods are denied by Permit; the second still passes NodeResourcesFit on n1
    trace = run(objects, permit({"labels": ["gpu-ready"]}))
    results = [(c.pod, c.result) for c in trace.cycles]
    assert results == [("default/big", "Unschedulable"), ("default/next", "Unschedulable")]
    assert trace.to_dict()["cycles"][1]["nodes"]["n1"]["filter"]["code"] == "Success"


def test_label_permit_wait_mode() -> None:
    registry.load_module(PERMIT_MODULE)
    objects = [node("n1"), pod("p", cpu="100m")]
    trace = run(objects, permit({"labels": ["gpu-ready"], "onMismatch": "Wait", "timeout": "2m"}))
    c = trace.to_dict()["cycles"][0]
    stage = next(s for s in c["stages"] if s["point"] == "Permit")
    assert stage["code"] == "Wait" and stage["reason"] == "node(s) had none of the labels [gpu-ready]"
    assert c["result"] != "Scheduled"
    assert not any(s["point"] == "Bind" for s in c["stages"])


def test_label_permit_returns_its_timeout() -> None:
    registry.load_module(PERMIT_MODULE)
    snap = load_objects([node("n1"), pod("p")])
    cfg = load_config(
        permit({"labels": ["x"], "onMismatch": "Wait", "timeout": "1m30s"}),
    )
    args = cfg.profiles[0].plugin_args["LabelPermit"]
    assert args == {"labels": ["x"], "onMismatch": "Wait", "timeout": "1m30s"}
    plugin = LabelPermit(args, Handle(snap.cluster()))
    state = CycleState(snap.cluster())
    status, timeout = plugin.permit(state, snap.pending[0], "n1")
    assert (status.code, timeout) == (Code.Wait, 90.0)


# ----- the command line ------------------------------------------------------------------------------------


@pytest.fixture
def gpu_files(tmp_path: Path) -> dict[str, Path]:
    cfg = config(
        {
            "plugins": {
                "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "GpuBinpack"}]},
                "permit": {"enabled": [{"name": "LabelPermit"}]},
            },
            "pluginConfig": [{"name": "LabelPermit", "args": {"labels": ["pool=gpu"]}}],
        }
    )
    objects = [
        gpu_node("g8", 8, {"pool": "gpu"}),
        gpu_node("g4", 4, {"pool": "gpu"}),
        gpu_node("g2", 2, {"pool": "batch"}),
        gpu_pod("a", 2, "2026-01-01T00:00:00Z"),
        gpu_pod("b", 1, "2026-01-01T00:00:01Z"),
    ]
    return {
        "snapshot": write(tmp_path, "snap.yaml", {"kind": "List", "items": objects}),
        "config": write(tmp_path, "cfg.yaml", cfg),
    }


def test_cli_replay_with_plugin_modules(
    gpu_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", str(gpu_files["snapshot"]), "--config", str(gpu_files["config"]), "--format", "json"]
    assert main([*argv, "--plugin-module", GPU_MODULE, "--plugin-module", PERMIT_MODULE]) == 0
    cycles = json.loads(capsys.readouterr().out)["cycles"]
    # a: g2 is the tightest but its pool is batch: Permit denies it
    assert (cycles[0]["pod"], cycles[0]["result"]) == ("default/a", "Unschedulable")
    assert cycles[0]["message"] == "0/1 nodes are available: 1 node(s) had none of the labels [pool=gpu]."
    # b: 1 GPU; g2 is still free (a was not placed): denied again
    assert cycles[1]["result"] == "Unschedulable"
    assert cycles[1]["nodes"]["g2"]["scores"]["GpuBinpack"] == {"raw": 1, "normalized": 100, "weighted": 100}


def test_cli_reads_the_environment_variable(
    gpu_files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(registry.ENV_VAR, f"{GPU_MODULE}, {PERMIT_MODULE}:LabelPermit")
    assert main(["replay", str(gpu_files["snapshot"]), "--config", str(gpu_files["config"])]) == 0
    out = capsys.readouterr().out
    assert "node(s) had none of the labels [pool=gpu]" in out and "GpuBinpack=100" in out


def test_cli_without_the_module_names_the_unknown_plugin(
    gpu_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", str(gpu_files["snapshot"]), "--config", str(gpu_files["config"])]
    assert main([*argv, "--plugin-module", PERMIT_MODULE]) == 2
    err = capsys.readouterr().err
    assert (
        'profiles[0].plugins.score.enabled[0].name: Not found: "GpuBinpack": '
        'unknown plugin (ScorePlugin "GpuBinpack" does not exist)'
    ) in err


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("no_such_module_xyz", "plugin module 'no_such_module_xyz': no module named 'no_such_module_xyz'"),
        ("json", "plugin module 'json' registers no plugin"),
        (f"{GPU_MODULE}:Nope", f"module '{GPU_MODULE}' has no attribute 'Nope'"),
        (f"{GPU_MODULE}:NAME", "'GpuBinpack' is not a class"),
        ("not a module", "expected a dotted module name"),
    ],
)
def test_cli_bad_plugin_module(
    gpu_files: dict[str, Path], capsys: pytest.CaptureFixture[str], spec: str, fragment: str
) -> None:
    assert main(["replay", str(gpu_files["snapshot"]), "--plugin-module", spec]) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedviz: error: ") and fragment in err and "Traceback" not in err


def test_cli_explain_and_report(
    gpu_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugins = ["--plugin-module", GPU_MODULE, "--plugin-module", PERMIT_MODULE]
    snap, cfg = str(gpu_files["snapshot"]), str(gpu_files["config"])
    assert main(["explain", snap, "--config", cfg, "--pod", "default/a", "--format", "json", *plugins]) == 0
    ex = json.loads(capsys.readouterr().out)
    gpu = ex["winner"]["runnerUp"]["plugins"]["GpuBinpack"]
    assert ex["winner"]["node"] == "g2" and ex["winner"]["runnerUp"]["node"] == "g4"
    assert (gpu["winnerRaw"], gpu["otherRaw"], gpu["winner"], gpu["other"]) == (0, 2, 100, 80)
    out = tmp_path / "report.json"
    assert main(["report", "--snapshot", snap, "--config", cfg, "--local", "--json", str(out), *plugins]) == 0
    report = json.loads(out.read_text())
    assert [(p["pod"], p["result"]) for p in report["pods"]] == [
        ("default/a", "Unschedulable"),
        ("default/b", "Unschedulable"),
    ]
    registry.unregister("GpuBinpack")  # plugins stay registered for the process: forget one
    assert main(["report", "--snapshot", snap, "--config", cfg, "--local", "--json", str(out)]) == 2
    assert 'unknown plugin (ScorePlugin "GpuBinpack" does not exist)' in capsys.readouterr().err


# ----- configuration: args defaulted and validated by the class ------------------------------------------


def load(cfg: dict[str, Any]) -> Any:
    return load_config(cfg)


def problems(cfg: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load(cfg)
    return info.value.problems


def test_args_are_defaulted_when_given_and_when_absent() -> None:
    registry.load_modules([GPU_MODULE, PERMIT_MODULE])
    cfg = load(only_score("GpuBinpack", {"weight": 7}))
    assert cfg.profiles[0].plugin_args["GpuBinpack"] == {"resource": GPU, "weight": 7}
    cfg = load(only_score("GpuBinpack"))
    assert cfg.profiles[0].plugin_args["GpuBinpack"] == {"resource": GPU, "weight": 10}
    cfg = load(
        config(
            {
                "plugins": {"score": {"enabled": [{"name": "GpuBinpack"}]}},
                "pluginConfig": [{"name": "GpuBinpack"}],
            }
        )
    )
    assert cfg.profiles[0].plugin_args["GpuBinpack"] == {"resource": GPU, "weight": 10}


@pytest.mark.parametrize(
    ("cfg", "expected"),
    [
        (
            only_score("GpuBinpack", {"weight": 0}),
            [
                "profiles[0].pluginConfig[0].args.weight: Invalid value: 0: must be an integer between 1 and 100"
            ],
        ),
        (
            only_score("GpuBinpack", {"weight": "heavy", "resource": "", "colour": "red"}),
            [
                "profiles[0].pluginConfig[0].args.colour: Forbidden: unknown field (known fields: resource, weight)",
                "profiles[0].pluginConfig[0].args.resource: Required value: a resource name such as nvidia.com/gpu",
                'profiles[0].pluginConfig[0].args.weight: Invalid value: "heavy": must be an integer between 1 and 100',
            ],
        ),
        (
            only_score("GpuBinpack", {"resource": "a/b/c"}),
            [
                'profiles[0].pluginConfig[0].args.resource: Invalid value: "a/b/c": a valid label key must consist of '
                "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"
            ],
        ),
        (
            only_score("GpuBinpack", ["weight", 3]),  # type: ignore[arg-type]
            [
                'profiles[0].pluginConfig[0].args: Invalid value: ["weight",3]: args of plugin "GpuBinpack" must be an object'
            ],
        ),
        (
            permit({"labels": ["ok", 5, "bad key"], "onMismatch": "Later", "timeout": "soon"}),
            [
                "profiles[0].pluginConfig[0].args.labels[1]: Invalid value: 5: must be a string",
                'profiles[0].pluginConfig[0].args.labels[2]: Invalid value: "bad key": name part must consist of '
                "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                'profiles[0].pluginConfig[0].args.onMismatch: Unsupported value: "Later": supported values: "Deny", "Wait"',
                'profiles[0].pluginConfig[0].args.timeout: Invalid value: "soon": time: invalid duration "soon"',
            ],
        ),
        (
            permit({"labels": ["x"], "timeout": "16m"}),
            [
                'profiles[0].pluginConfig[0].args.timeout: Invalid value: "16m": must be greater than 0s and at most 15m'
            ],
        ),
        (
            # enabled without a pluginConfig entry, but its args have a required field
            permit(None),
            [
                'profiles[0].pluginConfig: Required value: args of plugin "LabelPermit": '
                "labels: Required value: at least one label key or key=value"
            ],
        ),
    ],
)
def test_bad_args_name_the_field_path(cfg: dict[str, Any], expected: list[str]) -> None:
    registry.load_modules([GPU_MODULE, PERMIT_MODULE])
    assert problems(cfg) == expected


def test_bad_args_are_reported_with_other_problems() -> None:
    registry.load_modules([GPU_MODULE])
    cfg = only_score("GpuBinpack", {"weight": 101})
    cfg["parallelism"] = 0
    assert problems(cfg) == [
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
        "profiles[0].pluginConfig[0].args.weight: Invalid value: 101: must be an integer between 1 and 100",
    ]


def test_args_of_a_plugin_that_is_not_enabled_are_not_checked() -> None:
    """Upstream builds (and decodes the args of) enabled plugins only."""
    registry.load_modules([GPU_MODULE])
    cfg = config({"pluginConfig": [{"name": "GpuBinpack", "args": {"weight": 0}}]})
    assert load(cfg).profiles[0].plugin_args["GpuBinpack"] == {"weight": 0}


def test_args_pass_through_when_the_table_is_a_plain_mapping() -> None:
    registry.load_modules([GPU_MODULE])
    table = dict(registry.implements_table())
    cfg = load_config(only_score("GpuBinpack", {"weight": 5}), implements=table)
    assert cfg.profiles[0].plugin_args["GpuBinpack"] == {"weight": 5}


def test_a_failing_hook_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = write_module(
        tmp_path,
        monkeypatch,
        """
        from schedviz.engine.runtime.registry import register

        @register
        class Fragile:
            name = "Fragile"
            def __init__(self, args, handle): pass
            @staticmethod
            def default_args(args):
                return {"limit": 10 // args.get("divisor", 1)}
            @classmethod
            def validate_args(cls, args):
                return "not a list" if args["limit"] == 5 else []
            def filter(self, state, pod, nodes): raise AssertionError
        """,
    )
    assert registry.load_module(module) == ["Fragile"]
    profile = {"plugins": {"filter": {"enabled": [{"name": "Fragile"}]}}}
    assert problems(config({**profile, "pluginConfig": [{"name": "Fragile", "args": {"divisor": 0}}]})) == [
        'profiles[0].pluginConfig[0].args: default_args of plugin "Fragile" failed: '
        "ZeroDivisionError: integer division or modulo by zero"
    ]
    assert problems(config({**profile, "pluginConfig": [{"name": "Fragile", "args": {"divisor": 2}}]})) == [
        'profiles[0].pluginConfig[0].args: validate_args of plugin "Fragile" must return a list of messages'
    ]
    assert load(config(profile)).profiles[0].plugin_args["Fragile"] == {"limit": 10}


# ----- the plugin class contract ----------------------------------------------------------------------------


class _Base:
    def __init__(self, args: dict[str, Any], handle: Any) -> None:
        pass


def _cls(name: str | None = "Custom", **members: Any) -> type:
    body = dict(members)
    if name is not None:
        body["name"] = name
    return type("Custom", (_Base,), body)


def _filter(self: Any, state: Any, pod: Any, nodes: Any) -> Any:
    raise AssertionError


@pytest.mark.parametrize(
    ("cls", "fragment"),
    [
        (_cls(None, filter=_filter), "has no `name` class attribute"),
        (_cls("", filter=_filter), "has no `name` class attribute"),
        (_cls("*", filter=_filter), "`name` '*' cannot be a plugin name"),
        (_cls(), "implements no extension point (define at least one of"),
        (_cls(score=lambda self, state, pod: None), "score() must accept (state, pod, nodes) besides self"),
        (
            _cls(filter=_filter, normalize_score=lambda self, s, p, n: None),
            "normalize_score() must accept (state, pod, nodes, scores) besides self",
        ),
        (_cls(normalize_score=lambda self, s, p, n, x: None), "defines normalize_score() without score()"),
        (
            _cls(reserve=lambda self, s, p, n: None),
            "defines reserve() but not unreserve() (the reserve extension point needs both)",
        ),
        (
            _cls(filter=_filter, default_args=lambda self, args: args),
            "default_args must be a staticmethod or classmethod",
        ),
        (_cls(filter=_filter, validate_args=staticmethod(lambda: [])), "validate_args() must accept (args)"),
        (_cls(filter=_filter, permit=3), "`permit` is not a method"),
        (
            type("NoInit", (), {"name": "NoInit", "filter": _filter}),
            "its constructor must accept (args, handle)",
        ),
        (_cls("NodeName", filter=_filter), 'a plugin named "NodeName" already exists (in-tree)'),
    ],
)
def test_register_rejects_a_bad_class(cls: type, fragment: str) -> None:
    with pytest.raises(PluginError) as info:
        registry.register(cls)
    assert fragment in str(info.value)
    assert registry.custom() == {}


def test_register_accepts_every_call_style() -> None:
    ok = _cls(
        "Custom",
        filter=_filter,
        pre_filter=lambda self, *args: None,  # *args binds anything
        bind=staticmethod(lambda state, pod, node: None),
        validate_args=classmethod(lambda cls, args: []),
    )
    assert registry.register(ok) is ok
    assert registry.register(ok) is ok  # again: nothing happens
    assert registry.implements_table()["Custom"] == frozenset({"filter", "preFilter", "bind"})
    other = type("Elsewhere", (_Base,), {"name": "Custom", "filter": _filter})
    with pytest.raises(PluginError, match='a plugin named "Custom" already exists'):
        registry.register(other)
    registry.unregister("Custom")
    assert "Custom" not in registry.implements_table()


def test_the_examples_follow_the_contract() -> None:
    assert registry.check_plugin_class(GpuBinpack) == []
    assert registry.check_plugin_class(LabelPermit) == []
    assert registry.points_of(GpuBinpack) == frozenset({"score"})
    assert registry.points_of(LabelPermit) == frozenset({"permit"})


def test_a_module_with_a_bad_class_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = write_module(
        tmp_path,
        monkeypatch,
        """
        from schedviz.engine.runtime.registry import register

        @register
        class Nameless:
            def __init__(self, args, handle): pass
            def filter(self, state, pod, nodes): return None
        """,
    )
    with pytest.raises(PluginError) as info:
        registry.load_module(module)
    assert str(info.value).startswith(
        f"plugin module '{module}': plugin class {module}.Nameless: has no `name`"
    )
    snap = write(tmp_path, "s.yaml", {"kind": "List", "items": [node("a")]})
    assert main(["replay", str(snap), "--plugin-module", module]) == 2
    assert "has no `name` class attribute" in capsys.readouterr().err


def test_load_module_is_idempotent_and_survives_unregister() -> None:
    assert registry.load_module(GPU_MODULE) == ["GpuBinpack"]
    assert registry.load_module(GPU_MODULE) == ["GpuBinpack"]
    registry.unregister("GpuBinpack")
    assert registry.load_module(GPU_MODULE) == ["GpuBinpack"]  # the module is imported already
    assert registry.load_module(f"{PERMIT_MODULE}:LabelPermit") == ["LabelPermit"]
    assert registry.load_modules(["", "schedviz.plugins_examples"]) == ["GpuBinpack", "LabelPermit"]


# ----- entry points ---------------------------------------------------------------------------------------


def install_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, source: str) -> str:
    """A distribution on sys.path with one ``schedviz.plugins`` entry point; returns the module name."""
    module = write_module(tmp_path, monkeypatch, source)
    dist = tmp_path / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[schedviz.plugins]\n{line.format(module=module)}\n")
    registry.rediscover()
    return module


ZONE_FILTER = """
    from schedviz.engine.framework import Code, Verdicts

    class ZoneOnly:
        '''Filter: only nodes labelled zone=a (no register call: the entry point is enough).'''
        name = "ZoneOnly"
        def __init__(self, args, handle):
            self.zone = args.get("zone", "a")
        def filter(self, state, pod, nodes):
            ok = state.cluster.label("zone").equals(self.zone)[nodes]
            return Verdicts.from_mask(~ok, Code.UnschedulableAndUnresolvable, "node(s) not in the zone")
"""


def test_entry_point_plugin_replays_without_loading_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_entry_point(tmp_path, monkeypatch, "ZoneOnly = {module}:ZoneOnly", ZONE_FILTER)
    assert "ZoneOnly" in registry.known() and registry.custom() == {}  # discovered, not imported yet
    objects = [node("a1", labels={"zone": "b"}), node("a2", labels={"zone": "a"}), pod("p", cpu="100m")]
    cfg = config({"plugins": {"filter": {"enabled": [{"name": "ZoneOnly"}]}}})
    trace = run(objects, cfg)
    c = trace.to_dict()["cycles"][0]
    assert c["selectedNode"] == "a2"
    assert c["nodes"]["a1"]["filter"] == {
        "code": "UnschedulableAndUnresolvable",
        "plugin": "ZoneOnly",
        "reasons": ["node(s) not in the zone"],
    }
    assert "ZoneOnly" in registry.custom()


def test_entry_point_name_must_be_the_plugin_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_entry_point(tmp_path, monkeypatch, "Zone = {module}:ZoneOnly", ZONE_FILTER)
    with pytest.raises(
        PluginError, match='the class is named "ZoneOnly"; the entry point name must be the plugin name'
    ):
        registry.load_entry_points()
    cfg = config({"plugins": {"filter": {"enabled": [{"name": "Zone"}]}}})
    with pytest.raises(SchedVizError, match="entry point"):
        load(cfg)


def test_broken_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_entry_point(tmp_path, monkeypatch, "Broken = {module}:Missing", "X = 1\n")
    with pytest.raises(
        PluginError, match=r'entry point "Broken = .*:Missing" \(group schedviz.plugins\): cannot load it'
    ):
        registry.load_entry_points()
    # a configuration that does not use it is not affected
    assert load(config({})).profiles[0].scheduler_name == "default-scheduler"


# ----- the web application ---------------------------------------------------------------------------------


def test_web_app_loads_the_modules_at_startup(settings: Any) -> None:
    from django.apps import apps
    from django.core.exceptions import ImproperlyConfigured

    app = apps.get_app_config("replays")
    settings.SCHEDVIZ_PLUGIN_MODULES = [GPU_MODULE, f"{PERMIT_MODULE}:LabelPermit"]
    app.ready()
    assert set(registry.custom()) == {"GpuBinpack", "LabelPermit"}
    settings.SCHEDVIZ_PLUGIN_MODULES = ["no_such_module_xyz"]
    with pytest.raises(
        ImproperlyConfigured, match="custom scheduler plugins: plugin module 'no_such_module_xyz'"
    ):
        app.ready()


def test_settings_read_the_environment_variable() -> None:
    code = "import schedviz.settings as s; print(s.SCHEDVIZ_PLUGIN_MODULES)"
    env = {"SCHEDVIZ_PLUGIN_MODULES": f" {GPU_MODULE} ,, {PERMIT_MODULE}:LabelPermit", "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[3],
    ).stdout
    assert out.strip() == repr([GPU_MODULE, f"{PERMIT_MODULE}:LabelPermit"])


def test_library_explain_with_a_custom_plugin() -> None:
    registry.load_module(GPU_MODULE)
    snap: Snapshot = load_objects(GPU_CLUSTER[:5])
    cfg = load(only_score("GpuBinpack", {"weight": 25}))
    ex = explain(snap, "default/train", config=cfg).to_dict()
    assert ex["winner"]["node"] == "g2"
    assert ex["winner"]["runnerUp"]["plugins"]["GpuBinpack"]["other"] == 50


class _NeedsLabel:
    """Filter: nodes need label ``team=ml``; its diagnosis says so and suggests nothing it can check
    on the pod, and a node change (uncordon) for cordoned nodes."""

    name = "example.com/NeedsLabel"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Any, nodes: Any) -> Any:
        from schedviz.engine.framework import Verdicts

        ok = state.cluster.label("team").equals("ml")[nodes]
        return Verdicts.from_mask(~ok, Code.UnschedulableAndUnresolvable, "node(s) lack team=ml")

    def diagnose(self, ctx: Any, pod: Any, nodes: Any, reasons: tuple[str, ...]) -> Any:
        from schedviz.engine.framework.diagnosis import Diagnosis

        names = [ctx.cluster.names[int(i)] for i in nodes]
        return [Diagnosis(nodes, f"{len(names)} node(s) without team=ml", {"nodes": names}, None)]


def test_explain_asks_a_custom_plugin_for_its_diagnosis() -> None:
    """The diagnosis hook is the same for custom and in-tree plugins (framework/diagnosis.py)."""
    registry.register(_NeedsLabel)
    assert registry.check_plugin_class(_NeedsLabel) == []
    snap: Snapshot = load_objects([node("a", labels={"team": "ml"}), node("b"), pod("p", cpu="1")])
    cfg = load(config({"plugins": {"filter": {"enabled": [{"name": _NeedsLabel.name}]}}}))
    ex = explain(snap, "default/p", config=cfg).to_dict()
    assert ex["winner"]["node"] == "a"
    (fix,) = ex["fixes"]
    assert (fix["plugin"], fix["diagnosis"], fix["details"]) == (
        _NeedsLabel.name,
        "1 node(s) without team=ml",
        {"nodes": ["b"]},
    )
    assert fix["change"] is None


def test_a_diagnose_hook_with_the_wrong_parameters_is_refused() -> None:
    class Bad(_NeedsLabel):
        name = "example.com/Bad"

        def diagnose(self, ctx: Any) -> Any:  # type: ignore[override]
            return None

    assert any("diagnose() must accept (ctx, pod, nodes, reasons)" in p for p in registry.check_plugin_class(Bad))


class _Typed:
    """A custom plugin whose args have a type, as in-tree plugins' do (plugin_args.obj)."""

    name = "example.com/Typed"
    args_type = ("obj", "v1.TypedArgs", {"limit": "int32"})

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.limit = args["limit"]

    @staticmethod
    def default_args(args: dict[str, Any], features: Any = None) -> dict[str, Any]:
        assert features is not None and "StorageCapacityScoring" in features
        return {"limit": 3, **args}

    def score(self, state: CycleState, pod: Any, nodes: Any) -> Any:
        import numpy as np

        return np.full(len(nodes), self.limit, dtype=np.int64)


def test_a_custom_plugin_may_declare_typed_args() -> None:
    """args_type: decoded strictly (unknown fields and wrong types are errors), then defaulted with the
    feature gates in force, exactly as an in-tree plugin's args."""
    registry.register(_Typed)
    cfg = load(only_score(_Typed.name))
    assert cfg.profiles[0].plugin_args[_Typed.name] == {"limit": 3}
    assert sorted(problems(only_score(_Typed.name, {"limit": "x", "other": 1}))) == [
        "json: cannot unmarshal string into Go struct field profiles[0].pluginConfig[0].args.limit of type int32",
        'strict decoding error: unknown field "profiles[0].pluginConfig[0].args.other"',
    ]


class _OutOfRange:
    """Scores each node by its position times ``step`` (``args``): past 100 on the third node with a
    step of 40."""

    name = "test.schedviz/OutOfRange"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.step = int(args.get("step", 40))

    def score(self, state: CycleState, pod: Any, nodes: Any) -> Any:
        import numpy as np

        return np.asarray(nodes, dtype=np.int64) * self.step


@pytest.mark.parametrize(("step", "bad"), [(40, 120), (-7, -7)])
def test_a_score_out_of_range_ends_the_cycle_naming_the_plugin_and_the_first_bad_score(step: int, bad: int) -> None:
    """framework.go RunScorePlugins: a normalized score outside [0, 100] is an error naming the
    plugin and the first such score, in node order; the plugins scored before it do not matter."""
    registry.register(_OutOfRange)
    cfg = config(
        {
            "plugins": {"score": {"enabled": [{"name": _OutOfRange.name, "weight": 1}]}},
            "pluginConfig": [{"name": _OutOfRange.name, "args": {"step": step}}],
        }
    )
    snap = load_objects([node(f"n{i}") for i in range(4)] + [pod("p", cpu="100m")], None, "t")
    trace = replay(snap, load_config(cfg))
    (rec,) = trace.cycles
    assert rec.result == "Error"
    assert rec.message == (
        f'applying score defaultWeights on Score plugins: plugin "{_OutOfRange.name}" returns an invalid '
        f"score {bad}, it should in the range of [0, 100] after normalizing"
    )
