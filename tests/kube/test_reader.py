"""The one-shot reader (schedviz/kube/reader.py), against a small fake API server on 127.0.0.1 serving
canned list responses."""

from __future__ import annotations

import io
import json
import socket
import threading
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from schedviz.ingestion.parsing import Limits, parse_objects
from schedviz.ingestion.summary import summarize
from schedviz.kube.reader import (
    MAX_RESTARTS,
    RESOURCES,
    ClusterReadError,
    read_cluster,
    read_cluster_report,
    write_cluster,
)
from tests.engine.builders import node, pod

TOKEN = "test-token-123"


def strip_type(obj: dict[str, Any]) -> dict[str, Any]:
    """List items as the API server returns them: no apiVersion/kind."""
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def ns(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}


@dataclass
class FakeApiServer:
    """Serves GET list endpoints from ``routes`` (path -> items), paginating with limit/continue."""

    routes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    singles: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: dict[str, int] = field(default_factory=dict)  # path -> forced HTTP status
    requests: list[tuple[str, dict[str, list[str]]]] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    # path -> how many continued list requests to answer 410 Expired (a compacted revision)
    expire: dict[str, int] = field(default_factory=dict)
    url: str = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                server.requests.append((url.path, query))
                server.auth.append(self.headers.get("Authorization", ""))
                if url.path in server.status:
                    code = server.status[url.path]
                    self._send(
                        code, {"kind": "Status", "status": "Failure", "message": f"no ({code})", "code": code}
                    )
                elif url.path in server.singles:
                    self._send(200, server.singles[url.path])
                elif url.path in server.routes and "continue" in query and server.expire.get(url.path, 0) > 0:
                    server.expire[url.path] -= 1
                    self._send(
                        410,
                        {
                            "kind": "Status",
                            "status": "Failure",
                            "message": "The provided continue parameter is too old to display a consistent list "
                            "result. You can start a new list without the continue parameter.",
                            "reason": "Expired",
                            "code": 410,
                        },
                    )
                elif url.path in server.routes:
                    items = server.routes[url.path]
                    start = int(query.get("continue", ["0"])[0])
                    limit = int(query.get("limit", [str(len(items) or 1)])[0])
                    page = items[start : start + limit]
                    more = start + limit < len(items)
                    body = {
                        "kind": "List",
                        "metadata": {"continue": str(start + limit) if more else ""},
                        "items": page,
                    }
                    self._send(200, body)
                else:
                    self._send(
                        404,
                        {
                            "kind": "Status",
                            "status": "Failure",
                            "message": "the server could not find the requested resource",
                            "code": 404,
                        },
                    )

            def _send(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def paths(self) -> list[str]:
        return [p for p, _ in self.requests]


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    fake = FakeApiServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def kubeconfig(tmp_path: Path, server: str) -> str:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fake", "cluster": {"server": server}}],
        "users": [{"name": "tester", "user": {"token": TOKEN}}],
        "contexts": [
            {"name": "fake", "context": {"cluster": "fake", "user": "tester"}},
            {"name": "nowhere", "context": {"cluster": "dead", "user": "tester"}},
        ],
        "current-context": "fake",
    }
    dead_port = _free_port()
    cfg["clusters"].append({"name": "dead", "cluster": {"server": f"http://127.0.0.1:{dead_port}"}})  # type: ignore[attr-defined]
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def populate(api: FakeApiServer) -> None:
    api.routes.update(
        {
            "/api/v1/namespaces": [ns("default"), ns("prod")],
            "/api/v1/nodes": [strip_type(node("a", cpu="4")), strip_type(node("b"))],
            "/api/v1/pods": [
                strip_type(pod("p0", node_name="a", cpu="1")),
                strip_type(pod("p1", cpu="500m")),
                strip_type(pod("p2", namespace="prod", node_name="a", cpu="2")),
                strip_type(pod("done", node_name="b", cpu="3", phase="Succeeded")),
                strip_type(pod("failed", node_name="b", phase="Failed")),
            ],
            "/api/v1/namespaces/prod/pods": [strip_type(pod("p2", namespace="prod", node_name="a", cpu="2"))],
            "/api/v1/namespaces/prod/services": [
                {"metadata": {"name": "svc", "namespace": "prod"}, "spec": {}}
            ],
            "/api/v1/services": [{"metadata": {"name": "svc", "namespace": "prod"}, "spec": {}}],
            "/api/v1/replicationcontrollers": [],
            "/api/v1/persistentvolumes": [],
            "/api/v1/persistentvolumeclaims": [],
            "/apis/apps/v1/replicasets": [
                {"metadata": {"name": "rs", "namespace": "prod"}, "spec": {"selector": {"matchLabels": {"app": "rs"}}}}
            ],
            "/apis/apps/v1/statefulsets": [],
            "/apis/policy/v1/poddisruptionbudgets": [],
            "/apis/scheduling.k8s.io/v1/priorityclasses": [{"metadata": {"name": "high"}, "value": 1000}],
            "/apis/storage.k8s.io/v1/storageclasses": [
                {"metadata": {"name": "standard"}, "provisioner": "x"}
            ],
            "/apis/storage.k8s.io/v1/csinodes": [],
            "/apis/storage.k8s.io/v1/csidrivers": [],
            "/apis/storage.k8s.io/v1/csistoragecapacities": [],
            "/apis/storage.k8s.io/v1/volumeattachments": [],
            # resource.k8s.io is not served by this "cluster": 404, skipped
        }
    )
    api.singles["/api/v1/namespaces/prod"] = ns("prod")


def test_reads_every_kind_with_apiversion_and_kind_and_follows_pages(
    api: FakeApiServer, tmp_path: Path
) -> None:
    populate(api)
    report = read_cluster_report(kubeconfig(tmp_path, api.url), page_size=2)
    objs = report.objects
    assert report.server == api.url
    assert all(a == f"Bearer {TOKEN}" for a in api.auth)
    kinds = [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objs]
    assert kinds == [
        ("v1", "Namespace", "default"),
        ("v1", "Namespace", "prod"),
        ("scheduling.k8s.io/v1", "PriorityClass", "high"),
        ("v1", "Node", "a"),
        ("v1", "Node", "b"),
        ("v1", "Pod", "p0"),
        ("v1", "Pod", "p1"),
        ("v1", "Pod", "p2"),
        ("v1", "Pod", "done"),  # finished pods are kept
        ("v1", "Pod", "failed"),
        ("v1", "Service", "svc"),
        ("apps/v1", "ReplicaSet", "rs"),
        ("storage.k8s.io/v1", "StorageClass", "standard"),
    ]
    assert list(objs[3])[:2] == ["apiVersion", "kind"]  # as kubectl prints them
    assert objs[3] == node("a", cpu="4")
    # five pods in pages of two: three requests, the 2nd and 3rd continuing
    pod_queries = [q for p, q in api.requests if p == "/api/v1/pods"]
    assert [q.get("continue") for q in pod_queries] == [None, ["2"], ["4"]]
    assert all(q["limit"] == ["2"] for q in pod_queries)
    assert report.skipped == {
        k: "not served by this cluster" for k in ("DeviceClass", "ResourceSlice", "ResourceClaim")
    }
    assert report.counts["Pod"] == 5 and report.counts["Node"] == 2
    # every kind the scheduler reads was asked for
    assert len({p for p in api.paths()}) == len(RESOURCES)


def test_the_objects_validate_and_summarise_like_an_upload(api: FakeApiServer, tmp_path: Path) -> None:
    populate(api)
    objs = read_cluster(kubeconfig(tmp_path, api.url))
    parsed = parse_objects(objs)
    assert parsed.objects == objs and parsed.format == "live"
    s = summarize(parsed.objects)
    a = next(n for n in s["nodes"] if n["name"] == "a")
    assert a["requested"]["cpu"] == 3000 and a["requested"]["pods"] == 2
    b = next(n for n in s["nodes"] if n["name"] == "b")
    assert b["requested"]["pods"] == 0  # Succeeded and Failed pods do not count
    assert s["counts"]["finished"] == 2 and s["counts"]["pending"] == 1


def test_namespaces_restrict_namespaced_kinds(api: FakeApiServer, tmp_path: Path) -> None:
    populate(api)
    objs = read_cluster(kubeconfig(tmp_path, api.url), namespaces=["prod", "prod"])
    assert [
        (o["kind"], o["metadata"]["name"]) for o in objs if o["kind"] in ("Namespace", "Pod", "Service")
    ] == [
        ("Namespace", "prod"),
        ("Pod", "p2"),
        ("Service", "svc"),
    ]
    paths = api.paths()
    assert "/api/v1/pods" not in paths and "/api/v1/namespaces/prod/pods" in paths
    assert "/api/v1/namespaces" not in paths and paths.count("/api/v1/namespaces/prod") == 1
    assert "/api/v1/nodes" in paths  # cluster-scoped kinds are read in full
    with pytest.raises(ClusterReadError, match="namespace 'nope' does not exist"):
        read_cluster(kubeconfig(tmp_path, api.url), namespaces=["nope"])


def test_forbidden_optional_kinds_are_skipped_but_required_ones_fail(
    api: FakeApiServer, tmp_path: Path
) -> None:
    populate(api)
    api.status["/apis/policy/v1/poddisruptionbudgets"] = 403
    report = read_cluster_report(kubeconfig(tmp_path, api.url))
    assert report.skipped["PodDisruptionBudget"] == "forbidden for these credentials"
    api.status["/api/v1/pods"] = 403
    with pytest.raises(ClusterReadError) as info:
        read_cluster(kubeconfig(tmp_path, api.url))
    assert f"{api.url}: listing Pod objects: HTTP 403" in str(info.value) and "no (403)" in str(info.value)
    api.status["/api/v1/pods"] = 500
    with pytest.raises(ClusterReadError, match="HTTP 500"):
        read_cluster(kubeconfig(tmp_path, api.url))


def test_object_limit(api: FakeApiServer, tmp_path: Path) -> None:
    populate(api)
    with pytest.raises(ClusterReadError, match="more than 5 objects"):
        read_cluster(kubeconfig(tmp_path, api.url), limits=Limits(max_objects=5))


def test_bad_kubeconfig_context_and_unreachable_server(api: FakeApiServer, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, api.url)
    with pytest.raises(ClusterReadError, match=r"kubeconfig .*missing"):
        read_cluster(path, context="missing")
    with pytest.raises(ClusterReadError, match="no-such-file: no such file"):
        read_cluster(str(tmp_path / "no-such-file"))
    (tmp_path / "garbage").write_text("clusters: [: nope\n")
    with pytest.raises(ClusterReadError, match="kubeconfig"):
        read_cluster(str(tmp_path / "garbage"))
    with pytest.raises(ClusterReadError, match=r"cannot read the cluster at http://127\.0\.0\.1:"):
        read_cluster(path, context="nowhere")
    assert api.requests == []


def test_malformed_list_responses(api: FakeApiServer, tmp_path: Path) -> None:
    populate(api)
    api.routes["/api/v1/nodes"] = "not a list"  # type: ignore[assignment]
    with pytest.raises(ClusterReadError, match="items are not a list"):
        read_cluster(kubeconfig(tmp_path, api.url))
    api.routes["/api/v1/nodes"] = [["an item that is no object"]]
    with pytest.raises(
        ClusterReadError, match="listing Node objects: the API server returned a non-object item"
    ):
        read_cluster(kubeconfig(tmp_path, api.url))


def test_an_expired_continue_token_restarts_that_kinds_list(api: FakeApiServer, tmp_path: Path) -> None:
    populate(api)
    api.expire["/api/v1/pods"] = 2  # the 2nd page's token expires; then again on the retry
    report = read_cluster_report(kubeconfig(tmp_path, api.url), page_size=2)
    pods = [o["metadata"]["name"] for o in report.objects if o["kind"] == "Pod"]
    assert pods == ["p0", "p1", "p2", "done", "failed"]  # each once, in order
    assert report.counts["Pod"] == 5
    pod_queries = [q.get("continue") for p, q in api.requests if p == "/api/v1/pods"]
    # first page, 410, first page again, 410, then the whole list
    assert pod_queries == [None, ["2"], None, ["2"], None, ["2"], ["4"]]
    # written to a file, the same objects, nothing twice
    api.expire["/api/v1/pods"] = 1
    out = io.StringIO()
    written = write_cluster(kubeconfig(tmp_path, api.url), out, page_size=2)
    doc = json.loads(out.getvalue())
    assert doc["kind"] == "List" and doc["items"] == report.objects
    assert written.counts == report.counts and written.objects == []


def test_a_token_that_keeps_expiring_fails_the_read(api: FakeApiServer, tmp_path: Path) -> None:
    populate(api)
    api.expire["/api/v1/pods"] = MAX_RESTARTS + 1
    with pytest.raises(ClusterReadError, match="listing Pod objects: the continue token expired 6 times"):
        read_cluster(kubeconfig(tmp_path, api.url), page_size=2)


def test_writing_a_large_cluster_holds_one_page(api: FakeApiServer, tmp_path: Path) -> None:
    """20,000 pods listed 500 at a time: writing them to a file holds about a page, not the cluster."""
    populate(api)
    api.routes["/api/v1/pods"] = [
        strip_type(pod(f"p{i}", node_name="a", cpu="10m", labels={"app": f"a{i % 50}", "pad": "x" * 60}))
        for i in range(20_000)
    ]
    path = kubeconfig(tmp_path, api.url)
    tracemalloc.start()
    try:
        with (tmp_path / "out.json").open("w") as out:
            write_cluster(path, out)
        _, written_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        in_memory = read_cluster(path)
        _, listed_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(in_memory) > 20_000
    assert json.loads((tmp_path / "out.json").read_text())["items"] == in_memory
    # the whole list in memory takes tens of MiB; the file writer a few (a page, and the server's answer)
    assert listed_peak > 20 * 1024 * 1024
    assert written_peak < listed_peak / 4, (written_peak, listed_peak)
