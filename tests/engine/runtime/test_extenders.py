"""Scheduler extenders over real HTTP(S): runtime/extenders.py and its hooks in the replay.

Every test talks to extender servers running on 127.0.0.1 in threads (http.server). Expected values
come from upstream's rules: extender.go (wire format, errors, TLS), schedule_one.go
(findNodesThatPassExtenders, prioritizeNodes: score * weight * (100 / 10), extendersBinding),
scheduler.go buildExtenders (ignorable extenders last, ignoredByScheduler) and preemption.go
callExtenders.
"""

from __future__ import annotations

import base64
import datetime
import json
import signal
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from schedviz.engine import ConfigError, load_config
from schedviz.engine.loader import Snapshot
from schedviz.engine.objects import Node, Pod
from schedviz.engine.runtime.extenders import (
    FILTER_RESULT,
    HOST_PRIORITY_LIST,
    NOT_INTERESTED,
    ExtenderError,
    HTTPExtender,
    decode_answer,
)
from schedviz.engine.runtime.replay import Replay
from tests.engine.builders import container, node, pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
NO_SCORE = {"schedulerName": "default-scheduler", "plugins": {"score": {"disabled": [{"name": "*"}]}}}
# DefaultPreemption as the only PostFilter plugin, so that messages carry its part alone
PREEMPTION_ONLY = {
    "schedulerName": "default-scheduler",
    "plugins": {"postFilter": {"disabled": [{"name": "*"}], "enabled": [{"name": "DefaultPreemption"}]}},
}
TEST_SECONDS = 30


@pytest.fixture(autouse=True)
def _bounded() -> Iterator[None]:
    """Fail any test of this module that runs longer than TEST_SECONDS."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"test took more than {TEST_SECONDS}s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, TEST_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# --------------------------------------------------------------------------------------------------
# A fake extender: a real HTTP server answering each verb with a function of the request body


@dataclass
class Reply:
    body: Any = None  # JSON-ready, or bytes sent as they are
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering
    stall_body: bool = False  # send the headers and one byte, then wait ``delay``
    reset: bool = False  # read the request, then reset the connection (RST) without answering


Answer = Callable[[dict[str, Any]], Reply]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        verb = self.path.rsplit("/", 1)[-1]
        body = json.loads(raw)
        fake.requests.append((verb, body, self.headers.get("Content-Type", "")))
        answer = fake.answers.get(verb)
        reply = answer(body) if answer is not None else Reply(status=404)
        if reply.reset:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if reply.delay and not reply.stall_body:
            fake.release.wait(reply.delay)
        data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if reply.stall_body:
                self.wfile.write(data[:1])
                self.wfile.flush()
                fake.release.wait(reply.delay)
                return
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (timeout tests)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeExtender

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # failed TLS handshakes are part of the tests


class FakeExtender:
    def __init__(self, tls: ssl.SSLContext | None = None, **answers: Answer) -> None:
        self.answers: dict[str, Answer] = dict(answers)
        self.requests: list[tuple[str, dict[str, Any], str]] = []
        self.release = threading.Event()
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.fake = self
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_port}"

    def calls(self, verb: str) -> list[dict[str, Any]]:
        return [b for v, b, _ in self.requests if v == verb]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeExtender]]:
    started: list[FakeExtender] = []

    def start(tls: ssl.SSLContext | None = None, **answers: Answer) -> FakeExtender:
        fake = FakeExtender(tls, **answers)
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.close()


def sent_names(body: dict[str, Any]) -> list[str]:
    """The node names of a filter/prioritize request, whichever form it took."""
    if body.get("NodeNames") is not None:
        return list(body["NodeNames"])
    return [n["metadata"]["name"] for n in body["Nodes"]["items"]]


def keep(
    passing: Callable[[str], bool],
    failed: dict[str, str] | None = None,
    unresolvable: dict[str, str] | None = None,
) -> Answer:
    """A filter answer keeping the nodes ``passing`` accepts, in the request's own form."""

    def answer(body: dict[str, Any]) -> Reply:
        out: dict[str, Any] = {
            "FailedNodes": failed or {},
            "FailedAndUnresolvableNodes": unresolvable or {},
            "Error": "",
        }
        if body.get("NodeNames") is not None:
            out["NodeNames"] = [n for n in body["NodeNames"] if passing(n)]
        else:
            out["Nodes"] = {
                "metadata": {},
                "items": [n for n in body["Nodes"]["items"] if passing(n["metadata"]["name"])],
            }
        return Reply(out)

    return answer


def scores(table: dict[str, int]) -> Answer:
    return lambda body: Reply([{"Host": n, "Score": table[n]} for n in sent_names(body) if n in table])


def fixed(body: Any, status: int = 200, delay: float = 0.0, stall_body: bool = False) -> Answer:
    return lambda _: Reply(body, status, delay, stall_body)


def config(*extenders: dict[str, Any], profiles: list[dict[str, Any]] | None = None) -> Any:
    raw: dict[str, Any] = {**V1, "extenders": list(extenders)}
    if profiles is not None:
        raw["profiles"] = profiles
    return load_config(raw)


def replay(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], cfg: Any
) -> tuple[Replay, dict[str, Any]]:
    r = Replay(
        Snapshot(nodes=[Node(n) for n in nodes], pods=[Pod(p, i) for i, p in enumerate(pods)], objects=[]),
        cfg,
    )
    return r, r.run().to_dict()


def stages(cycle: dict[str, Any], plugin: str) -> list[dict[str, Any]]:
    return [s for s in cycle["stages"] if s["plugin"] == plugin]


def three_nodes() -> list[dict[str, Any]]:
    return [node("n1"), node("n2"), node("n3")]


# --------------------------------------------------------------------------------------------------
# Filter


@pytest.mark.parametrize("cache_capable", [True, False], ids=["nodeCacheCapable", "nodeObjects"])
def test_filter_rejects_nodes_with_reasons(serve: Callable[..., FakeExtender], cache_capable: bool) -> None:
    nodes = [node("n1"), node("n2"), node("n3"), node("n4")]
    fake = serve(
        filter=keep(
            lambda n: n in ("n1", "n2"),
            failed={"n3": "no GPU left", "n4": "also failed"},
            unresolvable={"n4": "wrong rack"},  # takes precedence over FailedNodes
        )
    )
    cfg = config({"urlPrefix": fake.url + "/", "filterVerb": "filter", "nodeCacheCapable": cache_capable})
    p = pod("p", cpu="100m")
    _, d = replay(nodes, [p], cfg)
    c = d["cycles"][0]
    assert c["result"] == "Scheduled" and c["selectedNode"] in ("n1", "n2")

    (body,) = fake.calls("filter")
    assert fake.requests[0][2] == "application/json"
    assert body["Pod"] == p
    if cache_capable:
        assert body["Nodes"] is None and sorted(body["NodeNames"]) == ["n1", "n2", "n3", "n4"]
    else:
        assert body["NodeNames"] is None and body["Nodes"]["metadata"] == {}
        assert sorted(body["Nodes"]["items"], key=lambda n: n["metadata"]["name"]) == nodes

    # the extender's name is its urlPrefix, as upstream's Name()
    name = fake.url + "/"
    n = c["nodes"]
    assert n["n3"]["filter"] == {"code": "Unschedulable", "plugin": name, "reasons": ["no GPU left"]}
    assert n["n4"]["filter"] == {
        "code": "UnschedulableAndUnresolvable",
        "plugin": name,
        "reasons": ["wrong rack"],
    }
    assert n["n1"]["filter"]["code"] == "Success" and "total" in n["n1"]
    assert "scores" not in n["n3"]
    (st,) = stages(c, name)
    assert st["point"] == "Filter" and st["code"] == "Success"
    assert st["details"] == {
        "extender": "filter",
        "nodes": 4,
        "nodeCacheCapable": cache_capable,
        "passed": 2,
        "failed": 1,
        "unresolvable": 1,
    }
    assert "unschedulablePlugins" not in c


NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"


@pytest.mark.parametrize(
    ("nodes", "answer", "message", "plugins"),
    [
        pytest.param(
            three_nodes(),
            keep(lambda n: False, failed={"n1": "A", "n2": "A"}, unresolvable={"n3": "B"}),
            # the Unschedulable ones are preemption candidates, without victims
            f"0/3 nodes are available: 1 B, 2 A. preemption: 0/3 nodes are available: 1 {NOT_HELPFUL}, 2 {NO_VICTIMS}.",
            ["Extender"],
            id="failure-maps",
        ),
        pytest.param(
            three_nodes(),
            keep(lambda n: False),
            # dropped without a message: no status at all, so no reason and no preemption candidate
            f"0/3 nodes are available: preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}.",
            ["Extender"],
            id="dropped-silently",
        ),
        pytest.param(
            three_nodes(),
            fixed({}),
            f"0/3 nodes are available: preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}.",
            ["Extender"],
            id="answer-without-node-list",
        ),
        pytest.param(
            three_nodes(),
            fixed(None),
            f"0/3 nodes are available: preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}.",
            ["Extender"],
            id="null-answer",
        ),
        pytest.param(
            [node("n1"), node("n2"), node("n3", unschedulable=True)],
            keep(lambda n: False, failed={"n1": "A", "n2": "A"}),
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 A. "
            f"preemption: 0/3 nodes are available: 1 {NOT_HELPFUL}, 2 {NO_VICTIMS}.",
            ["Extender", "NodeUnschedulable"],
            id="with-a-filter-plugin",
        ),
        pytest.param(
            [node("n1"), node("n2"), node("n3", unschedulable=True)],
            # a node the plugins rejected gets the extender's status when the extender names it
            keep(lambda n: False, failed={"n1": "A", "n2": "A", "n3": "A"}),
            f"0/3 nodes are available: 3 A. preemption: 0/3 nodes are available: {3} {NO_VICTIMS}.",
            ["Extender", "NodeUnschedulable"],
            id="overwrites-plugin-status",
        ),
    ],
)
def test_extenders_reject_every_node(
    serve: Callable[..., FakeExtender],
    nodes: list[dict[str, Any]],
    answer: Answer,
    message: str,
    plugins: list[str],
) -> None:
    fake = serve(filter=answer)
    cfg = config(
        {"urlPrefix": fake.url, "filterVerb": "filter", "nodeCacheCapable": True}, profiles=[PREEMPTION_ONLY]
    )
    _, d = replay(nodes, [pod("p", cpu="100m")], cfg)
    c = d["cycles"][0]
    assert c["result"] == "Unschedulable"
    assert c["message"] == message
    assert c["unschedulablePlugins"] == plugins
    assert c["selectedNode"] is None and c["nominatedNode"] is None


def test_silently_dropped_nodes_are_absent_under_a_prefilter_subset(
    serve: Callable[..., FakeExtender],
) -> None:
    """Nodes an extender drops without a message count with the absent status, which names the
    narrowing PreFilter plugin when one narrowed the nodes."""
    nodes = [node("n1"), node("n2"), node("n3")]
    p = pod("p", cpu="100m", nodeSelector={"kubernetes.io/hostname": "n1"})
    p["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                    for name in ("n1", "n2")
                ]
            }
        }
    }
    fake = serve(filter=keep(lambda n: False))
    profile = {**NO_SCORE, "plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}
    cfg = config(
        {"urlPrefix": fake.url, "filterVerb": "filter", "nodeCacheCapable": True}, profiles=[profile]
    )
    _, d = replay(nodes, [p], cfg)
    c = d["cycles"][0]
    # n2 fails the node selector; n1 passes and is dropped silently; n3 is outside the subset
    assert c["message"] == (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    assert c["nodes"]["n1"]["filter"] == {
        "code": "UnschedulableAndUnresolvable",
        "plugin": fake.url,
        "reasons": [],
    }
    assert c["unschedulablePlugins"] == ["Extender", "NodeAffinity"]


def test_extenders_filter_in_order_ignorable_last(serve: Callable[..., FakeExtender]) -> None:
    """buildExtenders puts ignorable extenders after the others; each one sees what the previous passed."""
    order: list[str] = []

    def track(name: str, answer: Answer) -> Answer:
        def run(body: dict[str, Any]) -> Reply:
            order.append(name)
            return answer(body)

        return run

    a = serve(filter=track("a", keep(lambda n: n != "n1", failed={"n1": "a says no"})))
    b = serve(filter=track("b", keep(lambda n: n != "n2", failed={"n2": "b says no"})))
    c_ = serve(filter=track("c", keep(lambda n: n != "n3", failed={"n3": "c says no"})))
    cfg = config(
        {"urlPrefix": a.url, "filterVerb": "filter", "nodeCacheCapable": True, "ignorable": True},
        {"urlPrefix": b.url, "filterVerb": "filter", "nodeCacheCapable": True},
        {"urlPrefix": c_.url, "filterVerb": "filter", "nodeCacheCapable": True},
    )
    _, d = replay([node(f"n{i}") for i in range(1, 5)], [pod("p", cpu="100m")], cfg)
    c = d["cycles"][0]
    assert order == ["b", "c", "a"]
    assert sorted(b.calls("filter")[0]["NodeNames"]) == ["n1", "n2", "n3", "n4"]
    assert sorted(c_.calls("filter")[0]["NodeNames"]) == ["n1", "n3", "n4"]
    assert sorted(a.calls("filter")[0]["NodeNames"]) == ["n1", "n4"]
    assert c["selectedNode"] == "n4"
    assert [s["plugin"] for s in c["stages"] if s["point"] == "Filter" and "details" in s] == [
        b.url,
        c_.url,
        a.url,
    ]
    assert {k: v["filter"]["plugin"] for k, v in c["nodes"].items()} == {
        "n1": a.url,
        "n2": b.url,
        "n3": c_.url,
        "n4": "",
    }


@pytest.mark.parametrize(
    ("verbs", "score_plugins", "to_find"),
    [
        pytest.param({}, False, 1, id="nothing-scores-no-extender-filter"),
        pytest.param({"filterVerb": "filter"}, False, 5, id="extender-filter"),
        pytest.param({"prioritizeVerb": "prioritize", "weight": 1}, False, 5, id="extender-prioritizer"),
        pytest.param({"bindVerb": "bind"}, False, 1, id="binder-only"),
        pytest.param({}, True, 5, id="score-plugins"),
    ],
)
def test_node_sampling_with_extenders(
    serve: Callable[..., FakeExtender], verbs: dict[str, Any], score_plugins: bool, to_find: int
) -> None:
    """findNodesThatPassFilters looks for one feasible node only when neither score plugins, nor
    prioritizing extenders, nor filtering extenders are configured."""
    fake = serve(filter=keep(lambda n: True), prioritize=scores({}), bind=fixed({}))
    cfg = config(
        {"urlPrefix": fake.url, "nodeCacheCapable": True, **verbs},
        profiles=None if score_plugins else [NO_SCORE],
    )
    _, d = replay([node(f"n{i}") for i in range(5)], [pod("p", cpu="100m")], cfg)
    c = d["cycles"][0]
    assert c["result"] == "Scheduled"
    assert c["nodesToFind"] == to_find and c["evaluatedNodes"] == to_find
    if "filterVerb" in verbs:
        assert len(fake.calls("filter")[0]["NodeNames"]) == 5


# --------------------------------------------------------------------------------------------------
# Prioritize


@pytest.mark.parametrize(
    ("extenders", "selected", "columns", "skipped"),
    [
        pytest.param(
            [(1, scores({"n1": 10, "n2": 2})), (5, scores({"n2": 3, "n3": 1}))],
            "n2",
            # column -> node -> (raw, normalized = raw * 10, weighted = raw * 10 * weight)
            [
                {"n1": (10, 100, 100), "n2": (2, 20, 20), "n3": (0, 0, 0)},
                {"n1": (0, 0, 0), "n2": (3, 30, 150), "n3": (1, 10, 50)},
            ],
            [],
            id="weights",
        ),
        pytest.param(
            [
                (
                    2,
                    fixed(
                        [
                            {"Host": "n1", "Score": 4},
                            {"Host": "n1", "Score": 3},
                            {"Host": "ghost", "Score": 10},
                            {"host": "n2", "score": 5},
                        ]
                    ),
                )
            ],
            "n1",
            [{"n1": (7, 70, 140), "n2": (5, 50, 100), "n3": (0, 0, 0)}],
            [],
            id="repeated-host-adds-unknown-ignored-keys-case-insensitive",
        ),
        pytest.param(
            [(1, scores({"n1": -5, "n2": 20, "n3": 0}))],
            "n2",
            [{"n1": (-5, -50, -50), "n2": (20, 200, 200), "n3": (0, 0, 0)}],
            [],
            id="not-clamped",
        ),
        pytest.param(
            [(3, fixed("oops", status=500)), (1, scores({"n3": 1}))],
            "n3",
            [{"n1": (0, 0, 0), "n2": (0, 0, 0), "n3": (1, 10, 10)}],
            [0],
            id="failing-prioritizer-gives-no-score",
        ),
    ],
)
def test_prioritize(
    serve: Callable[..., FakeExtender],
    extenders: list[tuple[int, Answer]],
    selected: str,
    columns: list[dict[str, tuple[int, int, int]]],
    skipped: list[int],
) -> None:
    fakes = [serve(prioritize=answer) for _, answer in extenders]
    cfg = config(
        *(
            {"urlPrefix": f.url, "prioritizeVerb": "prioritize", "weight": w}
            for f, (w, _) in zip(fakes, extenders, strict=True)
        ),
        profiles=[NO_SCORE],
    )
    _, d = replay(three_nodes(), [pod("p", cpu="100m")], cfg)
    c = d["cycles"][0]
    assert c["selectedNode"] == selected
    ok = [f for k, f in enumerate(fakes) if k not in skipped]
    assert c["scorePlugins"] == [f.url for f in ok]
    assert c["scoreWeights"] == {
        f.url: w for k, (f, (w, _)) in enumerate(zip(fakes, extenders, strict=True)) if k not in skipped
    }
    assert c["skippedScorePlugins"] == [fakes[k].url for k in skipped]
    for f, col in zip(ok, columns, strict=True):
        for n, (raw, norm, weighted) in col.items():
            assert c["nodes"][n]["scores"][f.url] == {"raw": raw, "normalized": norm, "weighted": weighted}
    for n in ("n1", "n2", "n3"):
        assert c["nodes"][n]["total"] == sum(col[n][2] for col in columns)
    for k in skipped:
        (st,) = stages(c, fakes[k].url)
        assert (
            st["code"] == "Skip"
            and st["reason"] == f"failed prioritize with extender at URL {fakes[k].url}/prioritize, code 500"
        )
        assert c["nodes"]["n1"]["scores"][fakes[k].url] == {"skipped": True}


def test_prioritize_adds_to_plugin_scores(serve: Callable[..., FakeExtender]) -> None:
    """With the default score plugins the extender's weighted score is added to the plugins' total."""
    fake = serve(prioritize=scores({"n3": 7}))
    cfg = config({"urlPrefix": fake.url, "prioritizeVerb": "prioritize", "weight": 4})
    _, d = replay(three_nodes(), [pod("p", cpu="100m")], cfg)
    c = d["cycles"][0]
    totals = {n: c["nodes"][n]["total"] for n in ("n1", "n2", "n3")}
    assert totals["n3"] - totals["n1"] == 7 * 4 * 10 and totals["n1"] == totals["n2"]
    assert c["selectedNode"] == "n3" and c["scorePlugins"][-1] == fake.url
    body = fake.calls("prioritize")[0]
    assert body["NodeNames"] is None and len(body["Nodes"]["items"]) == 3


def test_one_feasible_node_is_not_prioritized(serve: Callable[..., FakeExtender]) -> None:
    fake = serve(prioritize=scores({}))
    cfg = config({"urlPrefix": fake.url, "prioritizeVerb": "prioritize", "weight": 1})
    _, d = replay([node("n1")], [pod("p", cpu="100m")], cfg)
    assert d["cycles"][0]["selectedNode"] == "n1" and not d["cycles"][0]["scored"]
    assert fake.calls("prioritize") == []


# --------------------------------------------------------------------------------------------------
# Bind


@pytest.mark.parametrize(
    ("answer", "ignorable", "managed", "result", "bind_stages"),
    [
        pytest.param(fixed({"Error": ""}), False, None, "Scheduled", [("EXT", "Success")], id="binds"),
        pytest.param(
            fixed({"Error": "quota exceeded"}), False, None, "Error", [("EXT", "Error")], id="error-answer"
        ),
        pytest.param(
            fixed(b"", status=503),
            True,
            None,
            "Scheduled",
            [("EXT", "Skip"), ("DefaultBinder", "Success")],
            id="ignorable-failure",
        ),
        pytest.param(
            fixed({}),
            False,
            "example.com/gpu",
            "Scheduled",
            [("DefaultBinder", "Success")],
            id="not-interested",
        ),
    ],
)
def test_bind_extender(
    serve: Callable[..., FakeExtender],
    answer: Answer,
    ignorable: bool,
    managed: str | None,
    result: str,
    bind_stages: list[tuple[str, str]],
) -> None:
    fake = serve(bind=answer)
    ext: dict[str, Any] = {"urlPrefix": fake.url, "bindVerb": "bind", "ignorable": ignorable}
    if managed:
        ext["managedResources"] = [{"name": managed}]
    r, d = replay(three_nodes(), [pod("p", cpu="100m")], config(ext))
    c = d["cycles"][0]
    assert c["result"] == result
    got = [(s["plugin"], s["code"]) for s in c["stages"] if s["point"] == "Bind"]
    assert got == [(fake.url if p == "EXT" else p, code) for p, code in bind_stages]
    if managed:
        assert fake.requests == []
        return
    (body,) = fake.calls("bind")
    assert body == {
        "PodName": "p",
        "PodNamespace": "default",
        "PodUID": "uid-default-p",
        "Node": c["selectedNode"],
    }
    placed = r.cluster.node_of(r.snapshot.pods[0])
    if result == "Error":
        assert c["error"] == "quota exceeded" and c["message"] == "quota exceeded"
        assert placed is None  # forgotten after the failed binding
        assert [s["point"] for s in c["stages"]][-2:] == ["Unreserve", "Unreserve"]
    else:
        assert placed is not None and r.cluster.names[placed] == c["selectedNode"]


# --------------------------------------------------------------------------------------------------
# managedResources and ignoredByScheduler


def gpu_pod(name: str, where: str) -> dict[str, Any]:
    """A pod asking for example.com/gpu in a container's requests or limits, or an init container's."""
    p = pod(name, cpu="100m")
    res = p["spec"]["containers"][0]["resources"]
    if where == "requests":
        res["requests"]["example.com/gpu"] = "1"
    elif where == "limits":
        res["limits"] = {"example.com/gpu": "1"}
    else:
        p["spec"]["initContainers"] = [container("init", extra={"example.com/gpu": "1"})]
    return p


def test_managed_resources(serve: Callable[..., FakeExtender]) -> None:
    """Pods requesting (or limiting) none of the managed resources are not sent to the extender;
    ignoredByScheduler makes NodeResourcesFit ignore the resource."""
    fake = serve(filter=keep(lambda n: n != "n1", failed={"n1": "no"}), prioritize=scores({"n3": 10}))
    managed = [{"name": "example.com/gpu", "ignoredByScheduler": True}]
    cfg = config(
        {
            "urlPrefix": fake.url,
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "weight": 1,
            "nodeCacheCapable": True,
            "managedResources": managed,
        }
    )
    pods = [
        pod("plain", cpu="100m"),
        gpu_pod("gpu-req", "requests"),
        gpu_pod("gpu-lim", "limits"),
        gpu_pod("gpu-init", "init"),
    ]
    _, d = replay(three_nodes(), pods, cfg)
    by_pod = {c["pod"]: c for c in d["cycles"]}
    sent = [b["Pod"]["metadata"]["name"] for v, b, _ in fake.requests]
    assert sorted(sent) == sorted(["gpu-req", "gpu-req", "gpu-lim", "gpu-lim", "gpu-init", "gpu-init"])
    plain = by_pod["default/plain"]
    assert plain["result"] == "Scheduled" and fake.url not in plain["scorePlugins"]
    assert [(s["point"], s["code"], s["reason"]) for s in stages(plain, fake.url)] == [
        ("Filter", "Skip", NOT_INTERESTED),
        ("Score", "Skip", NOT_INTERESTED),
    ]
    for name in ("gpu-req", "gpu-lim", "gpu-init"):
        c = by_pod[f"default/{name}"]
        # the nodes have no example.com/gpu at all: only ignoredByScheduler lets the pod fit
        assert c["result"] == "Scheduled" and c["selectedNode"] == "n3"


def test_managed_resource_not_ignored_by_scheduler(serve: Callable[..., FakeExtender]) -> None:
    fake = serve(filter=keep(lambda n: True))
    cfg = config(
        {"urlPrefix": fake.url, "filterVerb": "filter", "managedResources": [{"name": "example.com/gpu"}]}
    )
    _, d = replay(three_nodes(), [gpu_pod("gpu", "requests")], cfg)
    c = d["cycles"][0]
    assert c["result"] == "Unschedulable" and "3 Insufficient example.com/gpu" in c["message"]
    assert fake.requests == []  # Filter plugins left no node for the extender


def test_ignored_by_scheduler_needs_node_resources_fit_args() -> None:
    cfg = config(
        {
            "urlPrefix": "http://127.0.0.1:1",
            "filterVerb": "f",
            "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
        },
        profiles=[
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
            }
        ],
    )
    with pytest.raises(
        ConfigError, match="couldn't build extenders: can't find NodeResourcesFitArgs in plugin config"
    ):
        Replay(Snapshot(nodes=[], pods=[], objects=[]), cfg)


@pytest.mark.parametrize(
    ("managed", "containers", "init", "want"),
    [
        ([], [{}], [], True),
        (["memory"], [{}], [], False),
        (["memory"], [{"requests": {"memory": "0"}}], [], True),
        (["memory"], [{"limits": {"memory": "0"}}], [], True),
        (["memory"], [{}], [{"requests": {"memory": "0"}}], True),
        (["example.com/gpu"], [{"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}], [], False),
    ],
)
def test_is_interested(
    managed: list[str], containers: list[dict[str, Any]], init: list[dict[str, Any]], want: bool
) -> None:
    """extender_test.go TestIsInterested."""
    ext = HTTPExtender({"urlPrefix": "http://x", "managedResources": [{"name": m} for m in managed]})
    p = pod("p")
    p["spec"]["containers"] = [
        {"name": f"c{i}", "image": "x", "resources": r} for i, r in enumerate(containers)
    ]
    if init:
        p["spec"]["initContainers"] = [
            {"name": f"i{i}", "image": "x", "resources": r} for i, r in enumerate(init)
        ]
    assert ext.is_interested(Pod(p)) is want


# --------------------------------------------------------------------------------------------------
# Failing extenders: ignorable ones are skipped, others fail the cycle


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


FAILURES: list[Any] = [
    pytest.param(
        fixed({}, delay=3.0),
        "200ms",
        'Post "{url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
        id="slow",
    ),
    pytest.param(
        fixed({"NodeNames": ["n1"]}, delay=3.0, stall_body=True),
        "300ms",
        "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
        id="stalls-in-body",
    ),
    pytest.param(
        fixed(b"boom", status=500), "", "failed filter with extender at URL {url}/filter, code 500", id="500"
    ),
    pytest.param(fixed(b"garbage"), "", "invalid character 'g' looking for beginning of value", id="garbage"),
    pytest.param(
        lambda _: Reply(reset=True),
        "",
        'Post "{url}/filter": read tcp 127.0.0.1:{port}: connection reset by peer',
        id="connection-reset",
    ),
    pytest.param(fixed(b""), "", "EOF", id="empty-body"),
    pytest.param(fixed(b'{"NodeNames": ["n1"'), "", "unexpected EOF", id="truncated"),
    pytest.param(
        fixed({"NodeNames": "n1"}),
        "",
        "json: cannot unmarshal string into Go struct field ExtenderFilterResult.NodeNames of type []string",
        id="wrong-type",
    ),
    pytest.param(fixed({"Error": "extender is sad"}), "", "extender is sad", id="error-field"),
    pytest.param(
        fixed({"NodeNames": ["n1", "nX"]}),
        "",
        'extender "{url}" claims a filtered node "nX" which is not found in the input node list',
        id="unknown-node",
    ),
    pytest.param(
        None,
        "",
        'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused',
        id="unreachable",
    ),
]


@pytest.mark.parametrize("ignorable", [False, True], ids=["fails-cycle", "ignorable"])
@pytest.mark.parametrize(("answer", "timeout", "error"), FAILURES)
def test_failing_filter_extender(
    serve: Callable[..., FakeExtender], answer: Answer | None, timeout: str, error: str, ignorable: bool
) -> None:
    if answer is None:
        port = closed_port()
        url = f"http://127.0.0.1:{port}"
    else:
        fake = serve(filter=answer)
        url, port = fake.url, fake.server.server_port
    ext: dict[str, Any] = {
        "urlPrefix": url,
        "filterVerb": "filter",
        "nodeCacheCapable": True,
        "ignorable": ignorable,
    }
    if timeout:
        ext["httpTimeout"] = timeout
    want = error.format(url=url, port=port)
    t0 = time.monotonic()
    _, d = replay(three_nodes(), [pod("p", cpu="100m")], config(ext))
    assert time.monotonic() - t0 < 2.5  # bounded by httpTimeout, not by the server
    c = d["cycles"][0]
    (st,) = stages(c, url)
    assert st["point"] == "Filter" and st["reason"] == want
    if ignorable:
        assert c["result"] == "Scheduled" and st["code"] == "Skip" and st["details"]["ignorable"] is True
        assert all(v["filter"]["code"] == "Success" for v in c["nodes"].values())
    else:
        assert c["result"] == "Error" and st["code"] == "Error"
        assert c["error"] == want and c["message"] == want
        assert c["selectedNode"] is None


def test_default_http_timeout_is_five_seconds() -> None:
    assert HTTPExtender({"urlPrefix": "http://x"}).timeout == 5.0
    assert HTTPExtender({"urlPrefix": "http://x", "httpTimeout": "0s"}).timeout == 5.0
    assert HTTPExtender({"urlPrefix": "http://x", "httpTimeout": "1m30s"}).timeout == 90.0


@pytest.mark.parametrize(
    ("body", "target", "error"),
    [
        (b"  \n", FILTER_RESULT, "EOF"),
        (
            b"[1, 2]",
            FILTER_RESULT,
            "json: cannot unmarshal array into Go value of type v1.ExtenderFilterResult",
        ),
        (b'{"a" 1}', FILTER_RESULT, "invalid character '1' after object key"),
        (b'{"a": 1 "b": 2}', FILTER_RESULT, "invalid character '\"' after object key:value pair"),
        (b"[1 2]", HOST_PRIORITY_LIST, "invalid character '2' after array element"),
        (b"{'a': 1}", FILTER_RESULT, "invalid character '\\'' looking for beginning of object key string"),
        (b"NaN", HOST_PRIORITY_LIST, "invalid character 'N' looking for beginning of value"),
        (
            b'[{"Host": "a", "Score": 2.5}]',
            HOST_PRIORITY_LIST,
            "json: cannot unmarshal number 2.5 into Go struct field HostPriority.Score of type int64",
        ),
        (
            b'[{"Host": "a", "Score": 1e1}]',
            HOST_PRIORITY_LIST,
            "json: cannot unmarshal number 1e1 into Go struct field HostPriority.Score of type int64",
        ),
        (
            b'[{"Host": "a", "Score": 9223372036854775808}]',
            HOST_PRIORITY_LIST,
            "json: cannot unmarshal number 9223372036854775808 into Go struct field HostPriority.Score of type int64",
        ),
        (
            b'[{"Host": 1}]',
            HOST_PRIORITY_LIST,
            "json: cannot unmarshal number into Go struct field HostPriority.Host of type string",
        ),
        (
            b'{"FailedNodes": ["a"]}',
            FILTER_RESULT,
            "json: cannot unmarshal array into Go struct field ExtenderFilterResult.FailedNodes of type v1.FailedNodesMap",
        ),
    ],
)
def test_answer_decoding_errors(body: bytes, target: Any, error: str) -> None:
    with pytest.raises(ExtenderError) as exc:
        decode_answer(body, target)
    assert str(exc.value) == error


@pytest.mark.parametrize(
    ("body", "want"),
    [
        # only the first JSON value is read; unknown keys are ignored; null leaves a field unset
        (b'{"NodeNames": ["a"], "Other": 1} trailing bytes', {"NodeNames": ["a"]}),
        (b'{"nodenames": null, "FAILEDNODES": {"a": "x"}}', {"FailedNodes": {"a": "x"}}),
        (b'{"NodeNames": []}', {"NodeNames": []}),
        (b"null", None),
        (b'{"FailedNodes": {"a": "x"}, "FailedNodes": {"b": "y"}}', {"FailedNodes": {"a": "x", "b": "y"}}),
    ],
)
def test_answer_decoding(body: bytes, want: Any) -> None:
    assert decode_answer(body, FILTER_RESULT) == want


# --------------------------------------------------------------------------------------------------
# Preemption (preemption.go callExtenders)


def preemption_cluster() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [node("n1", cpu="1"), node("n2", cpu="1")]
    pods = [
        pod("v1", cpu="1", node_name="n1", priority=0),
        pod("v2", cpu="1", node_name="n2", priority=0),
        pod("p", cpu="1", priority=100),
    ]
    for v in pods[:2]:
        # equal start times: the two candidates tie on every criterion, the first one wins
        v["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
    return nodes, pods


@pytest.mark.parametrize("cache_capable", [True, False], ids=["nodeCacheCapable", "nodeObjects"])
@pytest.mark.parametrize(
    ("answer", "ignorable", "nominated", "post_filter"),
    [
        pytest.param(None, False, "n1", None, id="no-extender-first-candidate"),
        pytest.param(
            fixed(
                {
                    "NodeNameToMetaVictims": {
                        "n2": {"Pods": [{"UID": "uid-default-v2"}], "NumPDBViolations": 0}
                    }
                }
            ),
            False,
            "n2",
            None,
            id="extender-keeps-n2",
        ),
        pytest.param(
            fixed({"NodeNameToMetaVictims": {}}),
            False,
            None,
            "preemption: no candidate node for preemption",
            id="none-left",
        ),
        pytest.param(
            fixed({"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "uid-default-v2"}]}}}),
            False,
            None,
            "preemption: extender: {url} claims to preempt pod (UID: &{{uid-default-v2}}) on node: n1, but the pod is not found on that node",
            id="pod-not-on-node",
        ),
        pytest.param(
            fixed({"NodeNameToMetaVictims": {"n1": {"Pods": []}}}),
            False,
            None,
            'preemption: expected at least one victim pod on node "n1"',
            id="no-victims",
        ),
        pytest.param(
            fixed(
                {"NodeNameToMetaVictims": {"n1": {"Pods": []}, "n2": {"Pods": [{"UID": "uid-default-v2"}]}}}
            ),
            True,
            "n2",
            None,
            id="ignorable-drops-node-without-victims",
        ),
        pytest.param(fixed(b"", status=500), True, "n1", None, id="ignorable-failure-skipped"),
        pytest.param(
            fixed({"NodeNameToMetaVictims": {"nX": {"Pods": [{"UID": "uid-default-v2"}]}}}),
            False,
            None,
            'preemption: nodeinfo not found for node name "nX"',
            id="unknown-node",
        ),
    ],
)
def test_preemption_extender(
    serve: Callable[..., FakeExtender],
    answer: Answer | None,
    ignorable: bool,
    nominated: str | None,
    post_filter: str | None,
    cache_capable: bool,
) -> None:
    nodes, pods = preemption_cluster()
    if answer is None:
        cfg, url, fake = config(profiles=[PREEMPTION_ONLY]), "", None
    else:
        fake = serve(preempt=answer)
        url = fake.url
        cfg = config(
            {
                "urlPrefix": url,
                "preemptVerb": "preempt",
                "nodeCacheCapable": cache_capable,
                "ignorable": ignorable,
            },
            profiles=[PREEMPTION_ONLY],
        )
    _, d = replay(nodes, pods, cfg)
    c = d["cycles"][0]
    assert c["pod"] == "default/p" and c["result"] == "Unschedulable"
    assert c["nominatedNode"] == nominated
    head = "0/2 nodes are available: 2 Insufficient cpu."
    if post_filter is None:
        assert c["message"] == head  # a successful PostFilter adds nothing to the message
    else:
        assert c["message"] == f"{head} {post_filter.format(url=url)}"
    if fake is None:
        return
    (body,) = fake.calls("preempt")
    assert body["Pod"]["metadata"]["name"] == "p"
    if cache_capable:
        assert body["NodeNameToVictims"] is None
        assert body["NodeNameToMetaVictims"] == {
            "n1": {"Pods": [{"UID": "uid-default-v1"}], "NumPDBViolations": 0},
            "n2": {"Pods": [{"UID": "uid-default-v2"}], "NumPDBViolations": 0},
        }
    else:
        assert body["NodeNameToMetaVictims"] is None
        assert {
            n: [p["metadata"]["name"] for p in v["Pods"]] for n, v in body["NodeNameToVictims"].items()
        } == {
            "n1": ["v1"],
            "n2": ["v2"],
        }
        assert body["NodeNameToVictims"]["n1"]["Pods"][0] == pods[0]
    (pf,) = [s for s in c["stages"] if s["point"] == "PostFilter"]
    (entry,) = pf["details"]["extenders"]
    assert entry["extender"] == url and entry["sent"] == ["n1", "n2"]
    if nominated == "n2":
        assert entry["code"] == "Success" and entry["nodes"]["n2"]["victims"] == ["default/v2"]
        assert c["postFilter"]["victims"] == ["default/v2"]


# --------------------------------------------------------------------------------------------------
# Node objects in a filter answer: upstream scores fresh NodeInfos (no pods, no images)


@pytest.mark.parametrize(
    ("cache_capable", "selected", "fit_raw", "image_raw"),
    [
        # n1 runs a 3-CPU pod and holds the pod's image; n2 is idle. LeastAllocated (cpu, memory
        # 1:1, non-zero defaults 100m / 200Mi): n1 (4000m of 4000m, 400Mi of 8Gi) -> (0 + 95) / 2
        # = 47; n2 (1000m, 200Mi) -> (75 + 97) / 2 = 86.
        pytest.param(True, "n2", {"n1": 47, "n2": 86}, {"n1": True, "n2": False}, id="nodeCacheCapable"),
        # node objects came back: both NodeInfos are fresh, n1 looks idle and without images
        pytest.param(False, "n1", {"n1": 86, "n2": 86}, {"n1": False, "n2": False}, id="nodeObjects"),
    ],
)
def test_filter_answer_with_node_objects_scores_fresh_node_infos(
    serve: Callable[..., FakeExtender],
    cache_capable: bool,
    selected: str,
    fit_raw: dict[str, int],
    image_raw: dict[str, bool],
) -> None:
    image = "registry.example/big:1"
    nodes = [node("n1", images=[([image], 500 * 1024 * 1024)]), node("n2")]
    pods = [
        pod("busy", cpu="3", node_name="n1"),
        pod("p", cpu="1", containers=[container(cpu="1", image=image)]),
    ]
    fake = serve(filter=keep(lambda n: True))
    _, d = replay(
        nodes,
        pods,
        config({"urlPrefix": fake.url, "filterVerb": "filter", "nodeCacheCapable": cache_capable}),
    )
    c = d["cycles"][0]
    assert {n: c["nodes"][n]["scores"]["NodeResourcesFit"]["raw"] for n in ("n1", "n2")} == fit_raw
    assert {n: c["nodes"][n]["scores"]["ImageLocality"]["raw"] > 0 for n in ("n1", "n2")} == image_raw
    assert c["selectedNode"] == selected


# --------------------------------------------------------------------------------------------------
# HTTPS


@dataclass
class PKI:
    ca: bytes
    server_cert: Path
    server_key: Path
    client_cert: bytes
    client_key: bytes
    ca_file: Path


def _pki_cryptography(tmp: Path) -> PKI:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def pem_key(k: Any) -> bytes:
        return bytes(
            k.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "schedviz test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(cn: str, server: bool) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        b = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
        )
        if server:
            import ipaddress

            b = b.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        cert = b.sign(ca_key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), pem_key(key)

    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    server_cert, server_key = leaf("localhost", True)
    client_cert, client_key = leaf("scheduler", False)
    return _write_pki(tmp, ca_pem, server_cert, server_key, client_cert, client_key)


def _pki_openssl(tmp: Path) -> PKI:
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=tmp, check=True, capture_output=True, timeout=20)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=schedviz test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    (tmp / "server.ext").write_text(
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
    )
    (tmp / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for who in ("server", "client"):
        run("req", *ec, "-keyout", f"{who}.key", "-out", f"{who}.csr", "-subj", f"/CN={who}")
        run("x509", "-req", "-in", f"{who}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{who}.crt", "-days", "1", "-extfile", f"{who}.ext")  # fmt: skip

    def read(name: str) -> bytes:
        return (tmp / name).read_bytes()

    return _write_pki(
        tmp, read("ca.crt"), read("server.crt"), read("server.key"), read("client.crt"), read("client.key")
    )


def _write_pki(tmp: Path, ca: bytes, sc: bytes, sk: bytes, cc: bytes, ck: bytes) -> PKI:
    (tmp / "ca.pem").write_bytes(ca)
    (tmp / "server-cert.pem").write_bytes(sc)
    (tmp / "server-key.pem").write_bytes(sk)
    return PKI(ca, tmp / "server-cert.pem", tmp / "server-key.pem", cc, ck, tmp / "ca.pem")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    tmp = tmp_path_factory.mktemp("pki")
    try:
        import cryptography  # noqa: F401
    except ImportError:
        try:
            return _pki_openssl(tmp)
        except (OSError, subprocess.SubprocessError) as exc:
            pytest.skip(f"neither the cryptography package nor the openssl CLI is usable: {exc}")
    return _pki_cryptography(tmp)


def server_tls(pki: PKI, client_auth: bool) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki.server_cert, pki.server_key)
    if client_auth:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(cadata=pki.ca.decode())
    return ctx


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("client_auth", "settings", "ok", "error"),
    [
        pytest.param(False, {"tlsConfig": {"caData": "CA"}}, True, "", id="ca-data"),
        pytest.param(False, {"tlsConfig": {"caFile": "CAFILE"}}, True, "", id="ca-file"),
        pytest.param(
            False,
            {},
            False,
            "tls: failed to verify certificate: x509: certificate signed by unknown authority",
            id="system-roots-reject-self-signed-ca",
        ),
        pytest.param(False, {"tlsConfig": {"insecure": True}}, True, "", id="insecure"),
        pytest.param(False, {"enableHTTPS": True}, True, "", id="enableHTTPS-without-ca-skips-verification"),
        pytest.param(
            False, {"tlsConfig": {"caData": "CA", "serverName": "localhost"}}, True, "", id="server-name"
        ),
        pytest.param(
            False,
            {"tlsConfig": {"caData": "CA", "serverName": "other.example"}},
            False,
            "tls: failed to verify certificate: x509: certificate is valid for localhost, not other.example",
            id="server-name-mismatch",
        ),
        pytest.param(
            False,
            {"tlsConfig": {"caData": base64.b64encode(b"not a certificate").decode()}},
            False,
            "tls: failed to verify certificate: x509: certificate signed by unknown authority",
            id="unusable-ca-is-an-empty-pool",
        ),
        pytest.param(True, {"tlsConfig": {"caData": "CA"}}, False, None, id="client-cert-required"),
        pytest.param(
            True,
            {"tlsConfig": {"caData": "CA", "certData": "CERT", "keyData": "KEY"}},
            True,
            "",
            id="client-cert",
        ),
    ],
)
def test_https_extender(
    serve: Callable[..., FakeExtender],
    pki: PKI,
    client_auth: bool,
    settings: dict[str, Any],
    ok: bool,
    error: str | None,
) -> None:
    fake = serve(tls=server_tls(pki, client_auth), filter=keep(lambda n: n != "n1", failed={"n1": "no"}))
    values = {
        "CA": b64(pki.ca),
        "CAFILE": str(pki.ca_file),
        "CERT": b64(pki.client_cert),
        "KEY": b64(pki.client_key),
    }
    tls = {k: values.get(v, v) if isinstance(v, str) else v for k, v in settings.get("tlsConfig", {}).items()}
    ext = {
        "urlPrefix": fake.url,
        "filterVerb": "filter",
        "nodeCacheCapable": True,
        "httpTimeout": "3s",
        **settings,
    }
    if tls:
        ext["tlsConfig"] = tls
    _, d = replay(three_nodes(), [pod("p", cpu="100m")], config(ext))
    c = d["cycles"][0]
    if ok:
        assert c["result"] == "Scheduled" and c["selectedNode"] != "n1"
        assert len(fake.calls("filter")) == 1
    else:
        assert c["result"] == "Error"
        assert c["error"].startswith(f'Post "{fake.url}/filter": ')
        if error is not None:
            assert c["error"] == f'Post "{fake.url}/filter": {error}'


@pytest.mark.parametrize(
    ("tls", "error"),
    [
        (
            {"caData": "CA", "insecure": True},
            "specifying a root certificates file with the insecure flag is not allowed",
        ),
        ({"caFile": "/nonexistent/ca.pem"}, "open /nonexistent/ca.pem: no such file or directory"),
    ],
)
def test_tls_settings_that_stop_the_scheduler(pki: PKI, tls: dict[str, Any], error: str) -> None:
    tls = {k: b64(pki.ca) if v == "CA" else v for k, v in tls.items()}
    cfg = config({"urlPrefix": "https://127.0.0.1:1", "filterVerb": "filter", "tlsConfig": tls})
    with pytest.raises(ConfigError, match=f"couldn't build extenders: {error}"):
        Replay(Snapshot(nodes=[], pods=[], objects=[]), cfg)
