"""Reading snapshots as kubectl prints them, and the errors bad input gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from schedviz.engine import InputError, load_paths, load_texts

from .builders import node, pod


def test_kind_list_yaml_and_json_give_the_same_snapshot() -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": [node("a"), pod("p"), pod("q", node_name="a")]}
    y = load_texts([("c.yaml", yaml.safe_dump(doc))])
    j = load_texts([("c.json", json.dumps(doc))])
    for s in (y, j):
        assert [n.name for n in s.nodes] == ["a"]
        assert [p.key for p in s.pending] == ["default/p"]
        assert [p.key for p in s.running] == ["default/q"]


def test_multi_document_yaml_and_nested_lists() -> None:
    text = "\n---\n".join(
        [
            yaml.safe_dump(node("a")),
            yaml.safe_dump({"kind": "PodList", "items": [pod("p")]}),
            yaml.safe_dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}),
            "",
        ]
    )
    s = load_texts([("m.yaml", text)])
    assert len(s.nodes) == 1 and len(s.pods) == 1
    assert s.store().namespace_labels("prod") == {"env": "prod"}


def test_directory_of_files(tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump(node("a")))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pods.json").write_text(json.dumps([pod("p")]))
    (tmp_path / "README.txt").write_text("not a manifest")
    s = load_paths([tmp_path])
    assert [n.name for n in s.nodes] == ["a"] and [p.key for p in s.pods] == ["default/p"]


def test_unknown_kinds_are_counted_not_fatal() -> None:
    s = load_texts([("x.yaml", yaml.safe_dump({"kind": "ConfigMap", "metadata": {"name": "c"}}))])
    assert s.ignored == {"ConfigMap": 1}


def test_finished_pods_are_neither_pending_nor_running() -> None:
    s = load_texts([("x.json", json.dumps([node("a"), pod("done", phase="Succeeded"), pod("failed", node_name="a", phase="Failed")]))])
    assert s.pending == [] and s.running == []


def test_priority_class_resolution() -> None:
    objs = [
        {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"kind": "PriorityClass", "metadata": {"name": "default"}, "value": 7, "globalDefault": True},
    ]
    s = load_texts([("x.json", json.dumps([*objs, pod("a", priorityClassName="high"), pod("b"), pod("c", priority=3)]))])
    assert {p.name: p.priority for p in s.pods} == {"a": 1000, "b": 7, "c": 3}


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("a: [1, 2\n", ["bad.yaml", "invalid YAML", "line"]),
        ('{"kind": "Node",', ["bad.yaml", "invalid JSON"]),
        ("kind: Node\nkind: Pod\n", ["bad.yaml", "duplicate key 'kind'"]),
        (yaml.safe_dump(node("n1", cpu="lots")), ["bad.yaml", "Node n1", "status.allocatable.cpu", "invalid quantity"]),
        (yaml.safe_dump(pod("p1", cpu="1x")), ["bad.yaml", "Pod default/p1", "spec.containers[0].resources.requests.cpu"]),
        (yaml.safe_dump({"kind": "Pod", "metadata": {}}), ["bad.yaml", "metadata.name"]),
        (yaml.safe_dump([{"metadata": {"name": "x"}}]), ["bad.yaml", "kind"]),
        (yaml.safe_dump(node("n2", taints=[{"key": "k", "effect": "Sometimes"}])), ["Node n2", "spec.taints[0].effect"]),
        (yaml.safe_dump(pod("p2", priority="high")), ["Pod default/p2", "spec.priority"]),
        ("- 1\n- 2\n", ["bad.yaml", "expected a Kubernetes object"]),
    ],
)
def test_bad_input_names_file_object_and_field(text: str, fragments: list[str]) -> None:
    with pytest.raises(InputError) as exc:
        load_texts([("bad.yaml", text)])
    for f in fragments:
        assert f in str(exc.value)


def test_duplicate_nodes_are_refused() -> None:
    with pytest.raises(InputError, match="duplicate node name"):
        load_texts([("x.json", json.dumps([node("a"), node("a")]))])


def test_missing_path() -> None:
    with pytest.raises(InputError, match="no such file"):
        load_paths(["/nonexistent/cluster.yaml"])


@pytest.mark.parametrize(
    "text", ["[" * 100_000 + "]" * 100_000, "items: " + "[" * 100_000 + "]" * 100_000], ids=["json", "yaml"]
)
def test_nesting_too_deep_to_decode_is_an_input_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.txt"
    path.write_text(text)
    with pytest.raises(InputError, match="nested too deeply") as err:
        load_paths([path])
    assert str(err.value).startswith(str(path))


def test_a_pod_is_found_by_key_after_the_pods_change() -> None:
    from schedviz.engine.loader import load_documents
    from schedviz.engine.objects import Pod

    snap = load_documents([("s", {"kind": "List", "items": [pod("a"), pod("b", node_name="n"), pod("a", namespace="other")]})])
    first = snap.pod("default/a")
    assert first is not None and first.key == "default/a" and first.index == 0
    assert snap.pod("other/a") is snap.pods[2] and snap.pod("default/missing") is None
    # a pod replaced in place, the length unchanged: asked first for the new one
    snap.pods[0] = Pod(pod("c"), 0)
    assert snap.pod("default/c") is snap.pods[0] and snap.pod("default/a") is None
    # the first of a key: a pod put before another of its key
    snap.pods[0] = Pod(pod("b"), 0)
    assert snap.pod("default/b") is snap.pods[0]
    # another list of the same length
    snap.pods = [Pod(pod("d"), 0), *snap.pods[1:]]
    assert snap.pod("default/d") is snap.pods[0] and snap.pod("default/b") is snap.pods[1]
    # pods added
    snap.pods.append(Pod(pod("e"), 3))
    assert snap.pod("default/e") is snap.pods[3]
