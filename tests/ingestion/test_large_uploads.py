"""Uploads of real size: read as a stream on the worker (schedviz/ingestion/streaming.py), with the same
result as an upload read whole, and bad input at size refused with the object named, nothing stored.

The dense dumps come from the bench's generator (schedviz/tools/dense_cluster.py); the large bad
inputs are built in memory, compressed."""

from __future__ import annotations

import gzip
import io
import json
import resource
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from schedviz.ingestion.models import Snapshot, UploadChunk
from schedviz.ingestion.parsing import Limits, UploadError, parse_upload
from schedviz.ingestion.streaming import parse_stream, zstd_available
from schedviz.ingestion.summary import summarize
from schedviz.tools.dense_cluster import DenseShape, write_dump
from tests.engine.builders import node, pod
from tests.webfixtures import generous_throttles, sync_tasks

MiB = 1024 * 1024
WHOLE = Limits(max_json_values=10**9, max_file_bytes=10**10)


@pytest.fixture(autouse=True)
def _web_settings(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sync_tasks(settings)
    generous_throttles(monkeypatch)


@pytest.fixture(scope="module")
def dense(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A production-shaped dump: 60 nodes x 20 pods, 40 pending (about 3 MB of JSON)."""
    path = tmp_path_factory.mktemp("dense") / "dense.json"
    write_dump(path, DenseShape(nodes=60, pods_per_node=20, pending=40))
    return path.read_bytes()


def pieces(data: bytes, size: int = 256 * 1024) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def unpack(blob: bytes) -> Any:
    return json.loads(zlib.decompress(blob))


def stream_refused(data: bytes, filename: str, limits: Limits | None = None) -> str:
    """The problems of an upload read as a stream, as one text, within 10 s of CPU."""
    cpu = time.process_time()
    with pytest.raises(UploadError) as exc:
        parse_stream(pieces(data), filename, limits)
    assert time.process_time() - cpu < 10.0
    return str(exc.value)


# ----- the same result as an upload read whole ------------------------------------------------------------


def _zipped(dense: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cluster/all.json", dense)
        zf.writestr("README.txt", "not a manifest: skipped")
    return buf.getvalue()


def _compressed(dense: bytes) -> list[tuple[str, bytes]]:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("cluster/all.json")
        info.size = len(dense)
        tf.addfile(info, io.BytesIO(dense))
    out = [
        ("dense.json", dense),
        ("dense.json.gz", gzip.compress(dense)),
        ("dense.tar.gz", buf.getvalue()),
        # concatenated gzip members are one stream, as gunzip reads them
        ("dense.json.gz", gzip.compress(dense[:1000]) + gzip.compress(dense[1000:])),
        ("dense.zip", _zipped(dense)),
    ]
    if zstd_available():
        import zstandard

        out.append(("dense.json.zst", zstandard.ZstdCompressor(level=3).compress(dense)))
    return out


@pytest.mark.parametrize("case", range(6))
def test_streamed_reading_matches_reading_whole(dense: bytes, case: int) -> None:
    cases = _compressed(dense)
    if case >= len(cases):
        pytest.skip("zstandard is not installed")
    filename, data = cases[case]
    whole = parse_upload(dense, "dense.json", WHOLE)
    streamed = parse_stream(pieces(data, 100_000), filename, total=len(data))
    assert streamed.content_hash == whole.content_hash
    assert unpack(streamed.objects_blob) == whole.objects
    assert unpack(streamed.summary_blob) == summarize(whole.objects)
    assert streamed.kinds == whole.kinds() and streamed.ignored == whole.ignored


def test_streamed_summary_resolves_priorities_and_warns_as_summarize() -> None:
    items: list[dict[str, Any]] = [
        pod("early", node_name="ghost", cpu="1"),  # bound to a node the dump does not hold
        node("n1", cpu="4"),
        {**pod("classy"), "spec": {**pod("classy")["spec"], "priorityClassName": "high"}},
        {**pod("unknown"), "spec": {**pod("unknown")["spec"], "priorityClassName": "nope"}},
        pod("plain", node_name="n1", cpu="500m", memory="1Gi"),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
            "preemptionPolicy": "Never",
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "everyone"},
            "value": 7,
            "globalDefault": True,
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}},
    ]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()
    whole = parse_upload(text, "l.json")
    streamed = parse_stream(pieces(text, 1000), "l.json")
    expected = summarize(whole.objects)
    got = unpack(streamed.summary_blob)
    assert got == expected
    assert {p["key"]: p["priority"] for p in got["pods"]} == {
        "default/early": 7,
        "default/classy": 1000,
        "default/unknown": 0,
        "default/plain": 7,
    }
    assert len(got["warnings"]) == 2 and streamed.ignored == {"ConfigMap": 1}
    # what the cycle page shows of each pending pod, its priority and policy from its class
    specs = got["pendingSpecs"]
    assert sorted(specs) == ["default/classy", "default/unknown"]
    assert (specs["default/classy"]["priority"], specs["default/classy"]["preemptionPolicy"]) == (1000, "Never")
    assert (specs["default/unknown"]["priority"], specs["default/unknown"]["preemptionPolicy"]) == (
        0,
        "PreemptLowerPriority",
    )


def test_a_configuration_among_the_manifests_hashes_as_read_whole(dense: bytes) -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    doc = json.loads(dense)
    doc["items"].insert(3, config)
    text = json.dumps(doc).encode()
    whole = parse_upload(text, "c.json", WHOLE)
    streamed = parse_stream(pieces(gzip.compress(text)), "c.json.gz")
    assert whole.config == streamed.config == config
    assert streamed.content_hash == whole.content_hash


def test_scenarios_read_as_a_stream() -> None:
    """A scenario's items are taken as they stream; with nodes or pods beside them the order could not
    be kept, and that is said."""
    scenario = {"name": "s", "items": [node("a"), pod("p", node_name="a", cpu="1")]}
    text = json.dumps(scenario).encode()
    whole = parse_upload(text, "s.json")
    streamed = parse_stream(pieces(gzip.compress(text), 7), "s.json.gz")
    assert streamed.content_hash == whole.content_hash and streamed.name == "s"
    mixed = json.dumps({"nodes": [node("b")], "items": [node("a")]}).encode()
    assert "cannot be read as a stream in its order" in stream_refused(gzip.compress(mixed), "m.json.gz")


# ----- bad input at size ----------------------------------------------------------------------------------


def test_a_truncated_gzip_stream_is_named(dense: bytes) -> None:
    data = gzip.compress(dense)
    text = stream_refused(data[: len(data) // 2], "dense.json.gz")
    assert "dense.json.gz: truncated gzip stream" in text and "the upload is cut short" in text


def test_a_dump_cut_in_the_middle_of_an_object_names_it(dense: bytes) -> None:
    cut = dense.rfind(b'{"apiVersion":"v1","kind":"Pod"', 0, len(dense) // 2) + 700
    text = stream_refused(gzip.compress(dense[:cut]), "dense.json.gz")
    index = dense[:cut].count(b",\n")  # write_dump: one item a line, ",\n" between them
    start = dense.rfind(b"\n", 0, cut) + 1
    assert f"dense.json: items[{index}]: the text ends in the middle of this object (it starts at byte {start};" in text
    assert "cut short" in text


def test_an_object_cut_at_a_chunk_boundary_is_read_whole(dense: bytes) -> None:
    """Items straddling the chunks the upload arrives in (one byte at a time, for a while) read the same."""
    doc = json.loads(dense)
    small = json.dumps({**doc, "items": doc["items"][:70]}).encode()
    whole = parse_upload(small, "s.json", WHOLE)
    streamed = parse_stream(pieces(small, 997), "s.json")
    assert streamed.content_hash == whole.content_hash


def test_150000_duplicate_names_stop_at_the_problem_cap() -> None:
    one = json.dumps(pod("same", cpu="100m"), separators=(",", ":"))
    text = ('{"apiVersion":"v1","kind":"List","items":[' + ",".join([one] * 150_000) + "]}").encode()
    data = gzip.compress(text, 1)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    message = stream_refused(data, "dups.json.gz")
    assert "duplicate Pod default/same (first in dups.json)" in message
    assert "more than 100 problems: stopped reading" in message
    # bounded memory: the reading never held the 150,000 objects (each ~2 kB as a dict)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 200 * 1024


def test_a_compression_bomb_is_refused_by_its_ratio() -> None:
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    spaces = b" " * (8 * MiB)  # valid JSON: whitespace between the items, 2 GiB of it
    head = b'{"apiVersion":"v1","kind":"List","items":['
    bomb = co.compress(head) + b"".join(co.compress(spaces) for _ in range(256)) + co.flush()
    text = stream_refused(bomb, "bomb.json.gz")
    assert "decompresses more than 500 times its compressed size" in text


def test_a_zip_of_many_bombs_is_refused_by_their_total() -> None:
    """Members that each stay under the limits, together over the compression ratio (and, declared,
    over the decompressed limit)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        spaces = b"[" + b" " * (32 * MiB) + b"]"
        for i in range(20):
            zf.writestr(f"m{i:02d}.json", spaces)
    data = buf.getvalue()
    text = stream_refused(data, "bombs.zip", Limits(max_compression_ratio=100))
    assert "bombs.zip: the archive's files decompress to more than 100 times its size" in text
    text = stream_refused(data, "bombs.zip", Limits(max_decompressed_bytes=256 * MiB))
    assert f"decompress to more than {256 * MiB} bytes" in text


def test_the_decompressed_size_limit_holds() -> None:
    secret = b'{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s%d"}},'
    data = gzip.compress(b"[" + b"".join(secret % i for i in range(200_000)) + b"{}]", 1)
    text = stream_refused(data, "many.json.gz", Limits(max_decompressed_bytes=4 * MiB))
    assert f"decompresses to more than {4 * MiB} bytes" in text


def test_an_item_over_the_object_size_limit_is_refused() -> None:
    big = json.dumps({**node("n"), "metadata": {"name": "n", "annotations": {"a": "x" * 3_000_000}}})
    text = stream_refused(gzip.compress(("[" + big + "]").encode()), "big.json.gz", Limits(max_object_bytes=MiB))
    assert "[0]" in text and f"larger than {MiB} bytes" in text


def test_syntax_errors_name_line_column_and_byte() -> None:
    text = b'[\n{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},\n{"apiVersion" "v1"}]'
    message = stream_refused(gzip.compress(text), "bad.json.gz")
    assert "invalid JSON: line 3 column 15 (byte 75): Expecting ':' delimiter in [1]" in message


@pytest.mark.parametrize("head", ["[", "[\n"])
def test_syntax_error_columns_count_from_the_start_of_a_long_line(head: str) -> None:
    """A minified dump is one line of megabytes: read a chunk at a time, the column still counts from
    the start of the line (as json.loads counts it), not from the chunk that holds the error."""
    nodes = ",".join(json.dumps(node(f"node-{i:05d}"), separators=(",", ":")) for i in range(12_000))
    text = head + nodes + ',{"apiVersion" "v1"}]'
    assert len(text) > 2 * MiB and text.count("\n") == head.count("\n")
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    err = expected.value
    assert err.colno > MiB
    message = stream_refused(text.encode(), "minified.json")
    assert f"invalid JSON: line {err.lineno} column {err.colno} (byte {err.pos}): Expecting ':' delimiter" in message


def test_a_number_a_float_cannot_hold_is_refused_in_its_item() -> None:
    text = b'[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},{"kind":"Node","x":1e999}]'
    assert "number 1e999 is out of range in [1]" in stream_refused(text, "h.json")


def test_duplicate_keys_and_deep_nesting_in_an_item() -> None:
    dup = stream_refused(b'[{"kind":"Node","kind":"Pod"}]', "d.json")
    assert "duplicate key 'kind'" in dup and "[0]" in dup
    deep = b'[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","x":' + b"[" * 150 + b"]" * 150 + b"}}]"
    assert "nesting deeper than 100 levels" in stream_refused(deep, "deep.json")


# ----- through the API ------------------------------------------------------------------------------------


@pytest.fixture
def streamed_uploads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file upload is read as a stream on the worker (in these tests: when the request commits)."""
    monkeypatch.setenv("SCHEDVIZ_INLINE_UPLOAD_BYTES", "1")


def post(api: APIClient, data: bytes, filename: str, **extra: Any) -> Any:
    upload = SimpleUploadedFile(filename, data, content_type="application/octet-stream")
    return api.post("/api/v1/snapshots/", {"file": upload, **extra}, format="multipart")


def test_a_large_upload_answers_202_and_is_read_on_the_worker(
    api: APIClient, dense: bytes, streamed_uploads: None
) -> None:
    data = gzip.compress(dense)
    r = post(api, data, "dense.json.gz", name="prod")
    assert r.status_code == 202, r.content[:300]
    body = r.json()
    assert body["status"] in ("pending", "parsing", "ready")  # sync tasks: read when the request committed
    snap = api.get(f"/api/v1/snapshots/{body['id']}/").json()
    assert snap["status"] == "ready" and snap["error"] is None
    items = len(json.loads(dense)["items"])
    assert snap["progress"] == {"bytesRead": len(data), "bytesTotal": len(data), "objectsParsed": items}
    assert snap["node_count"] == 60 and snap["pod_count"] == 1240 and snap["pending_count"] == 40
    assert snap["source_format"] == "gzip" and snap["size_bytes"] == len(data)
    whole = parse_upload(dense, "dense.json", WHOLE)
    assert snap["content_hash"] == whole.content_hash
    nodes = api.get(f"/api/v1/snapshots/{body['id']}/nodes/?page_size=100").json()
    assert nodes["count"] == 60
    assert UploadChunk.objects.count() == 0
    # a replay of it runs
    r = api.post("/api/v1/replays/", {"snapshot": body["id"]}, format="json")
    assert r.status_code == 201, r.content[:300]
    # the same content again: failed, naming the snapshot that holds it
    again = post(api, gzip.compress(dense, 9), "again.json.gz").json()
    again = api.get(f"/api/v1/snapshots/{again['id']}/").json()
    assert again["status"] == "failed" and again["duplicate_of"] == body["id"]
    assert "already stored as snapshot 'prod'" in again["error"]["message"]


def test_a_large_upload_that_fails_stores_nothing_and_can_be_deleted(
    api: APIClient, dense: bytes, streamed_uploads: None
) -> None:
    data = gzip.compress(dense)[:-5000]
    r = post(api, data, "cut.json.gz")
    assert r.status_code == 202
    sid = r.json()["id"]
    snap = api.get(f"/api/v1/snapshots/{sid}/").json()
    assert snap["status"] == "failed" and "truncated gzip stream" in snap["error"]["message"]
    assert snap["error"]["problems"][0]["document"] == "cut.json.gz"
    row = Snapshot.objects.get(pk=sid)
    assert bytes(row.objects_blob) == b"" and bytes(row.summary_blob) == b"" and row.node_count == 0
    assert UploadChunk.objects.count() == 0
    r = api.get(f"/api/v1/snapshots/{sid}/nodes/")
    assert r.status_code == 409 and r.json()["error"]["code"] == "snapshot_not_ready"
    r = api.post("/api/v1/replays/", {"snapshot": sid}, format="json")
    assert r.status_code == 409
    assert api.delete(f"/api/v1/snapshots/{sid}/").status_code == 204
    assert Snapshot.objects.count() == 0


def test_a_bad_configuration_with_a_large_upload_is_refused_at_once(
    api: APIClient, dense: bytes, streamed_uploads: None
) -> None:
    r = post(api, gzip.compress(dense), "dense.json.gz", config="kind: Nope\n")
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_upload"
    assert Snapshot.objects.count() == 0 and UploadChunk.objects.count() == 0


def test_an_upload_over_the_size_limit_is_refused_before_it_is_stored(
    api: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEDVIZ_MAX_UPLOAD_BYTES", "1000")
    r = post(api, b"[" + b" " * 2000 + b"]", "big.json")
    assert r.status_code == 400 and "the limit is 1000 bytes" in r.json()["error"]["details"][0]["message"]
    assert Snapshot.objects.count() == 0


def test_small_gzip_uploads_are_still_read_in_the_request(api: APIClient, dense: bytes) -> None:
    r = post(api, gzip.compress(dense), "dense.json.gz")
    assert r.status_code == 201 and r.json()["status"] == "ready"


def test_uploads_in_progress_do_not_collide_on_the_content_hash(
    api: APIClient, dense: bytes, settings: Any, streamed_uploads: None, tmp_path: Path
) -> None:
    """Two uploads waiting for the worker (no hash yet) are two snapshots until read."""
    settings.SCHEDVIZ_TASK_MODE = "celery"  # queued, not run: the broker is in memory here
    from unittest import mock

    with mock.patch("schedviz.ingestion.tasks.parse_snapshot_task.delay") as delay:
        a = post(api, gzip.compress(dense), "a.json.gz")
        b = post(api, gzip.compress(dense[:-3]), "b.json.gz")
    assert a.status_code == b.status_code == 202 and delay.call_count == 2
    assert {s.status for s in Snapshot.objects.all()} == {"pending"}
    assert UploadChunk.objects.count() == 2
    # the listing says so, and filters by state
    assert {s["status"] for s in api.get("/api/v1/snapshots/").json()["results"]} == {"pending"}
    assert api.get("/api/v1/snapshots/?status=ready").json()["count"] == 0
    assert api.get("/api/v1/snapshots/?status=pending").json()["count"] == 2
    assert api.get("/api/v1/snapshots/?status=nope").status_code == 400


def test_a_lone_surrogate_reads_as_the_api_server_reads_it() -> None:
    """``\\ud800`` with no second half is U+FFFD to the API server's decoder (encoding/json): the
    label value is then invalid, named like any other, read whole, as a stream or by the engine; a
    valid pair is the character it encodes."""
    from schedviz.engine.errors import InputError
    from schedviz.engine.loader import load_texts

    def doc(value: str, where: str = "labels") -> str:
        n = node("n1", cpu="4")
        n["metadata"][where] = {"a": "PLACEHOLDER"}
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": [n]}).replace("PLACEHOLDER", value)

    bad = doc("x\\ud800")
    with pytest.raises(UploadError) as whole:
        parse_upload(bad.encode(), "l.json")
    with pytest.raises(UploadError) as streamed:
        parse_stream(pieces(bad.encode(), 7), "l.json")
    for exc in (whole.value, streamed.value):
        text = str(exc)
        assert "Node n1" in text and "metadata.labels" in text and 'Invalid value: "x\ufffd"' in text
    with pytest.raises(InputError) as engine:
        load_texts([("l.json", bad)])
    assert "x\ufffd" in str(engine.value)
    # a pair is one character, and valid text stays as it was
    ok = parse_upload(doc("ok\\ud83d\\ude00", "annotations").encode(), "l.json")
    assert ok.objects[0]["metadata"]["annotations"]["a"] == "ok\U0001f600"
