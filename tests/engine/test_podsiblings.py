"""Pods of a streamed dump read through their template's first pod (engine/podsiblings.py): the
snapshot, the errors and the replay a whole read gives, with the template's values held once."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from schedviz.engine import jsonstream, loader, podsiblings
from schedviz.engine import objects as objects_module
from schedviz.engine.loader import Snapshot, load_paths
from schedviz.engine.validation import InvalidSnapshot
from schedviz.tools.dense_cluster import DenseShape, objects

from .test_dense_fast_paths import _broken, _view

SHAPE = DenseShape(nodes=24, pods_per_node=12, pending=30)


@pytest.fixture(scope="module")
def dense() -> list[dict[str, Any]]:
    return list(objects(SHAPE))


@pytest.fixture(scope="module")
def larger() -> list[dict[str, Any]]:
    """Enough pods for every edit of ``_broken``, each twice."""
    return list(objects(DenseShape(nodes=40, pods_per_node=28, pending=30)))


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every JSON file streamed, in batches of a dozen items or so; what the reader made of the
    items of the batches it read."""
    monkeypatch.setattr(loader, "STREAM_BYTES", 0)
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 60_000)
    made: list[Any] = []
    real = podsiblings.SiblingReader.read

    def spy(self: podsiblings.SiblingReader, items: list[Any]) -> list[Any]:
        got = real(self, items)
        made.extend(got)
        return got

    monkeypatch.setattr(podsiblings.SiblingReader, "read", spy)
    return made


def _write(path: Path, items: list[dict[str, Any]], indent: int | None = 2) -> Path:
    """As kubectl prints a List (``indent``), or one item a line, as ``schedviz bench --dump``."""
    if indent is None:
        path.write_text('{"kind": "List", "items": [\n' + ",\n".join(json.dumps(o) for o in items) + "\n]}")
    else:
        path.write_text(json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=indent))
    return path


def _whole(path: Path, monkeypatch: pytest.MonkeyPatch) -> Snapshot:
    with monkeypatch.context() as m:
        m.setattr(loader, "STREAM_BYTES", 1 << 62)
        return load_paths([path])


def _summary(s: Snapshot) -> list[Any]:
    return [
        [(n.name, n.allocatable, n.raw) for n in s.nodes],
        [_view(p) for p in s.pods],
        [(o.kind, o.key) for o in s.objects],
    ]


def _variants(dense: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pods of the dense cluster's templates that differ from their siblings in what the reader
    splits: instance fields present or absent, an unknown field, a mirror pod, a resize in
    progress, init containers with mounts of their own; and (the second list) pods the API server
    refuses: values of the wrong type."""
    pods = [o for o in dense if o["kind"] == "Pod" and o["spec"].get("nodeName")]
    out: list[dict[str, Any]] = []

    def variant(k: int, name: str) -> dict[str, Any]:
        p = copy.deepcopy(pods[k])
        p["metadata"]["name"] = name
        p["metadata"]["uid"] = f"uid-{name}"
        out.append(p)
        return p

    variant(0, "no-node")["spec"].pop("nodeName")
    variant(1, "no-volumes")["spec"].pop("volumes")
    variant(2, "no-mounts")["spec"]["containers"][0].pop("volumeMounts", None)
    variant(3, "unknown-field")["spec"]["futureField"] = {"a": 1}
    variant(4, "unknown-container-field")["spec"]["containers"][0]["future"] = True
    variant(5, "mirror")["metadata"].setdefault("annotations", {})["kubernetes.io/config.mirror"] = "x"
    resizing = variant(6, "resizing")
    resizing["status"]["conditions"] = [{"type": "PodResizePending", "reason": "Deferred", "status": "True"}]
    resizing["status"]["containerStatuses"] = [
        {"name": c["name"], "resources": {"requests": {"cpu": "3"}}} for c in resizing["spec"]["containers"]
    ]
    for k, name in ((7, "init-a"), (7, "init-b")):
        p = variant(k, name)
        p["spec"]["initContainers"] = [
            {"name": "init", "image": "busybox", "volumeMounts": [{"name": f"vol-{name}", "mountPath": "/x"}]}
        ]
    variant(8, "no-status").pop("status")
    reordered = variant(12, "reordered")
    reordered["spec"] = dict(reversed(list(reordered["spec"].items())))
    # the same variant twice: the second is a sibling of the first
    named = {o["metadata"]["name"]: o for o in out}
    for original, name in (
        ("no-node", "no-node-2"),
        ("no-mounts", "no-mounts-2"),
        ("mirror", "mirror-2"),
        ("init-a", "init-c"),
    ):
        p = copy.deepcopy(named[original])
        p["metadata"]["name"] = name
        p["metadata"]["uid"] = f"uid-{name}"
        out.append(p)
    invalid = [copy.deepcopy(pods[k]) for k in (9, 10, 11, 13, 14)]
    invalid[0]["metadata"]["name"] = "node-as-number"
    invalid[0]["spec"]["nodeName"] = 5
    invalid[1]["metadata"] = ["x"]
    invalid[2]["metadata"]["name"] = "volumes-as-string"
    invalid[2]["spec"]["volumes"] = "x"
    invalid[3]["metadata"]["namespace"] = ["x"]
    invalid[4]["metadata"]["namespace"] = {"a": 1}
    return out, invalid


@pytest.mark.parametrize("indent", [None, 2])
def test_streamed_pods_are_the_pods_read_whole(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    streamed: list[Any],
    dense: list[dict[str, Any]],
    indent: int | None,
) -> None:
    valid, _ = _variants(dense)
    path = _write(tmp_path / "dump.json", dense + valid, indent)
    got = load_paths([path])
    assert _summary(got) == _summary(_whole(path, monkeypatch))
    siblings = [s for s in streamed if type(s) is podsiblings.Sibling and not s.is_first]
    firsts = [s for s in streamed if type(s) is podsiblings.Sibling and s.is_first]
    pods = [o for o in dense if o["kind"] == "Pod"]
    # most pods are built from their template's first pod, which they share their values with
    assert len(siblings) > len(pods) // 2 and firsts
    for s in siblings:
        spec, theirs = s.obj["spec"], s.first.spec
        assert spec is not theirs
        assert spec["containers"][0]["image"] is theirs["containers"][0]["image"]
        if "tolerations" in spec:
            assert spec["tolerations"] is theirs["tolerations"]
    # a volume's source is one object for the pods that have the same (a service account token's)
    sources = [v["projected"] for s in siblings for v in s.obj["spec"].get("volumes", ()) if "projected" in v]
    assert len(sources) >= len(siblings) // 2
    assert len({id(x) for x in sources}) < len(sources) // 10
    # what the reader does not split is decoded whole, and read as before
    by_name = {p.name: p for p in got.pods}
    whole_names = {o["metadata"]["name"] for o in streamed if type(o) is dict and o.get("kind") == "Pod"}
    assert {"unknown-field", "unknown-container-field"} <= whole_names
    assert by_name["no-node-2"].node_name == ""
    init = by_name["init-c"].raw["spec"]["initContainers"][0]
    assert init["volumeMounts"] == [{"name": "vol-init-a", "mountPath": "/x"}]
    assert init is not by_name["init-a"].raw["spec"]["initContainers"][0]


def test_streamed_pods_report_the_errors_a_whole_read_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[Any], larger: list[dict[str, Any]]
) -> None:
    valid, invalid = _variants(larger)
    broken = [*_broken(larger), *invalid, *valid]  # each read in a batch (the last item is read alone)
    path = _write(tmp_path / "broken.json", broken)
    problems: list[list[str]] = []
    for whole in (False, True):
        with pytest.raises(InvalidSnapshot) as err:
            _whole(path, monkeypatch) if whole else load_paths([path])
        problems.append([str(p) for p in err.value.problems])
    assert problems[0] == problems[1]
    joined = "\n".join(problems[0])
    assert len(problems[0]) >= 2 * 7 + 4
    for expected in (
        "Sometimes",
        "priority",
        "lots",
        "Not_A_Node",
        "-bad-",
        "Duplicate value",
        "node-as-number",
        "items[",
        "namespace",
    ):
        assert expected in joined
    assert any(type(s) is podsiblings.Sibling and not s.is_first for s in streamed)


def test_a_batch_the_strict_decoder_refuses_is_read_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[Any], dense: list[dict[str, Any]]
) -> None:
    """A lone surrogate in a pod's metadata: its batch is decoded by the standard decoder (the API
    server's U+FFFD for it), and the pods after it are siblings again."""
    pods = [o for o in dense if o["kind"] == "Pod"]
    odd = copy.deepcopy(pods[40])
    odd["metadata"]["name"] = "odd"
    odd["metadata"]["annotations"] = {"note": "\ud800"}
    items = [*pods[:40], odd, *pods[40:]]
    path = tmp_path / "odd.json"
    path.write_text(
        json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=2, ensure_ascii=True)
    )
    got = load_paths([path])
    assert _summary(got) == _summary(_whole(path, monkeypatch))
    assert next(p for p in got.pods if p.name == "odd").meta.annotations == {"note": "\ufffd"}
    later = {p["metadata"]["name"] for p in pods[60:]}
    assert any(
        type(s) is podsiblings.Sibling and not s.is_first and s.obj["metadata"]["name"] in later
        for s in streamed
    )


def test_streamed_pods_past_the_compaction_threshold_are_the_pods_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[Any], dense: list[dict[str, Any]]
) -> None:
    monkeypatch.setattr(objects_module, "COMPACT_AFTER_PODS", 0)
    valid, _ = _variants(dense)
    path = _write(tmp_path / "dump.json", dense + valid)
    got = load_paths([path])
    assert _summary(got) == _summary(_whole(path, monkeypatch))
    siblings = [s for s in streamed if type(s) is podsiblings.Sibling and not s.is_first]
    assert len(siblings) > len(dense) // 2
    # owner references are shared past the threshold, as a whole read shares them
    owners = {id(p.meta.owner_refs[0]) for p in got.pods if p.meta.owner_refs}
    assert len(owners) < len(got.pods) // 3


def test_the_first_pods_of_a_batch_read_otherwise_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: list[Any], dense: list[dict[str, Any]]
) -> None:
    """A number beyond a double's range in a batch: the strict decoder refuses it, the batch is read
    by the standard decoder, and the first pods the reader had found in it are forgotten; the next
    pod of their kind is a first pod again, so that every pod is read with its template."""
    pods = [o for o in dense if o["kind"] == "Pod"]

    def fresh(suffix: str) -> list[dict[str, Any]]:
        """Pods of templates not seen before (a namespace of their own)."""
        out = copy.deepcopy(pods[40:52])
        for p in out:
            p["metadata"]["namespace"] = "fresh"
            p["metadata"]["name"] += suffix
        return out

    odd = {"kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"v": 1}}
    items: list[Any] = [*pods[:40], *fresh("-a"), odd, *pods[40:], *fresh("-b")]
    path = _write(tmp_path / "big.json", items)
    path.write_text(path.read_text().replace('"v": 1', '"v": 1e400'))
    plain: list[str] = []
    real = loader.Validator.validate

    def validate(self: Any, obj: dict[str, Any]) -> Any:
        if obj.get("kind") == "Pod":
            plain.append(obj["metadata"]["name"])
        return real(self, obj)

    monkeypatch.setattr(loader.Validator, "validate", validate)
    got = load_paths([path])
    assert plain == []  # every pod found its template
    assert all(s.first.template is not None for s in streamed if type(s) is podsiblings.Sibling)
    monkeypatch.setattr(loader.Validator, "validate", real)
    assert _summary(got) == _summary(_whole(path, monkeypatch))
