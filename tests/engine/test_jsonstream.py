"""Large JSON dumps read item by item (engine/jsonstream.py): the snapshot a whole read gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedviz.engine import InputError, jsonstream, loader
from schedviz.engine.loader import Snapshot, load_paths
from schedviz.tools.dense_cluster import DenseShape, objects

from .builders import node, pod


@pytest.fixture(params=[37, 5000])
def streamed(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Every JSON file streamed, a few characters at a time (chunk boundaries everywhere), or a few
    items at a time (most of them decoded in batches)."""
    monkeypatch.setattr(loader, "STREAM_BYTES", 0)
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", request.param)


def _summary(s: Snapshot) -> list[Any]:
    return [
        [(n.name, n.allocatable, n.raw) for n in s.nodes],
        [(p.key, p.index, p.node_name, p.priority, p.resources.requests, p.raw) for p in s.pods],
        [(o.kind, o.key) for o in s.objects],
        s.config,
        s.name,
    ]


def _whole(path: Path, monkeypatch: pytest.MonkeyPatch) -> Snapshot:
    with monkeypatch.context() as m:
        m.setattr(loader, "STREAM_BYTES", 1 << 62)
        return load_paths([path])


DENSE = list(objects(DenseShape(nodes=6, pods_per_node=5, pending=4)))


@pytest.mark.parametrize(
    "doc",
    [
        {"apiVersion": "v1", "items": DENSE, "kind": "List", "metadata": {"resourceVersion": ""}},  # kubectl's order
        {"kind": "PodList", "items": [pod("p"), pod("q", node_name="a")], "extra": [1, 2.5, None]},
        DENSE,  # a top-level array
        {"items": [node("a"), pod("p", node_name="a")], "config": {"kind": "KubeSchedulerConfiguration"}, "name": "s"},
        {"kind": "List", "items": []},
    ],
    ids=["kubectl-list", "pod-list", "array", "scenario-config", "empty"],
)
@pytest.mark.parametrize("indent", [None, 2])
def test_a_streamed_dump_is_the_dump_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: None, doc: Any, indent: int | None
) -> None:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(doc, indent=indent))
    assert _summary(load_paths([path])) == _summary(_whole(path, monkeypatch))


def test_shapes_that_need_a_whole_read_are_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: None
) -> None:
    # a scenario's nodes and pods come before its items when read whole: their order is kept
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"items": [pod("late")], "nodes": [node("a")], "pods": [pod("early")]}))
    assert [p.name for p in load_paths([path]).pods] == ["early", "late"]
    assert _summary(load_paths([path])) == _summary(_whole(path, monkeypatch))
    # a single object that happens to have an "items" field is one object
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({**pod("p"), "items": [pod("q")]}))
    assert _summary(load_paths([odd])) == _summary(_whole(odd, monkeypatch))


@pytest.mark.parametrize(
    "text",
    [
        '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}},\n {"kind": "Pod", "metadata": {"name": ',
        '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}}\n {"kind": "Pod"}]}',
        '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}},\n {"kind": "Pod", "metadata": nope}]}',
        '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}}]} trailing',
        '[{"kind": "Node", "metadata": {"name": "a"}}, ]',
    ],
    ids=["cut-in-an-object", "missing-comma", "bad-token", "extra-data", "trailing-comma"],
)
def test_a_broken_dump_names_the_line_and_column_a_whole_read_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: None, text: str
) -> None:
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(InputError) as whole:
        _whole(path, monkeypatch)
    with pytest.raises(InputError) as stream:
        load_paths([path])
    expected = str(whole.value)
    assert "invalid JSON at line" in expected
    # the same place and problem (the streamed read may report the objects read before it too)
    assert expected.split(": ", 1)[1] in str(stream.value)


@pytest.mark.parametrize("indent", [None, 1, 4])
def test_items_are_decoded_in_batches_when_the_layout_shows_where_they_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indent: int | None
) -> None:
    monkeypatch.setattr(loader, "STREAM_BYTES", 0)
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 5000)
    path = tmp_path / "dump.json"
    if indent is None:  # one item a line, as `schedviz bench --dump` writes
        path.write_text('{"kind": "List", "items": [\n' + ",\n".join(json.dumps(o) for o in DENSE) + "\n]}")
    else:  # as kubectl prints it
        path.write_text(json.dumps({"apiVersion": "v1", "items": DENSE, "kind": "List"}, indent=indent))
    batches: list[int] = []
    real = jsonstream._batch

    def spy(*args: Any) -> list[Any] | None:
        got = real(*args)
        if got:
            batches.append(len(got))
        return got

    monkeypatch.setattr(jsonstream, "_batch", spy)
    assert _summary(load_paths([path])) == _summary(_whole(path, monkeypatch))
    assert sum(batches) >= len(DENSE) // 2 and len(batches) > 1
    # the items of a batch share their keys, as a whole read's do
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 40_000)
    pods = load_paths([path]).pods
    keys = {id(next(k for k in p.raw if k == "metadata")) for p in pods}
    assert len(keys) <= len(pods) // 3


def test_batches_strict_json_refuses_are_read_by_the_standard_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch is decoded by msgspec's strict decoder; what it refuses and ``json.loads`` reads
    (NaN, Infinity, numbers beyond a double's range, lone surrogates) comes out as ``json.loads`` gives it,
    but for a lone surrogate, U+FFFD as the API server's decoder reads it (``go_strings``)."""
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 3000)
    odd = ["NaN", "-Infinity", "1e400", '"\\ud800"', "123456789012345678901234567890", "-0.0", "1.5e-400"]
    items = [
        f'{{"kind": "ConfigMap", "metadata": {{"name": "c{i}"}}, "data": {{"v": {odd[i % len(odd)] if i % 5 == 3 else i}}}}}'
        for i in range(200)
    ]
    text = '{"kind": "List", "items": [\n' + ",\n".join(items) + "\n]}"
    path = tmp_path / "dump.json"
    path.write_text(text)
    batches: list[int] = []
    real = jsonstream._batch

    def spy(*args: Any) -> list[Any] | None:
        got = real(*args)
        if got:
            batches.append(len(got))
        return got

    monkeypatch.setattr(jsonstream, "_batch", spy)
    got = [obj for where, obj in jsonstream.items(path, str(path)) if where]
    expected = jsonstream.go_strings(json.loads(text))
    assert "\ufffd" in repr(expected) and "\\ud800" not in repr(expected)
    assert repr(got) == repr(expected["items"])
    assert sum(batches) >= 150
    for t in (text, "[1e400, NaN]", '{"a": 1, "a": 2}', "[123456789012345678901234567890]"):
        assert repr(jsonstream.loads(t)) == repr(jsonstream.go_strings(json.loads(t)))
    with pytest.raises(json.JSONDecodeError) as strict:
        jsonstream.loads('{"a": [1, 2,]}')
    with pytest.raises(json.JSONDecodeError) as plain:
        json.loads('{"a": [1, 2,]}')
    assert str(strict.value) == str(plain.value)
