"""Uploads: every accepted format, validation naming where the problem is, and hostile input refused fast.

The hostile corpus is generated here: zip and gzip bombs, lying archive headers, unsafe members,
100k-deep nesting, YAML alias bombs, tags, bad encodings.
"""

from __future__ import annotations

import copy
import gzip
import io
import json
import stat
import struct
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedviz.ingestion import parsing
from schedviz.ingestion.parsing import (
    CONFIG_KIND,
    Limits,
    ParsedSnapshot,
    Problem,
    UploadError,
    content_hash,
    json_depth,
    json_objects,
    json_shape,
    parse_objects,
    parse_upload,
)
from tests.engine.builders import node, pod

FIXTURES = Path(__file__).resolve().parents[1] / "conformance" / "fixtures"
MiB = 1024 * 1024


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def cluster_objects() -> list[dict[str, Any]]:
    return [
        namespace("prod", env="prod"),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        node("a", labels={"topology.kubernetes.io/zone": "z1"}),
        node("b", cpu="8", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
        pod("web", cpu="500m", memory="1Gi"),
        pod("db", namespace="prod", node_name="a", cpu="1", memory="2Gi", priorityClassName="high"),
        pod("job", node_name="b", phase="Succeeded"),
    ]


def kept(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] != "ConfigMap"]


def as_list(objs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": objs}


def problems_of(
    data: bytes | str, filename: str = "upload.yaml", limits: Limits | None = None
) -> list[Problem]:
    raw = data.encode() if isinstance(data, str) else data
    with pytest.raises(UploadError) as info:
        parse_upload(raw, filename, limits)
    assert info.value.problems, "an UploadError always names at least one problem"
    return info.value.problems


def text_of(problems: list[Problem]) -> str:
    return " | ".join(str(p) for p in problems)


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """The block costs less than ``seconds`` of this process's CPU time: what it costs, whatever else
    runs on the machine (no wall-clock bound: a busy machine stretches it, not the work)."""
    cpu = time.process_time()
    yield
    cpu = time.process_time() - cpu
    assert cpu < seconds, f"took {cpu:.2f}s of CPU"


def refused_fast(data: bytes, filename: str, limits: Limits | None = None) -> list[Problem]:
    """Hostile input: an UploadError (never another exception) within 10 s of CPU (the target is 5 s;
    the margin is for slower machines)."""
    with within(10.0):
        return problems_of(data, filename, limits)


# --------------------------------------------------------------------------------------------------
# Formats


def test_kind_list_as_yaml_and_json_gives_the_same_objects_and_hash() -> None:
    objs = [*cluster_objects(), config_map("settings")]
    y = parse_upload(yaml.safe_dump(as_list(objs)).encode(), "cluster.yaml")
    j = parse_upload(json.dumps(as_list(objs)).encode(), "cluster.json")
    assert y.objects == kept(objs) == j.objects
    assert y.ignored == j.ignored == {"ConfigMap": 1}
    assert (y.format, j.format) == ("yaml", "json")
    assert y.documents == j.documents == 1
    assert y.config is None
    assert y.content_hash == j.content_hash == content_hash(kept(objs), None)
    assert len(y.content_hash) == 64


def test_same_cluster_twice_has_the_same_hash_and_any_change_changes_it() -> None:
    text = yaml.safe_dump(as_list(cluster_objects())).encode()
    assert parse_upload(text, "a.yaml").content_hash == parse_upload(text, "b.yaml").content_hash
    changed = cluster_objects()
    changed[4]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "501m"
    assert (
        parse_upload(json.dumps(changed).encode(), "c.json").content_hash
        != parse_upload(text, "a.yaml").content_hash
    )
    # ...and so does the configuration
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    with_cfg = parse_upload(json.dumps([*cluster_objects(), cfg]).encode(), "d.json")
    assert with_cfg.config == cfg and with_cfg.objects == cluster_objects()
    assert with_cfg.content_hash != parse_upload(text, "a.yaml").content_hash


def test_multi_document_yaml_nested_lists_and_a_single_object() -> None:
    objs = cluster_objects()
    docs = [objs[0], objs[1], {"apiVersion": "v1", "kind": "NodeList", "items": objs[2:4]}, *objs[4:]]
    text = "---\n".join(yaml.safe_dump(d) for d in docs) + "---\n"  # a trailing empty document
    parsed = parse_upload(text.encode(), "multi.yaml")
    assert parsed.objects == objs and parsed.documents == len(docs)
    assert parsed.content_hash == parse_upload(json.dumps(as_list(objs)).encode(), "x.json").content_hash
    single = parse_upload(yaml.safe_dump(node("solo")).encode(), "node.yaml")
    assert single.objects == [node("solo")] and single.documents == 1


def test_json_array_and_any_list_kind() -> None:
    objs = cluster_objects()
    arr = parse_upload(json.dumps(objs).encode(), "arr.json")
    assert arr.objects == objs and arr.format == "json"
    pods = parse_upload(
        json.dumps({"apiVersion": "v1", "kind": "PodList", "items": objs[4:]}).encode(), "p.json"
    )
    assert pods.objects == objs[4:]
    empty = parse_upload(b'{"apiVersion": "v1", "kind": "List", "items": []}', "empty.json")
    assert empty.objects == [] and empty.documents == 1


def test_yaml_plain_scalars_resolve_as_kubernetes_reads_them() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  creationTimestamp: 2026-01-02T03:04:05Z
  labels: {enabled: "yes", "7": seven}
  annotations:
    eq: =
spec:
  priority: 10
  containers: [{name: c, image: i, resources: {requests: {cpu: 1, memory: 1Gi}}}]
"""
    obj = parse_upload(text.encode(), "p.yaml").objects[0]
    assert obj["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z"  # not a datetime
    assert obj["metadata"]["annotations"] == {"eq": "="}
    assert obj["metadata"]["labels"] == {"enabled": "yes", "7": "seven"}
    assert obj["spec"]["priority"] == 10
    assert obj["spec"]["containers"][0]["resources"]["requests"] == {"cpu": 1, "memory": "1Gi"}


def test_yaml_anchors_aliases_and_merge_keys_as_python_dumps_them() -> None:
    shared = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    n = node("a")
    n["status"]["allocatable"] = shared
    n["status"]["capacity"] = shared  # yaml.safe_dump writes an anchor and an alias
    text = yaml.safe_dump(n)
    assert "&id" in text and "*id" in text
    parsed = parse_upload(text.encode(), "a.yaml")
    obj = parsed.objects[0]
    assert obj["status"]["allocatable"] == obj["status"]["capacity"] == shared
    assert obj["status"]["allocatable"] is not obj["status"]["capacity"]  # no shared structure leaks out


def test_merge_keys_build_objects() -> None:
    text = """\
- &base {apiVersion: v1, kind: Namespace, metadata: {name: one}}
- <<: *base
  metadata: {name: two}
- <<: [{metadata: {name: three}}, *base]
- <<: *base
  metadata: {name: four}
  kind: Namespace
"""
    parsed = parse_upload(text.encode(), "m.yaml")
    assert [o["metadata"]["name"] for o in parsed.objects] == ["one", "two", "three", "four"]
    assert all(o["kind"] == "Namespace" and o["apiVersion"] == "v1" for o in parsed.objects)


def make_tar(files: dict[str, bytes], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:  # type: ignore[call-overload]
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def make_zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def archive_files() -> dict[str, bytes]:
    objs = cluster_objects()
    return {
        "snap/README.md": b"# not a manifest",
        "snap/b-workloads.json": json.dumps(objs[4:]).encode(),
        "snap/a-cluster.yaml": "---\n".join(yaml.safe_dump(o) for o in objs[:4]).encode(),
        "snap/__MACOSX/._a-cluster.yaml": b"\x00\x05\x16\x07 resource fork",
        "snap/nested.tar.gz": b"\x1f\x8b not read",
    }


@pytest.mark.parametrize(
    ("filename", "build", "fmt"),
    [
        ("snap.tar.gz", lambda f: make_tar(f, "w:gz"), "tar.gz"),
        ("snap.tgz", lambda f: make_tar(f, "w:gz"), "tar.gz"),
        ("snap.tar", lambda f: make_tar(f), "tar"),
        ("snap.zip", make_zip, "zip"),
    ],
)
def test_archives_read_manifests_in_name_order(
    filename: str, build: Callable[[dict[str, bytes]], bytes], fmt: str
) -> None:
    parsed = parse_upload(build(archive_files()), filename)
    assert parsed.format == fmt
    assert parsed.files == ["snap/a-cluster.yaml", "snap/b-workloads.json"]
    assert parsed.objects == cluster_objects()  # a-cluster.yaml before b-workloads.json
    assert parsed.documents == 4 + 1
    assert parsed.content_hash == parse_upload(json.dumps(cluster_objects()).encode(), "x.json").content_hash


def test_a_gzipped_manifest() -> None:
    parsed = parse_upload(
        gzip.compress(yaml.safe_dump(as_list(cluster_objects())).encode()), "cluster.yaml.gz"
    )
    assert (
        parsed.format == "gzip" and parsed.objects == cluster_objects() and parsed.files == ["cluster.yaml"]
    )


def go_style(obj: dict[str, Any]) -> dict[str, Any]:
    """An object as the simulator's Go structs serialise list items: no apiVersion/kind."""
    out = copy.deepcopy(obj)
    del out["apiVersion"], out["kind"]
    out["metadata"].setdefault("creationTimestamp", None)
    return out


def simulator_export(objs: list[dict[str, Any]], scheduler_config: Any = None) -> dict[str, Any]:
    by_kind = {k: [go_style(o) for o in objs if o["kind"] == k] for k in {o["kind"] for o in objs}}
    return {
        "pods": by_kind.get("Pod", []),
        "nodes": by_kind.get("Node", []),
        "pvs": [],
        "pvcs": None,  # Go nil slices
        "storageClasses": [
            {
                "metadata": {"name": "standard"},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        ],
        "priorityClasses": by_kind.get("PriorityClass", []),
        "schedulerConfig": scheduler_config,
        "namespaces": by_kind.get("Namespace", []),
    }


def test_kube_scheduler_simulator_export() -> None:
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}},
            }
        ],
    }
    parsed = parse_upload(json.dumps(simulator_export(cluster_objects(), cfg)).encode(), "export.json")
    assert parsed.format == "kube-scheduler-simulator"
    assert parsed.config == cfg
    kinds = [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in parsed.objects]
    # fixed order: namespaces, priority classes, storage classes, PVs, PVCs, nodes, pods
    assert kinds == [
        ("v1", "Namespace", "prod"),
        ("scheduling.k8s.io/v1", "PriorityClass", "high"),
        ("storage.k8s.io/v1", "StorageClass", "standard"),
        ("v1", "Node", "a"),
        ("v1", "Node", "b"),
        ("v1", "Pod", "web"),
        ("v1", "Pod", "db"),
        ("v1", "Pod", "job"),
    ]
    web = next(o for o in parsed.objects if o["metadata"]["name"] == "web")
    assert web["spec"] == pod("web", cpu="500m", memory="1Gi")["spec"]


def test_simulator_export_without_config_kind_and_with_a_misplaced_object() -> None:
    cfg = {"profiles": [{"schedulerName": "default-scheduler"}]}  # TypeMeta omitted by the Go struct
    parsed = parse_upload(json.dumps(simulator_export(cluster_objects(), cfg)).encode(), "e.json")
    assert parsed.config is not None and parsed.config["kind"] == "KubeSchedulerConfiguration"
    bad = simulator_export(cluster_objects())
    bad["pods"].append({**go_style(node("n9")), "kind": "Node"})
    bad["extra"] = []
    problems = problems_of(json.dumps(bad), "e.json")
    got = {(p.object, p.field) for p in problems}
    assert ("pods[3]", "kind") in got and ("", "extra") in got


@pytest.mark.parametrize("fixture", ["basic/scn-20000.json", "features/feat-22002.json"])
def test_conformance_scenarios(fixture: str) -> None:
    raw = (FIXTURES / fixture).read_bytes()
    scenario = json.loads(raw)
    parsed = parse_upload(raw, fixture.rsplit("/", 1)[1])
    assert parsed.format == "scenario" and parsed.name == scenario["name"]
    expected = scenario.get("nodes", []) + scenario.get("pods", []) + scenario.get("items", [])
    assert parsed.objects == [o for o in expected if o["kind"] != "KubeSchedulerConfiguration"]
    assert parsed.config == scenario["config"]
    # the engine reads the stored objects back exactly
    snap = parsed.engine_snapshot()
    assert len(snap.nodes) == sum(o["kind"] == "Node" for o in expected)
    assert len(snap.pods) == sum(o["kind"] == "Pod" for o in expected)


def test_scheduler_configuration_in_the_upload_is_validated() -> None:
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 120,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}},
            }
        ],
    }
    text = yaml.safe_dump(as_list(cluster_objects())) + "---\n" + yaml.safe_dump(cfg)
    problems = problems_of(text, "with-config.yaml")
    assert all(
        p.document == "with-config.yaml (document 2)" and p.object == "KubeSchedulerConfiguration"
        for p in problems
    )
    assert "percentageOfNodesToScore" in {p.field for p in problems}
    assert "NoSuchPlugin" in text_of(problems)
    two = json.dumps([cfg | {"percentageOfNodesToScore": 50}, cfg | {"percentageOfNodesToScore": 60}])
    assert "more than one KubeSchedulerConfiguration" in text_of(problems_of(two, "two.json"))


def test_parse_objects_validates_already_parsed_documents() -> None:
    parsed = parse_objects(cluster_objects(), source="cluster")
    assert parsed.format == "live" and parsed.objects == cluster_objects()
    assert parsed.content_hash == content_hash(cluster_objects(), None)
    with pytest.raises(UploadError) as info:
        parse_objects([node("x", cpu="many")], source="cluster")
    assert info.value.problems[0].document == "cluster" and info.value.problems[0].object == "Node x"


# --------------------------------------------------------------------------------------------------
# Validation: every problem, named


def test_several_problems_are_reported_together_with_document_object_and_field() -> None:
    objs = [
        node("n1", cpu="lots"),
        pod("p1", priority="high"),  # type: ignore[arg-type]
        {"apiVersion": "v1", "metadata": {"name": "kindless"}},
        {"kind": "Pod", "metadata": {"name": "versionless"}},
        node("n2", taints=[{"key": "k", "effect": "Sometimes"}]),
        pod("p2", cpu="1x"),
        node("ok"),
    ]
    problems = problems_of(json.dumps(as_list(objs)), "bad.json")
    got = [(p.document, p.object, p.field) for p in problems]
    assert got == [
        ("bad.json", "Node n1", "status.allocatable.cpu"),
        ("bad.json", "Pod default/p1", "spec.priority"),
        ("bad.json", "items[2]", "kind"),
        ("bad.json", "Pod versionless", "apiVersion"),
        ("bad.json", "Node n2", "spec.taints[0].effect"),
        ("bad.json", "Pod default/p2", "spec.containers[0].resources.requests.cpu"),
    ]
    assert "invalid quantity" in problems[0].message
    err = UploadError(problems)
    assert err.as_dicts()[0] == {
        "document": "bad.json",
        "object": "Node n1",
        "field": "status.allocatable.cpu",
        "message": problems[0].message,
    }
    assert "bad.json: Node n1: field status.allocatable.cpu: invalid quantity" in str(err)


def test_problems_name_the_document_of_a_multi_document_file_and_the_archive_member() -> None:
    text = yaml.safe_dump(node("a")) + "---\n" + yaml.safe_dump(node("b", memory="8Qi"))
    (p,) = problems_of(text, "nodes.yaml")
    assert (p.document, p.object, p.field) == (
        "nodes.yaml (document 2)",
        "Node b",
        "status.allocatable.memory",
    )
    tgz = make_tar(
        {"dir/good.yaml": yaml.safe_dump(node("a")).encode(), "dir/bad.json": b'{"kind": "Node",'}, "w:gz"
    )
    (p,) = problems_of(tgz, "up.tgz")
    assert p.document == "dir/bad.json" and "invalid JSON" in p.message and "line 1" in p.message


def test_duplicates_are_problems() -> None:
    objs = [
        node("a"),
        pod("p"),
        node("a"),
        pod("p"),
        pod("p", namespace="other"),
        namespace("x"),
        namespace("x"),
    ]
    problems = problems_of(json.dumps(objs), "d.json")
    assert [(p.object, p.message.split(" (")[0]) for p in problems] == [
        ("Node a", "duplicate Node a"),
        ("Pod default/p", "duplicate Pod default/p"),
        ("Namespace x", "duplicate Namespace x"),
    ]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ("just some text\n", "expected a Kubernetes object"),
        ("- 1\n- 2\n", "expected a Kubernetes object"),
        ("foo: 1\nbar: [2]\n", "kind is required"),
        ('{"metadata": {"name": "x"}, "spec": {}}', "not a Kubernetes object named 'x': kind is required"),
        ('"a string"', "expected a Kubernetes object"),
        ("", "no Kubernetes objects found"),
        ("# only a comment\n---\n", "no Kubernetes objects found"),
        ("kind: Node\nkind: Pod\n", "line 2 column 1: duplicate key 'kind'"),
        ('{"kind": "Node", "kind": "Pod"}', "duplicate key 'kind'"),
        ("a: [1, 2\n", "invalid YAML"),
    ],
)
def test_non_kubernetes_and_malformed_documents(data: str, fragment: str) -> None:
    assert fragment in text_of(problems_of(data, "doc.yaml"))


def test_reading_stops_at_the_problem_cap() -> None:
    objs = [node(f"n{i}", cpu="x") for i in range(30)]
    problems = problems_of(json.dumps(objs), "many.json", Limits(max_problems=5))
    assert [p.object for p in problems[:5]] == [f"Node n{i}" for i in range(5)]
    assert len(problems) == 6 and problems[-1].message == "more than 5 problems: stopped reading"


# --------------------------------------------------------------------------------------------------
# Limits


def test_limits_from_env() -> None:
    lim = Limits.from_env(
        {
            "SCHEDVIZ_MAX_UPLOAD_BYTES": "1024",
            "SCHEDVIZ_MAX_DEPTH": " 20 ",
            "SCHEDVIZ_MAX_OBJECTS": "",
            "SCHEDVIZ_MAX_YAML_NODES": "5000",
            "SCHEDVIZ_MAX_JSON_VALUES": "6000",
        }
    )
    assert lim.max_upload_bytes == 1024 and lim.max_depth == 20 and lim.max_objects == Limits().max_objects
    assert lim.max_yaml_nodes == 5000 and lim.max_json_values == 6000
    assert Limits.from_env({}) == Limits()
    # sized for 5,000 nodes x 110 pods (a 1.5-2 GB kubectl JSON dump, 40-60 MB gzip'd)
    assert Limits().max_upload_bytes == 1024 * MiB and Limits().max_decompressed_bytes == 4096 * MiB
    assert Limits().max_objects == 1_000_000 and Limits().max_file_bytes == 200 * MiB
    assert Limits.from_env({"SCHEDVIZ_MAX_COMPRESSION_RATIO": "50"}).max_compression_ratio == 50
    for bad in ("lots", "-5", "0"):
        with pytest.raises(ValueError, match="SCHEDVIZ_MAX_ARCHIVE_MEMBERS"):
            Limits.from_env({"SCHEDVIZ_MAX_ARCHIVE_MEMBERS": bad})


def test_upload_size_limit() -> None:
    problems = refused_fast(b" " * (50 * MiB + 1), "big.yaml", Limits(max_upload_bytes=50 * MiB))
    assert "the limit is 52428800 bytes" in text_of(problems)
    assert "the limit is 100 bytes" in text_of(
        refused_fast(json.dumps([node("a")]).encode(), "a.json", Limits(max_upload_bytes=100))
    )


def test_object_count_limit() -> None:
    many = json.dumps([config_map(f"c{i}") for i in range(100_001)]).encode()  # ignored kinds count too
    assert "more than 100000 objects" in text_of(refused_fast(many, "many.json", Limits(max_objects=100_000)))
    assert parse_upload(json.dumps([node("a")] * 1).encode(), "one.json", Limits(max_objects=1)).objects


# --------------------------------------------------------------------------------------------------
# Kubernetes objects in JSON, counted before the text is built

LIMIT = Limits(max_objects=1000)
TOO_MANY = {
    "document": "many.json",
    "object": "",
    "field": "",
    "message": "more than 1000 objects, the limit",
}


def secret(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}}


def secrets(n: int) -> list[dict[str, Any]]:
    return [secret(f"s{i}") for i in range(n)]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The JSON texts built (given to json.loads) while the test runs."""
    texts: list[str] = []
    real = json.loads

    def loads(text: str, *args: Any, **kwargs: Any) -> Any:
        texts.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", loads)
    return texts


def test_a_json_array_over_the_object_limit_is_refused_before_it_is_built(builds: list[str]) -> None:
    problems = problems_of(json.dumps(secrets(1500)), "many.json", LIMIT)
    assert [p.to_dict() for p in problems] == [TOO_MANY]
    assert builds == []


def test_the_early_refusal_is_the_one_counting_objects_after_reading_gives(builds: list[str]) -> None:
    # 1001 elements may hold 1000 objects and a KubeSchedulerConfiguration: only reading them tells
    late = problems_of(json.dumps(secrets(1001)), "many.json", LIMIT)
    assert len(builds) == 1
    early = problems_of(json.dumps(secrets(1002)), "many.json", LIMIT)
    assert len(builds) == 1
    assert [p.to_dict() for p in late] == [p.to_dict() for p in early] == [TOO_MANY]


@pytest.mark.parametrize("kind", ["List", "SecretList"])
def test_list_items_over_the_object_limit_are_refused_before_they_are_built(
    kind: str, builds: list[str]
) -> None:
    # as kubectl prints it (items before kind, four spaces), with space before the colon
    listed = {"apiVersion": "v1", "items": secrets(1500), "kind": kind, "metadata": {"resourceVersion": ""}}
    text = json.dumps(listed, indent=4).replace('"items": [', '"items" :\n  [', 1)
    assert '"items" :\n  [' in text
    problems = problems_of(text, "many.json", LIMIT)
    assert [p.to_dict() for p in problems] == [TOO_MANY]
    assert builds == []


def test_a_large_kubectl_list_is_refused_quickly_with_the_default_limit(builds: list[str]) -> None:
    tiny = '{"apiVersion":"v1","kind":"Secret"}'
    text = '{"apiVersion":"v1","kind":"List","items":[' + ",".join([tiny] * 1_000_002) + "]}"
    assert "more than 1000000 objects, the limit" in text_of(refused_fast(text.encode(), "many.json"))
    assert builds == []


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize(
    "text",
    [
        # a single object whose array field holds many objects, even one named items
        json.dumps({**config_map("big"), "items": [{"key": f"k{i}"} for i in range(1500)]}),
        json.dumps({**config_map("big"), "data": secrets(1500)}),
        # a List with another large array: only its items are objects
        json.dumps({"apiVersion": "v1", "kind": "List", "items": secrets(3), "spare": secrets(1500)}),
        # lists that may be empty are not counted as objects, however kind is spelt
        json.dumps([{"apiVersion": "v1", "kind": "List", "items": []}] * 1500),
        json.dumps([{"apiVersion": "v1", "kind": "SecretList", "items": []}] * 1500),
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [{"kind": "List", "items": []}] * 1500}),
        "[" + ",".join(['{"apiVersion": "v1", "kind": "Secret\\u004cist", "items": []}'] * 1500) + "]",
        "[" + ",".join([f'{{"apiVersion": "v1", "{_escaped("kind")}": "List"}}'] * 1500) + "]",
        # 1000 objects, a KubeSchedulerConfiguration (not an object) and an empty list: at the limit
        json.dumps(
            [
                *secrets(1000),
                {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                {"apiVersion": "v1", "kind": "List"},
            ]
        ),
    ],
    ids=[
        "array-field-named-items",
        "array-field",
        "list-with-another-array",
        "empty-lists",
        "empty-secret-lists",
        "nested-empty-lists",
        "escaped-list-kind",
        "escaped-kind-key",
        "config-at-the-limit",
    ],
)
def test_what_reading_accepts_is_never_refused_by_the_early_count(text: str) -> None:
    assert json_shape(text).candidates > LIMIT.max_objects  # so the count is taken
    parsed = parse_upload(text.encode(), "big.json", LIMIT)
    assert len(parsed.objects) + sum(parsed.ignored.values()) <= LIMIT.max_objects


def test_strings_do_not_fool_the_object_count() -> None:
    lookalike = '"items": [{}, {}], "kind": "List", {"kind": "SecretList"} [[{{ \\"items\\": ['
    objs = [
        {**secret(f"s{i}"), "data": {lookalike: lookalike, '"items": [': '"kind": "List"'}} for i in range(5)
    ]
    listed = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"annotations": {"a": lookalike}},
        "items": objs,
    }
    text = json.dumps(listed, indent=2)
    assert json_objects(text) == 4  # five Secrets, less one that could be a KubeSchedulerConfiguration
    assert json_objects(text.replace('"kind": "List"', '"kind": "Template"', 1)) == 0
    # a ConfigMap holding a List of 1500 objects in a string
    inner = json.dumps({"apiVersion": "v1", "kind": "List", "items": secrets(1500)})
    text = json.dumps([{**config_map("lists"), "data": {"list.json": inner, "x": inner.replace('"', "")}}])
    assert json_objects(text) == 0
    assert len(parse_upload(text.encode(), "lists.json", LIMIT).objects) == 0


@pytest.mark.parametrize(
    ("doc", "count"),
    [
        (secrets(10), 9),
        ({"apiVersion": "v1", "kind": "List", "items": secrets(10)}, 9),
        ({"apiVersion": "v1", "kind": "PodList", "items": [*secrets(10), 5, "x", [secret("a")]]}, 9),
        ({"kind": "List", "apiVersion": "v1", "items": [secrets(3)] * 4}, 0),  # nested arrays: not counted
        ({**config_map("c"), "items": secrets(10)}, 0),  # not a list
        ({"items": secrets(10)}, 0),  # scenarios and simulator exports are not counted
        ({"apiVersion": "v1", "kind": "List"}, 0),
        ([], 0),
        ({}, 0),
        ("text", 0),
        (12, 0),
    ],
)
def test_json_objects_counts(doc: Any, count: int) -> None:
    text = json.dumps(doc)
    assert json_objects(text) == count
    assert json_shape(text).candidates >= count


@pytest.mark.parametrize("codes", [1, 2, 3, 5, 8, 13])
def test_the_counts_do_not_depend_on_how_the_scan_is_sliced(
    monkeypatch: pytest.MonkeyPatch, codes: int
) -> None:
    s, listed = secret("s"), {"apiVersion": "v1", "kind": "List", "items": secrets(2)}
    docs = [
        {
            "spare": [s, s],
            "kind": "List",
            "items": [s, listed, s, s, [s]],
            "more": [s],
            "metadata": {"a": [s]},
        },
        {"items": [s, s, s], "kind": "SecretList"},
        [s, listed, s, s, listed, s, [s, s], s],
        {"kind": "ConfigMap", "items": [s, s, s, s]},
    ]
    texts = [json.dumps(d, indent=indent) for d in docs for indent in (None, 2)]
    counts = [json_objects(t) for t in texts]
    shapes = [json_shape(t) for t in texts]
    assert counts == [2, 2, 2, 2, 4, 4, 0, 0]
    monkeypatch.setattr(parsing, "_LEVEL_SLICE", codes)  # brackets per numpy slice
    assert [json_objects(t) for t in texts] == counts
    assert [json_shape(t) for t in texts] == shapes


_names = st.sampled_from(["kind", "items", "apiVersion", "data", "List", "k", "Kind"])
_kinds = st.sampled_from(["Secret", "ConfigMap", "List", "SecretList", "Template", "items", "Lis", "LIST"])
_strings = st.text(alphabet='[]{}":,\\ akindtemsLi\u00e9', max_size=8) | _kinds
_junk = st.recursive(
    _strings | st.integers(0, 9) | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_names | _strings, inner, max_size=3),
    max_leaves=8,
)
_config = st.just({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": CONFIG_KIND})


def _k8s(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects and lists of them (what reading accepts, mostly), with fields that look like them."""
    return st.fixed_dictionaries(
        {"apiVersion": st.just("v1"), "kind": _kinds},
        optional={"items": st.lists(inner, max_size=6), "data": _junk, "spare": st.lists(inner, max_size=3)},
    )


_objects = st.recursive(
    _k8s(_junk) | _config,
    lambda inner: _k8s(inner) | st.lists(inner, max_size=6) | _config,
    max_leaves=40,
)
_elements = st.lists(_k8s(_junk) | _k8s(_junk).map(lambda o: {**o, "items": []}) | _objects, max_size=12)
_documents = st.one_of(
    _elements,
    _elements.map(lambda items: {"apiVersion": "v1", "kind": "SecretList", "items": items}),
    _objects,
    _junk,
    _k8s(_junk).map(lambda o: {**o, "kind": 1}),
)


def _spelt(text: str, rng: Any, escapes: float) -> str:
    """A JSON string for ``text``, a share of its characters written as \\u escapes."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif rng.random() < escapes:
            out.append(f"\\u{ord(ch):04{rng.choice('xX')}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _written(value: Any, rng: Any, escapes: float) -> str:
    """``value`` as JSON, spelt and spaced at random: keys in any order, whitespace anywhere."""

    def ws() -> str:
        return str(rng.choice(["", "", " ", "\n    ", "\t", "\r\n"]))

    if isinstance(value, dict):
        members = list(value.items())
        rng.shuffle(members)
        inner = ",".join(
            f"{ws()}{_spelt(k, rng, escapes)}{ws()}:{ws()}{_written(v, rng, escapes)}" for k, v in members
        )
        return "{" + inner + ws() + "}"
    if isinstance(value, list):
        return "[" + ",".join(ws() + _written(v, rng, escapes) for v in value) + ws() + "]"
    if isinstance(value, str):
        return _spelt(value, rng, escapes)
    return json.dumps(value)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents, st.randoms(use_true_random=False), st.sampled_from([0.0, 0.05, 0.3]))
def test_the_object_count_never_exceeds_what_reading_counts(doc: Any, rng: Any, escapes: float) -> None:
    text = _written(doc, rng, escapes)
    assert json.loads(text) == doc
    found = json_objects(text)
    assert found <= json_shape(text).candidates
    try:
        parsed = parse_upload(text.encode(), "doc.json", Limits(max_objects=10**6))
    except UploadError:
        return  # refused whatever the count
    counted = len(parsed.objects) + sum(parsed.ignored.values())
    assert found <= counted
    # and with the limit at what it holds, the upload is still accepted
    assert parse_upload(text.encode(), "doc.json", Limits(max_objects=max(1, counted))).content_hash


FULL = 50 * MiB  # the default upload limit


def test_dense_yaml_of_full_upload_size_is_refused_by_the_node_budget() -> None:
    problems = refused_fast(b"- 1\n" * (FULL // 4), "dense.yaml")  # 13M scalars, the costliest YAML
    assert "more than 1500000 YAML nodes in the upload" in text_of(problems)
    assert "as JSON" in text_of(problems)


@pytest.mark.parametrize(
    "data",
    [
        b"---\n" * 300_000,  # empty documents
        b"a: [" + b"1," * 300_000 + b"1]",  # flow style
        b"a: &a 1\nb: [" + b"*a, " * 150_000 + b"*a]\n",  # aliases count as nodes too
    ],
    ids=["documents", "flow-scalars", "aliases"],
)
def test_every_yaml_node_counts(data: bytes) -> None:
    limits = Limits(max_yaml_nodes=100_000, max_yaml_aliases=10**6, max_alias_expansion=10**7)
    assert "more than 100000 YAML nodes" in text_of(refused_fast(data, "dense.yaml", limits))


def test_yaml_node_budget_spans_the_files_of_an_archive() -> None:
    limits = Limits(max_yaml_nodes=1000)
    three = make_zip(
        {
            f"f{i}.yaml": yaml.safe_dump(as_list([namespace(f"n{i}-{j}") for j in range(40)])).encode()
            for i in range(3)
        }
    )
    one = make_zip({"f.yaml": yaml.safe_dump(as_list([namespace(f"n-{j}") for j in range(40)])).encode()})
    assert len(parse_upload(one, "one.zip", limits).objects) == 40  # ~450 nodes: one file fits
    assert "more than 1000 YAML nodes" in text_of(refused_fast(three, "three.zip", limits))


def test_dense_json_of_full_upload_size_is_refused_before_it_is_built() -> None:
    data = b"[" + b"{}," * (FULL // 3 - 2) + b"{}]"  # 17M empty objects: the costliest JSON
    assert "more than 5000000 JSON values in one file" in text_of(refused_fast(data, "dense.json"))


@pytest.mark.parametrize("item", [b"1", b"1.5", b"[]", b'"s"', b"null"])
def test_every_json_value_counts(item: bytes) -> None:
    data = b"[" + b",".join([item] * 20_000) + b"]"
    limits = Limits(max_json_values=10_000)
    assert "more than 10000 JSON values" in text_of(refused_fast(data, "dense.json", limits))
    try:  # fewer values are read (and judged on their merits)
        parse_upload(b"[" + b",".join([item] * 2_000) + b"]", "ok.json", limits)
    except UploadError as exc:
        assert "JSON values" not in str(exc) and "expected a Kubernetes object" in str(exc)


def test_garbage_dense_json_stops_at_the_problem_cap() -> None:
    data = json.dumps(["x"] * 1_000_000).encode()
    problems = refused_fast(data, "strings.json")
    assert len(problems) == 101 and problems[-1].message == "more than 100 problems: stopped reading"


def test_json_numbers_beyond_float_range_are_refused_but_large_finite_ones_read() -> None:
    assert "out of range" in text_of(problems_of(b'[{"a": 1e400}]', "x.json"))
    assert "out of range" in text_of(problems_of(b"[" + b"9" * 400 + b".0]", "x.json"))
    cm = config_map("c") | {"data": {"big": 1e308, "tiny": 1e-400}}
    assert parse_upload(json.dumps(cm).encode(), "ok.json").ignored == {"ConfigMap": 1}


# --------------------------------------------------------------------------------------------------
# Hostile archives


def zip_bomb(size: int) -> bytes:
    """A zip whose one member inflates ~1000:1 to ``size`` bytes of zeros."""
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        zf.open("bomb.yaml", "w", force_zip64=True) as f,
    ):
        chunk = bytes(4 * MiB)
        for _ in range(size // len(chunk)):
            f.write(chunk)
    return buf.getvalue()


def test_zip_bomb_refused_by_declared_size() -> None:
    data = zip_bomb(256 * MiB)
    assert len(data) < 2 * MiB
    assert "decompress to more than 209715200 bytes" in text_of(refused_fast(data, "bomb.zip"))


def _patch_central_sizes(data: bytes, uncompressed: int) -> bytes:
    """Rewrite every central-directory entry's declared uncompressed size."""
    out = bytearray(data)
    pos = out.find(b"PK\x01\x02")
    while pos >= 0:
        struct.pack_into("<I", out, pos + 24, uncompressed)
        pos = out.find(b"PK\x01\x02", pos + 4)
    return bytes(out)


def test_zip_member_that_inflates_beyond_its_declared_size_is_refused() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("liar.yaml", b" " * (64 * MiB))
    lying = _patch_central_sizes(buf.getvalue(), 1000)
    problems = refused_fast(lying, "liar.zip")
    assert problems[0].document == "liar.yaml"


def test_tar_gz_bomb_refused_while_decompressing() -> None:
    header = tarfile.TarInfo("bomb.yaml")
    header.size = 256 * MiB
    co = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing
    parts = [co.compress(header.tobuf())]
    zeros = bytes(4 * MiB)
    parts += [co.compress(zeros) for _ in range(64)]
    parts.append(co.flush())
    data = b"".join(parts)
    assert len(data) < 2 * MiB
    assert "decompresses to more than 209715200 bytes" in text_of(refused_fast(data, "bomb.tar.gz"))
    # a lone gzip stream too
    assert "decompresses to more than" in text_of(refused_fast(data, "bomb.yaml.gz"))


def test_tar_member_declaring_a_huge_size_is_refused_before_reading() -> None:
    header = tarfile.TarInfo("huge.yaml")
    header.size = 10 * 1024 * MiB
    data = header.tobuf() + bytes(1024)
    assert "decompress to more than" in text_of(refused_fast(data, "huge.tar"))


def test_member_count_limits() -> None:
    tar = make_tar({f"m{i}.txt": b"" for i in range(1001)})
    assert "more than 1000 members" in text_of(refused_fast(tar, "many.tar"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for i in range(1001):
            zf.writestr(f"m{i}.txt", b"")
    assert "more than 1000 members" in text_of(refused_fast(buf.getvalue(), "many.zip"))


def unsafe_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, kind, link in [
            ("/etc/passwd.yaml", tarfile.REGTYPE, ""),
            ("../escape.yaml", tarfile.REGTYPE, ""),
            ("ok/../../up.yaml", tarfile.REGTYPE, ""),
            ("link.yaml", tarfile.SYMTYPE, "/etc/shadow"),
            ("hard.yaml", tarfile.LNKTYPE, "ok/good.yaml"),
            ("dev.yaml", tarfile.CHRTYPE, ""),
            ("pipe.yaml", tarfile.FIFOTYPE, ""),
        ]:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = link
            data = yaml.safe_dump(node("evil")).encode() if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        good = yaml.safe_dump(node("good")).encode()
        info = tarfile.TarInfo("ok/good.yaml")
        info.size = len(good)
        tf.addfile(info, io.BytesIO(good))
    return buf.getvalue()


def test_unsafe_tar_members_are_refused() -> None:
    problems = refused_fast(unsafe_tar(), "evil.tgz")
    got = {p.document: p.message for p in problems}
    assert got == {
        "/etc/passwd.yaml": "archive member refused: absolute path",
        "../escape.yaml": "archive member refused: path contains '..'",
        "ok/../../up.yaml": "archive member refused: path contains '..'",
        "link.yaml": "archive member refused: symbolic link (to '/etc/shadow')",
        "hard.yaml": "archive member refused: hard link (to 'ok/good.yaml')",
        "dev.yaml": "archive member refused: device file",
        "pipe.yaml": "archive member refused: named pipe",
    }


def test_unsafe_zip_members_are_refused() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ok.yaml", yaml.safe_dump(node("a")))
        zf.writestr("../up.yaml", yaml.safe_dump(node("b")))
        zf.writestr("C:/windows.yaml", yaml.safe_dump(node("c")))
        link = zipfile.ZipInfo("link.yaml")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
        dev = zipfile.ZipInfo("dev.yaml")
        dev.external_attr = (stat.S_IFCHR | 0o600) << 16
        zf.writestr(dev, "")
    problems = refused_fast(buf.getvalue(), "evil.zip")
    got = {p.document: p.message for p in problems}
    assert got == {
        "../up.yaml": "archive member refused: path contains '..'",
        "C:/windows.yaml": "archive member refused: absolute path",
        "link.yaml": "archive member refused: symbolic link",
        "dev.yaml": "archive member refused: device or special file",
    }


@pytest.mark.parametrize(
    ("data", "filename", "fragment"),
    [
        (b"PK\x03\x04garbage", "x.zip", "not a valid zip archive"),
        (b"\x1f\x8bgarbage", "x.tgz", "not a valid gzip stream"),
        (b"not really a tar", "x.tar", "not a valid tar archive"),
        (b"just text", "x.tar.gz", "named like an archive"),
        (b"BZh91AY&SY", "x.tar.bz2", "unsupported compression"),
        (make_zip({"notes.txt": b"hello"}), "x.zip", "contains no .yaml, .yml or .json file"),
    ],
)
def test_broken_and_unsupported_archives(data: bytes, filename: str, fragment: str) -> None:
    assert fragment in text_of(refused_fast(data, filename))


# --------------------------------------------------------------------------------------------------
# Hostile documents


DEEP = 100_000


@pytest.mark.parametrize(
    ("text", "filename"),
    [
        ("[" * DEEP + "]" * DEEP, "deep.json"),
        ('{"a":' * DEEP + "1" + "}" * DEEP, "deep.json"),
        ("a: " + "{a: " * DEEP + "1" + "}" * DEEP, "deep.yaml"),
        ("- " * DEEP + "x\n", "deep.yaml"),
        ("".join(" " * i + "a:\n" for i in range(3000)), "deep.yaml"),
        ("kind: List\nitems: " + "[" * DEEP + "]" * DEEP, "deep.yaml"),
    ],
)
def test_100k_deep_nesting_is_refused_quickly(text: str, filename: str) -> None:
    problems = refused_fast(text.encode(), filename)
    # ours ("nesting deeper than 100 levels"), or libyaml's own guard when its lookahead gets there first
    assert "nesting deeper than 100 levels" in text_of(problems) or "maximum nesting depth" in text_of(
        problems
    )
    assert problems[0].document == filename


def nested(depth: int) -> Any:
    """A ConfigMap whose whole document is ``depth`` containers deep (the ConfigMap itself is level 1)."""
    value: Any = "leaf"
    for _ in range(depth - 1):
        value = {"n": value}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep"}, "data": value}


@pytest.mark.parametrize("dump", [json.dumps, yaml.safe_dump])
def test_depth_limit_is_exact(dump: Callable[[Any], str]) -> None:
    assert parse_upload(dump(nested(100)).encode(), "ok").ignored == {"ConfigMap": 1}
    assert "nesting deeper than 100 levels" in text_of(problems_of(dump(nested(101)), "deep"))
    assert parse_upload(dump(nested(20)).encode(), "ok", Limits(max_depth=20)).ignored == {"ConfigMap": 1}
    assert "nesting deeper than 20 levels" in text_of(
        problems_of(dump(nested(21)), "deep", Limits(max_depth=20))
    )


def billion_laughs(levels: int = 9) -> str:
    lines = ['lol0: &lol0 "lol"']
    for i in range(1, levels + 1):
        lines.append(f"lol{i}: &lol{i} [" + ", ".join([f"*lol{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused() -> None:
    problems = refused_fast(billion_laughs().encode(), "lol.yaml")
    assert "YAML aliases expand to more than 100000 nodes beyond the upload's own" in text_of(problems)
    assert problems[0].document == "lol.yaml" and "line " in problems[0].message


def test_quadratic_alias_expansion_is_refused() -> None:
    big = "big: &big [" + ", ".join(["x"] * 5000) + "]\n"
    text = big + "refs: [" + ", ".join(["*big"] * 50) + "]\n"
    assert "YAML aliases expand to more than" in text_of(refused_fast(text.encode(), "quad.yaml"))


def test_too_many_aliases_and_recursive_aliases_are_refused() -> None:
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * 10_001) + "]\n"
    assert "more than 10000 YAML aliases" in text_of(refused_fast(text.encode(), "many.yaml"))
    assert "recursive YAML alias *a" in text_of(refused_fast(b"a: &a [1, *a]\n", "rec.yaml"))
    assert "undefined YAML alias *nope" in text_of(refused_fast(b"a: *nope\n", "undef.yaml"))
    few = "a: &a 1\nb: [" + ", ".join(["*a"] * 20) + "]\n"
    assert "YAML aliases" in text_of(problems_of(few, "few.yaml", Limits(max_yaml_aliases=10)))


@pytest.mark.parametrize(
    "text",
    [
        "!!python/object/apply:os.system ['touch /tmp/schedviz-pwned']\n",
        "kind: !!python/name:os.system\n",
        "metadata: !Ref something\n",
        "data: !!binary aGVsbG8=\n",
        "s: !!set {a, b}\n",
        "o: !!omap [a: 1]\n",
        "t: !!timestamp 2020-01-01\n",
        "x: !<tag:example.com,2000:app/foo> bar\n",
    ],
)
def test_yaml_tags_are_refused(text: str) -> None:
    problems = refused_fast(text.encode(), "tags.yaml")
    assert "is not allowed" in text_of(problems)
    assert not Path("/tmp/schedviz-pwned").exists()


def test_plain_core_tags_are_accepted() -> None:
    text = "apiVersion: !!str v1\nkind: Namespace\nmetadata: !!map {name: !!str 123}\n"
    assert parse_upload(text.encode(), "ok.yaml").objects == [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "123"}}
    ]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"kind: Node\nname: \xc3\x28\n", "not valid UTF-8 text (byte 17"),
        (b"\xff\xff\xff", "not valid UTF-8"),
        (b'{"a": NaN}', "NaN is not valid JSON"),
        (b'{"a": -Infinity}', "-Infinity is not valid JSON"),
        (b'{"a": 1e999}', "out of range"),
        (b"a: .nan\n", "not finite"),
        (b"a: -.inf\n", "not finite"),
        (b'{"a": ' + b"9" * 10_000 + b"}", "invalid JSON"),
        (b"a: " + b"9" * 10_000 + b"\n", "invalid int"),
        (b"? [complex, key]\n: value\n", "mapping keys must be scalars"),
        (b"a: 1\n\x00\n", "invalid YAML"),
    ],
)
def test_bad_encodings_and_values(data: bytes, fragment: str) -> None:
    assert fragment in text_of(refused_fast(data, "bad.yaml"))


def test_utf8_bom_and_utf16_are_read() -> None:
    text = yaml.safe_dump(namespace("x"))
    assert parse_upload(b"\xef\xbb\xbf" + text.encode(), "bom.yaml").objects == [namespace("x")]
    assert parse_upload(text.encode("utf-16"), "ps.yaml").objects == [namespace("x")]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600) | st.text(max_size=300).map(str.encode))
def test_arbitrary_bytes_never_escape_as_anything_but_upload_error(data: bytes) -> None:
    for filename in ("x.yaml", "x.zip", "x.tar.gz"):
        try:
            parsed = parse_upload(data, filename)
        except UploadError as exc:
            assert exc.problems
        else:
            assert isinstance(parsed, ParsedSnapshot)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=2000), st.binary(min_size=1, max_size=8))
def test_corrupted_manifests_and_archives_fail_cleanly(pos: int, junk: bytes) -> None:
    valid = [
        (yaml.safe_dump(as_list(cluster_objects())).encode(), "c.yaml"),
        (make_tar({"a.yaml": yaml.safe_dump(node("a")).encode()}, "w:gz"), "c.tgz"),
        (make_zip({"a.json": json.dumps(node("a")).encode()}), "c.zip"),
    ]
    for data, name in valid:
        p = pos % len(data)
        broken = data[:p] + junk + data[p + len(junk) :]
        try:
            parse_upload(broken, name)
        except UploadError as exc:
            assert exc.problems


def _reference_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_reference_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_reference_depth(v) for v in value), default=0)
    return 0


_tricky_text = st.text(alphabet='[]{}"\\/,:ab \n\u00e9\u2028', max_size=12)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | _tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_tricky_text, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_json_values, st.booleans())
def test_json_depth_matches_a_recursive_count(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=None if ascii_only else 1)
    assert json_depth(text) == _reference_depth(value)
