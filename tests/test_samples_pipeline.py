"""The pipeline scenarios of schedviz/samples/pipeline/, replayed as their README says.

Each scenario's expected outcome is the one its comments describe, derived from kube-scheduler's
rules: DefaultPreemption's candidate order (fewest PDB violations first, then the lowest
most-important victim), Coscheduling's Permit quorum and timeout, the extender wire protocol
(scores x MaxNodeScore/MaxExtenderPriority x weight), the example plugins' documented arithmetic,
and the API server's binding conflict and the kubelet's admission in the race.
"""

from __future__ import annotations

import json
import re
import runpy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schedviz.cli import main
from schedviz.engine import load_config, load_paths
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.replay import Replay

PIPELINE = Path(__file__).resolve().parent.parent / "schedviz" / "samples" / "pipeline"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--format", "json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def replay_json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    cycles: list[dict[str, Any]] = run_json(capsys, "replay", *argv)["cycles"]
    return cycles


def summary(cycles: list[dict[str, Any]]) -> list[tuple[str, str, str, str | None]]:
    return [(c["kind"], c["pod"], c["result"], c["selectedNode"]) for c in cycles]


def stage(cycle: dict[str, Any], point: str, plugin: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in cycle["stages"] if s["point"] == point and s["plugin"] == plugin)
    return found


def test_the_readme_lists_every_scenario() -> None:
    text = (PIPELINE / "README.md").read_text()
    for path in (
        "preemption.yaml",
        "gang.yaml",
        "gang-config.yaml",
        "extender/server.py",
        "extender/cluster.yaml",
        "extender/config.yaml",
        "custom-plugin/cluster.yaml",
        "custom-plugin/config.yaml",
        "race/cluster.yaml",
        "race/scheduler-alpha.yaml",
        "race/scheduler-beta.yaml",
    ):
        assert (PIPELINE / path).is_file(), path
        assert f"schedviz/samples/pipeline/{path}" in text, path
    assert "schedviz/samples/pipeline/README.md" in (PIPELINE.parents[2] / "README.md").read_text()


# ----- preemption with a PodDisruptionBudget ----------------------------------------------------------


def test_preemption_picks_the_node_whose_victims_violate_no_pdb(capsys: pytest.CaptureFixture[str]) -> None:
    cycles = replay_json(capsys, str(PIPELINE / "preemption.yaml"))
    assert summary(cycles) == [
        ("Scheduling", "default/payments-api", "Unschedulable", None),
        ("Scheduling", "default/payments-api", "Scheduled", "node-b"),
    ]
    first, retry = cycles
    # 3 CPU wanted; node-a has 1 free, node-b 0
    assert first["messageBeforePostFilter"] == "0/2 nodes are available: 2 Insufficient cpu."
    assert first["attempt"] == 1
    assert first["nominatedNode"] == "node-b"
    assert stage(first, "PostFilter", "DefaultPreemption")["code"] == "Success"
    post = first["postFilter"]
    assert post["nominatedNodeName"] == "node-b"
    # both 2-CPU report pods must go: with one back, only 2 CPU would be free
    assert post["victims"] == ["default/report-1", "default/report-2"]
    candidates = {c["node"]: (c["victims"], c["pdbViolations"], c["result"]) for c in post["candidates"]}
    assert candidates == {
        "node-b": (["default/report-1", "default/report-2"], 0, "selected"),
        "node-a": (["default/cache-0"], 1, "more PDB violations"),
    }
    t = first["time"]
    assert [(e["pod"], e["node"], e["preemptor"], e["time"]) for e in first["evictions"]] == [
        ("default/report-1", "node-b", "default/payments-api", t),
        ("default/report-2", "node-b", "default/payments-api", t),
    ]
    # the retry judges the nominated node alone and takes it without scoring
    assert retry["attempt"] == 2
    assert retry["time"] > t
    assert retry["triedNominatedNode"] == "node-b"
    assert (retry["evaluatedNodes"], retry["scored"]) == (1, False)
    assert "evictions" not in retry
    assert stage(retry, "Bind", "DefaultBinder")["code"] == "Success"


def test_without_the_pdb_the_lower_priority_victim_wins() -> None:
    # The counterfactual the scenario's comment states: node-a's only victim (priority 100) is less
    # important than node-b's (500), so without the budget node-a is the candidate picked.
    snap = load_paths([PIPELINE / "preemption.yaml"])
    snap.objects = [o for o in snap.objects if o.kind != "PodDisruptionBudget"]
    trace = Replay(snap, load_config(None, implements=registry.implements_table())).run()
    first, retry = trace.cycles
    assert first.nominated_node == "node-a"
    assert [e.pod for e in first.evictions] == ["default/cache-0"]
    assert (retry.result, retry.selected_node) == ("Scheduled", "node-a")


def test_preemption_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(PIPELINE / "preemption.yaml")]) == 0
    out = capsys.readouterr().out
    assert "nominated to node-b" in out
    assert "evicted default/report-1 from node-b" in out
    assert "evicted default/report-2 from node-b" in out
    assert "(attempt 2)" in out


# ----- gangs (Coscheduling) ---------------------------------------------------------------------------


def gang_cycles(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return replay_json(capsys, str(PIPELINE / "gang.yaml"), "--config", str(PIPELINE / "gang-config.yaml"))


def test_a_gang_binds_together(capsys: pytest.CaptureFixture[str]) -> None:
    cycles = gang_cycles(capsys)
    train = [c for c in cycles if c["pod"].startswith("ml/train-")]
    assert [(c["kind"], c["pod"], c["result"]) for c in train] == [
        ("Scheduling", "ml/train-0", "Waiting"),
        ("Scheduling", "ml/train-1", "Waiting"),
        ("Scheduling", "ml/train-2", "Scheduled"),
        ("Binding", "ml/train-0", "Scheduled"),
        ("Binding", "ml/train-1", "Scheduled"),
    ]
    w0, w1, last, b0, b1 = train
    for waiting in (w0, w1):
        assert waiting["selectedNode"] is not None
        assert stage(waiting, "Permit", "Coscheduling")["code"] == "Wait"
        # no scheduleTimeoutSeconds on the group: the plugin's permitWaitingTimeSeconds
        assert [(e["action"], e["plugin"], e["timeoutSeconds"]) for e in waiting["permitEvents"]] == [
            ("Wait", "Coscheduling", 60)
        ]
    # the third member completes the quorum of 3 and allows its waiting siblings
    assert stage(last, "Permit", "Coscheduling")["code"] == "Success"
    assert [(e["action"], e["pod"], e["plugin"]) for e in last["permitEvents"]] == [
        ("Allow", "ml/train-0", "Coscheduling"),
        ("Allow", "ml/train-1", "Coscheduling"),
    ]
    # their binding cycles end at that moment, on the nodes they were reserved on
    for binding, waiting in ((b0, w0), (b1, w1)):
        assert binding["follows"] == waiting["seq"]
        assert binding["time"] == last["time"]
        assert binding["selectedNode"] == waiting["selectedNode"]
        assert stage(binding, "Bind", "DefaultBinder")["code"] == "Success"


def test_a_gang_that_cannot_complete_times_out_and_releases_its_reservations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cycles = gang_cycles(capsys)
    etl = [c for c in cycles if c["pod"].startswith("ml/etl-")]
    assert [(c["kind"], c["pod"], c["result"]) for c in etl] == [
        ("Scheduling", "ml/etl-0", "Waiting"),
        ("Scheduling", "ml/etl-1", "Waiting"),
        ("Scheduling", "ml/etl-2", "NotHandled"),
        ("Binding", "ml/etl-0", "Unschedulable"),
        ("Binding", "ml/etl-1", "Unschedulable"),
    ]
    w0, w1, _, r0, r1 = etl
    for waiting in (w0, w1):
        # the PodGroup's scheduleTimeoutSeconds wins over permitWaitingTimeSeconds
        assert [(e["action"], e["timeoutSeconds"]) for e in waiting["permitEvents"]] == [("Wait", 10)]
    # etl-0 waited first, so its deadline comes first: 10 s after its cycle
    assert r0["time"] == pytest.approx(w0["time"] + 10)
    assert r1["time"] == r0["time"]
    assert (r0["follows"], r1["follows"]) == (w0["seq"], w1["seq"])
    assert r0["message"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Coscheduling."
    )
    # etl-0's Unreserve rejects the sibling still waiting
    assert r1["message"] == "0/1 nodes are available: 1 rejection in Unreserve."
    assert [(e["action"], e["pod"], e["message"]) for e in r0["permitEvents"]] == [
        ("Reject", "ml/etl-0", "rejected due to timeout after waiting 10s at plugin Coscheduling"),
        ("Reject", "ml/etl-1", "rejection in Unreserve"),
    ]
    for rec in (r0, r1):
        assert rec["selectedNode"] is None
        assert stage(rec, "Unreserve", "Coscheduling")["code"] == "Success"
    assert etl[2]["error"] == ('no profile for schedulerName "batch-scheduler"')


def test_the_timed_out_gang_holds_nothing_afterwards() -> None:
    snap = load_paths([PIPELINE / "gang.yaml"])
    config = load_config(str(PIPELINE / "gang-config.yaml"), implements=registry.implements_table())
    rp = Replay(snap, config)
    rp.run()
    placed = {p.name: rp.cluster.node_of(p) for p in snap.pods}
    assert all(placed[f"train-{i}"] is not None for i in range(3))
    assert all(placed[f"etl-{i}"] is None for i in range(3))
    # only the three 1-CPU train pods are left on the nodes
    assert int(rp.cluster.pod_count.sum()) == 3
    assert len(rp.waiting) == 0


# ----- an HTTP extender --------------------------------------------------------------------------------


@pytest.fixture
def extender_config(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """extender/server.py on a free port, and a copy of extender/config.yaml pointing at it."""
    proc = subprocess.Popen(
        [sys.executable, str(PIPELINE / "extender" / "server.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.fullmatch(r"extender listening on (http://127\.0\.0\.1:(\d+)/scheduler)\n", line)
        assert m, line
        url, port = m.group(1), m.group(2)
        text = (PIPELINE / "extender" / "config.yaml").read_text()
        assert "http://127.0.0.1:8888/scheduler" in text
        config = tmp_path / "config.yaml"
        config.write_text(text.replace("127.0.0.1:8888", f"127.0.0.1:{port}"))
        yield url, str(config)
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_extender_filters_and_prioritizes(
    capsys: pytest.CaptureFixture[str], extender_config: tuple[str, str]
) -> None:
    url, config = extender_config
    cycles = replay_json(capsys, str(PIPELINE / "extender" / "cluster.yaml"), "--config", config)
    assert [(c["pod"], c["result"], c["selectedNode"]) for c in cycles] == [
        ("default/web", "Scheduled", "node-2"),
        ("default/pinned", "Unschedulable", None),
    ]
    web, pinned = cycles
    filt = stage(web, "Filter", url)
    assert filt["code"] == "Success"
    assert filt["details"]["extender"] == "filter"
    nodes = web["nodes"]
    assert nodes["node-1"]["filter"] == {
        "code": "Unschedulable",
        "plugin": url,
        "reasons": ["node is under maintenance"],
    }
    # the extender's column: raw 0-10, normalized x10, weighted x weight 2
    assert url in web["scorePlugins"]
    assert web["scoreWeights"][url] == 2
    assert nodes["node-2"]["scores"][url] == {"raw": 10, "normalized": 100, "weighted": 200}
    for name in ("node-3", "node-4"):
        assert nodes[name]["scores"][url] == {"raw": 0, "normalized": 0, "weighted": 0}
        # identical nodes otherwise: the extender's 200 points make the difference
        assert nodes["node-2"]["total"] - nodes[name]["total"] == 200
    assert stage(web, "Score", url)["code"] == "Success"
    # pinned: NodeAffinity rejects three nodes, the extender the fourth
    assert pinned["messageBeforePostFilter"] == (
        "0/4 nodes are available: 1 node is under maintenance, "
        "3 node(s) didn't match Pod's node affinity/selector."
    )
    assert pinned["unschedulablePlugins"] == ["Extender", "NodeAffinity"]
    assert pinned["nodes"]["node-1"]["filter"]["plugin"] == url


def test_extender_server_answers_as_the_wire_types_say() -> None:
    # run_path compiles the script without writing a __pycache__ into the package data
    mod = runpy.run_path(str(PIPELINE / "extender" / "server.py"), run_name="pipeline_extender")

    def n(name: str, **labels: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "labels": labels}}

    args = {"Pod": {}, "Nodes": {"items": [n("a", maintenance="true"), n("b", storage="ssd"), n("c")]}}
    result = mod["filter_nodes"](args)
    assert [x["metadata"]["name"] for x in result["Nodes"]["items"]] == ["b", "c"]
    assert result["FailedNodes"] == {"a": "node is under maintenance"}
    assert mod["prioritize"](args) == [
        {"Host": "a", "Score": 0},
        {"Host": "b", "Score": 10},
        {"Host": "c", "Score": 0},
    ]


# ----- custom plugins --------------------------------------------------------------------------------


def test_custom_plugins_score_and_permit(capsys: pytest.CaptureFixture[str]) -> None:
    cycles = replay_json(
        capsys,
        str(PIPELINE / "custom-plugin" / "cluster.yaml"),
        "--config",
        str(PIPELINE / "custom-plugin" / "config.yaml"),
        "--plugin-module",
        "schedviz.plugins_examples.gpu_binpack",
        "--plugin-module",
        "schedviz.plugins_examples.label_permit",
    )
    trainer, frontend = cycles
    assert (trainer["pod"], trainer["result"], trainer["selectedNode"]) == (
        "default/trainer",
        "Scheduled",
        "gpu-small",
    )
    assert trainer["scoreWeights"]["GpuBinpack"] == 2
    tn = trainer["nodes"]
    assert tn["cpu-only"]["filter"]["reasons"] == ["Insufficient nvidia.com/gpu"]
    # GPUs left free: gpu-small 1, gpu-big 3 -> 100 and 100 - 10 x 2
    assert tn["gpu-small"]["scores"]["GpuBinpack"] == {"raw": 1, "normalized": 100, "weighted": 200}
    assert tn["gpu-big"]["scores"]["GpuBinpack"] == {"raw": 3, "normalized": 80, "weighted": 160}
    assert stage(trainer, "Permit", "LabelPermit")["code"] == "Success"

    assert (frontend["pod"], frontend["result"], frontend["selectedNode"]) == (
        "default/frontend",
        "Unschedulable",
        None,
    )
    fn = frontend["nodes"]
    # GPUs left free: cpu-only 0, gpu-small 1 (trainer took one), gpu-big 4
    assert {k: fn[k]["scores"]["GpuBinpack"]["normalized"] for k in fn} == {
        "cpu-only": 100,
        "gpu-small": 90,
        "gpu-big": 60,
    }
    assert frontend["tiedNodes"] == ["cpu-only"]
    permit = stage(frontend, "Permit", "LabelPermit")
    assert (permit["code"], permit["reason"]) == (
        "Unschedulable",
        "node(s) had none of the labels [pool=approved]",
    )
    assert frontend["message"] == "0/1 nodes are available: 1 node(s) had none of the labels [pool=approved]."
    assert any(s["point"] == "Unreserve" for s in frontend["stages"])


# ----- the two-scheduler race ------------------------------------------------------------------------


def test_race_conflict_and_out_of_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    race = PIPELINE / "race"
    report = run_json(
        capsys,
        "race",
        str(race / "cluster.yaml"),
        "--scheduler",
        f"alpha={race / 'scheduler-alpha.yaml'}",
        "--scheduler",
        f"beta={race / 'scheduler-beta.yaml'}",
    )
    assert [(e["scheduler"], e["pod"], e["node"], e["result"]) for e in report["timeline"]] == [
        ("alpha", "default/checkout", "pool-1", "Bound"),
        ("beta", "default/checkout", "pool-1", "Conflict"),
        ("alpha", "default/etl-a", "pool-1", "Bound"),
        ("beta", "default/etl-b", "pool-1", "Bound"),
    ]
    (conflict,) = report["bindingConflicts"]
    message = 'Operation cannot be fulfilled on pods/binding "checkout": pod checkout is already assigned to node "pool-1"'
    assert (conflict["pod"], conflict["scheduler"], conflict["boundBy"], conflict["boundTo"]) == (
        "default/checkout",
        "beta",
        "alpha",
        "pool-1",
    )
    assert conflict["message"] == message
    assert conflict["schedulerError"] == f'running Bind plugin "DefaultBinder": {message}'
    (fail,) = report["admissionFailures"]
    assert (fail["pod"], fail["node"], fail["scheduler"], fail["phase"], fail["reason"]) == (
        "default/etl-b",
        "pool-1",
        "beta",
        "Failed",
        "OutOfcpu",
    )
    # pool-1 already runs checkout (1 CPU) and etl-a (3 CPU) when etl-b (3 CPU) arrives
    assert fail["message"] == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 4000, capacity: 4000"
    )
    (pool1,) = [n for n in report["nodes"] if n["node"] == "pool-1"]
    assert pool1["overcommitted"] == ["cpu"]
    assert (pool1["bound"]["cpu"], pool1["admitted"]["cpu"]) == (7000, 4000)
    # beta forgot checkout after the conflict: it believes pool-1 holds etl-b only
    assert pool1["believed"]["beta"]["cpu"] == 3000
    assert pool1["believed"]["alpha"]["cpu"] == 4000
    outcomes = {p["pod"]: (p["outcome"], p["boundBy"]) for p in report["pods"]}
    assert outcomes == {
        "default/checkout": ("Admitted", "alpha"),
        "default/etl-a": ("Admitted", "alpha"),
        "default/etl-b": ("Rejected", "beta"),
    }


# ----- packaging -------------------------------------------------------------------------------------


def test_the_scenarios_are_package_data() -> None:
    import tomllib

    data = tomllib.loads((PIPELINE.parents[2] / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"]["package-data"]["schedviz"]
    root = PIPELINE.parent.parent  # the schedviz package
    shipped = {p for pat in patterns for p in root.glob(pat) if p.is_file()}
    for f in PIPELINE.rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts:
            assert f in shipped, f
