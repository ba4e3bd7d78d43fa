"""The streamed reading's shared path (runs of items decoded by msgspec and checked token for token
against their text, pods of one template validated and viewed once) against reading every item on its
own (``parse_stream(..., shared=False)``): the same stored bytes, content hash and summary, and the
same problems, on dense dumps laid out as one object a line and as ``kubectl -o json`` indents them."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator

import pytest

from schedviz.ingestion import streaming
from schedviz.ingestion.models import pack, unpack
from schedviz.ingestion.parsing import UploadError, parse_upload
from schedviz.ingestion.streaming import StreamedSnapshot, parse_stream
from schedviz.ingestion.summary import summarize
from schedviz.tools.dense_cluster import DenseShape, write_dump
from tests.ingestion.test_large_uploads import WHOLE


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """A dense dump (40 nodes x 20 pods, 30 pending), one object a line."""
    path = tmp_path_factory.mktemp("shared") / "dense.json"
    write_dump(path, DenseShape(nodes=40, pods_per_node=20, pending=30))
    return path.read_text().split("\n")


def pods(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith('{"apiVersion":"v1","kind":"Pod"')]


def pieces(data: bytes, size: int = 65_536) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def both(text: str) -> tuple[StreamedSnapshot, StreamedSnapshot]:
    data = text.encode()
    shared = parse_stream(pieces(data), "dense.json", WHOLE)
    alone = parse_stream(pieces(data), "dense.json", WHOLE, shared=False)
    return shared, alone


def problems(text: str, *, shared: bool) -> str:
    with pytest.raises(UploadError) as exc:
        parse_stream(pieces(text.encode()), "dense.json", WHOLE, shared=shared)
    return str(exc.value)


def indented(text: str) -> str:
    """The dump as ``kubectl get -o json`` prints it (4 spaces)."""
    return json.dumps(json.loads(text), indent=4, ensure_ascii=False)


def varied(lines: list[str]) -> str:
    """The dump with items the shared path must hand to the standard decoder or encoder: non-ASCII
    text, escapes msgspec writes otherwise, a DEL character, floats, a number with an exponent."""
    out = list(lines)
    p = pods(out)
    meta, top = '"creationTimestamp":"', '"kind":"Pod",'
    marks = {
        p[3]: (meta, '"x":"caf\\u00e9",' + meta),
        p[10]: (meta, '"note":"d\u00e9j\u00e0 vu \U0001f600",' + meta),
        p[50]: (meta, '"html":"\\u003cb\\u003e \\/ \\t",' + meta),
        p[51]: (meta, '"del":"a\x7fb",' + meta),
        p[77]: (top, top + '"x-ratio":0.25,"x-big":1E3,'),
        p[78]: (top, top + '"n":"12","m":-0,'),
        p[90]: ('"phase":"Running"', '"nominatedNodeName":"n\x7f","phase":"Running \u00e9t\u00e9"'),
    }
    for i, (old, new) in marks.items():
        assert old in out[i]
        out[i] = out[i].replace(old, new, 1)
    return "\n".join(out)


@pytest.mark.parametrize("layout", ["lines", "indented"])
@pytest.mark.parametrize("content", ["plain", "varied"])
def test_the_shared_reading_stores_what_reading_each_item_alone_stores(
    lines: list[str], layout: str, content: str
) -> None:
    text = "\n".join(lines) if content == "plain" else varied(lines)
    if layout == "indented":
        text = indented(text)
    shared, alone = both(text)
    assert shared.objects_blob == alone.objects_blob
    assert shared.summary_blob == alone.summary_blob
    assert shared == alone
    whole = parse_upload(text.encode(), "dense.json", WHOLE)
    assert shared.content_hash == whole.content_hash
    assert shared.objects_blob == pack(whole.objects)  # byte for byte what an upload read whole stores
    assert json.loads(zlib.decompress(shared.summary_blob)) == summarize(whole.objects)


@pytest.mark.parametrize("layout", ["lines", "indented"])
def test_the_shared_reading_finds_the_same_problems(lines: list[str], layout: str) -> None:
    out = list(lines)
    p = pods(out)
    for at, old, new in [
        (p[5], '"requests":{"cpu":"', '"requests":{"cpu":"lots'),  # in a run of pods of one template
        (p[6], '"name":"', '"name":"Bad_'),
        (p[200], '"nodeName":"', '"nodeName":"-'),
    ]:
        assert old in out[at]
        out[at] = out[at].replace(old, new, 1)
    out.insert(p[300], out[p[299]])  # a duplicate pod
    text = "\n".join(out)
    if layout == "indented":
        text = indented(text)
    found = problems(text, shared=True)
    assert found == problems(text, shared=False)
    assert "lots" in found and "Bad_" in found and "duplicate Pod" in found and "nodeName" in found


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('"kind":"Pod",', '"kind":"Pod","kind":"Pod",', "duplicate key 'kind'"),
        ('"kind":"Pod",', '"kind":"Pod","x":NaN,', "NaN is not valid JSON"),
        ('"kind":"Pod",', '"kind":"Pod","x":1e999,', "number 1e999 is out of range"),
        ('"kind":"Pod",', '"kind":"Pod","x":' + "[" * 120 + "]" * 120 + ",", "nesting deeper than 100"),
        ('"kind":"Pod",', '"kind":"Pod",,', "Expecting property name"),
    ],
)
def test_bad_items_in_a_run_are_refused_as_read_alone(lines: list[str], old: str, new: str, expected: str | None) -> None:
    out = list(lines)
    at = pods(out)[123]
    out[at] = out[at].replace(old, new, 1)
    text = "\n".join(out)
    index = at - 1  # the first line opens the List
    alone = problems(text, shared=False)
    assert problems(text, shared=True) == alone
    if expected is not None:
        assert expected in alone and f"items[{index}]" in alone


def test_templates_are_bounded_and_renewed(lines: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``TEMPLATES`` templates pods are read on their own, and past ``COMPACT_AFTER_PODS`` pods
    the reading starts new templates: the same snapshot either way."""
    monkeypatch.setattr(streaming._StreamIngest, "TEMPLATES", 3)
    monkeypatch.setattr(streaming, "COMPACT_AFTER_PODS", 50)
    shared, alone = both("\n".join(lines))
    assert shared.objects_blob == alone.objects_blob and shared.summary_blob == alone.summary_blob
    assert shared == alone


def test_a_lone_surrogate_in_a_run_reads_as_read_alone(lines: list[str]) -> None:
    """msgspec refuses the item; the standard decoder reads the escape as the API server does
    (U+FFFD), shared or alone, and the upload is stored the same."""
    out = list(lines)
    at = pods(out)[123]
    out[at] = out[at].replace('"kind":"Pod",', '"kind":"Pod","x":"a\\ud800",', 1)
    shared, alone = both("\n".join(out))
    assert shared.content_hash == alone.content_hash
    assert bytes(shared.objects_blob) == bytes(alone.objects_blob)
    assert "a\ufffd" in json.dumps(unpack(shared.objects_blob), ensure_ascii=False)

