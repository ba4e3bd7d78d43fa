"""List-then-watch against the test API server: resourceVersion continuity, bookmarks, 410 Gone,
dropped connections, API-server restarts, and clear errors for bad credentials or no server."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from schedviz.kube.kinds import Stream, stream
from schedviz.kube.kubeconfig import Source
from schedviz.kube.mirror import Change, Mirror
from schedviz.kube.testing import PODGROUPS, TestApiServer
from schedviz.kube.watch import Reflector, Timing
from tests.engine.builders import node, pod
from tests.kubefixtures import FAST, wait_until


@dataclass
class Harness:
    srv: TestApiServer
    mirror: Mirror
    reflectors: list[Reflector]
    stop: threading.Event
    threads: list[threading.Thread] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)

    def health(self, name: str) -> dict[str, Any]:
        return next(r.snapshot() for r in self.reflectors if r.stream.name == name)

    def pod_changes(self) -> list[tuple[str, str]]:
        return [(c.type, c.key[1]) for c in self.changes if c.kind == "Pod" and not c.initial]

    def assert_mirrors_server(self) -> None:
        for r in self.reflectors:
            kind = r.stream.kind
            if r.stream.mirrored:
                want = {
                    (o["metadata"].get("namespace", ""), o["metadata"]["name"]): o["metadata"][
                        "resourceVersion"
                    ]
                    for o in self.srv.objects(kind)
                }
                have = {
                    (o["metadata"].get("namespace", ""), o["metadata"]["name"]): o["metadata"][
                        "resourceVersion"
                    ]
                    for o in self.mirror.objects()
                    if o["kind"] == kind
                }
                assert have == want, kind


def start(srv: TestApiServer, names: list[str], timing: Timing = FAST, token: str | None = None) -> Harness:
    streams: list[Stream] = [stream(n) for n in names]
    mirror = Mirror(streams)
    h = Harness(srv, mirror, [], threading.Event())
    mirror.listeners.append(h.changes.append)
    api_client = Source("kubeconfig", srv.kubeconfig(token=token)).client()
    h.reflectors = [Reflector(api_client, s, mirror, h.stop, timing=timing) for s in streams]
    for r in h.reflectors:
        t = threading.Thread(target=r.run, daemon=True)
        t.start()
        h.threads.append(t)
    return h


@pytest.fixture
def harness_stop() -> Iterator[list[Harness]]:
    made: list[Harness] = []
    yield made
    for h in made:
        for r in h.reflectors:
            r.stop()
        for t in h.threads:
            t.join(5)
            assert not t.is_alive()


def populated(srv: TestApiServer) -> None:
    for i in range(3):
        srv.create(node(f"n{i}"))
    for i in range(5):
        srv.create(pod(f"p{i}", cpu="100m"))


def test_lists_page_by_page_then_watches_from_the_lists_resource_version(
    apiserver: TestApiServer, harness_stop: list[Harness]
) -> None:
    populated(apiserver)
    h = start(apiserver, ["Node", "Pod"])
    harness_stop.append(h)
    apiserver.wait_for_watches(2)
    pod_reqs = [r for r in apiserver.requests if r.path == "/api/v1/pods"]
    lists = [r for r in pod_reqs if not r.watch]
    # five pods in pages of two: three requests, the later ones continuing
    assert len(lists) == 3 and all(r.query["limit"] == ["2"] for r in lists)
    assert "continue" not in lists[0].query and all("continue" in r.query for r in lists[1:])
    watch = next(r for r in pod_reqs if r.watch)
    assert watch.query["allowWatchBookmarks"] == ["true"]
    list_rv = h.mirror.checkpoint()["streams"]["Pod"]["rv"]
    assert watch.query["resourceVersion"] == [list_rv] and int(list_rv) == apiserver.resource_version
    assert all(r.authorization == f"Bearer {apiserver.token}" for r in apiserver.requests)
    assert h.pod_changes() == []  # the first list is the starting state, not changes
    apiserver.bind("default", "p0", "n1")
    apiserver.delete("Pod", "p4", "default")
    wait_until(lambda: len(h.pod_changes()) == 2, what="the watch events")
    assert h.pod_changes() == [("MODIFIED", "p0"), ("DELETED", "p4")]
    assert h.mirror.get("Pod", ("default", "p0"))["spec"]["nodeName"] == "n1"  # type: ignore[index]
    h.assert_mirrors_server()
    health = h.health("Pod")
    assert (
        health["state"] == "watching" and health["synced"] and health["lists"] == 1 and health["events"] == 2
    )
    assert health["objects"] == 4


def test_bookmarks_advance_the_resource_version_the_next_watch_starts_from(
    apiserver: TestApiServer, harness_stop: list[Harness]
) -> None:
    populated(apiserver)
    h = start(apiserver, ["Pod"])
    harness_stop.append(h)
    apiserver.wait_for_watches(1)
    apiserver.create(
        node("n9")
    )  # other kinds move the revision on: pods' watchers only learn it from bookmarks
    apiserver.create(node("n10"))
    before = h.mirror.resource_version("Pod")
    apiserver.send_bookmarks()
    wait_until(lambda: h.health("Pod")["bookmarks"] == 1, what="the bookmark")
    assert h.mirror.resource_version("Pod") == str(apiserver.resource_version) != before
    assert h.pod_changes() == []  # a bookmark changes nothing
    apiserver.drop_connections()
    apiserver.wait_for_watches(1)
    wait_until(
        lambda: (
            [r for r in apiserver.requests if r.path == "/api/v1/pods" and r.watch][-1].query[
                "resourceVersion"
            ]
            == [str(apiserver.resource_version)]
        ),
        what="the watch from the bookmark",
    )


def test_watch_expiry_mid_stream_relists_without_losing_or_doubling_a_change(
    apiserver: TestApiServer, harness_stop: list[Harness]
) -> None:
    populated(apiserver)
    h = start(apiserver, ["Node", "Pod"])
    harness_stop.append(h)
    apiserver.wait_for_watches(2)
    apiserver.bind("default", "p0", "n0")  # seen on the watch
    wait_until(lambda: len(h.pod_changes()) == 1, what="the first bind")
    apiserver.hold_lists()  # the relist waits, so the changes below happen between the 410 and it
    assert apiserver.expire_watches() == 2
    wait_until(lambda: apiserver.waiting_lists() == 2, what="both streams relisting")
    apiserver.bind("default", "p1", "n1")
    apiserver.delete("Pod", "p2", "default")
    apiserver.create(pod("p5", cpu="100m"))
    apiserver.modify("Pod", "p3", "default", lambda p: p["metadata"].setdefault("labels", {}).update(a="1"))
    apiserver.modify("Pod", "p3", "default", lambda p: p["metadata"]["labels"].update(a="2"))
    apiserver.release_lists()
    wait_until(lambda: len(h.pod_changes()) == 5, what="the relist's changes")
    apiserver.wait_for_watches(2)
    apiserver.bind("default", "p5", "n2")  # and the watch goes on after the relist
    wait_until(lambda: len(h.pod_changes()) == 6, what="the watch after the relist")
    relisted = [c for c in h.changes if c.kind == "Pod" and c.relist and not c.initial]
    assert sorted((c.type, c.key[1]) for c in relisted) == [
        ("ADDED", "p5"),
        ("DELETED", "p2"),
        ("MODIFIED", "p1"),
        ("MODIFIED", "p3"),
    ]
    p3 = next(c for c in relisted if c.key[1] == "p3")
    assert p3.new is not None and p3.new["metadata"]["labels"] == {"a": "2"}  # both updates, as one change
    p1 = next(c for c in relisted if c.key[1] == "p1")
    assert (
        p1.old is not None
        and "nodeName" not in p1.old["spec"]
        and p1.new is not None
        and p1.new["spec"]["nodeName"] == "n1"
    )
    assert h.pod_changes()[-1] == ("MODIFIED", "p5")
    health = h.health("Pod")
    assert health["expired"] == 1 and health["lists"] == 2 and health["relists"] == 1
    assert "410" in health["lastError"]
    h.assert_mirrors_server()
    # every change exactly once: no key changed twice the same way with the same resourceVersion
    seen = [(c.key, c.type, c.rv) for c in h.changes if c.kind == "Pod"]
    assert len(seen) == len(set(seen))


def test_dropped_connections_resume_from_the_last_resource_version(
    apiserver: TestApiServer, harness_stop: list[Harness]
) -> None:
    populated(apiserver)
    h = start(apiserver, ["Pod"])
    harness_stop.append(h)
    apiserver.wait_for_watches(1)
    apiserver.bind("default", "p0", "n0")
    wait_until(lambda: len(h.pod_changes()) == 1, what="the bind")
    assert apiserver.drop_connections() == 1
    apiserver.bind("default", "p1", "n1")  # while the client reconnects
    apiserver.delete("Pod", "p2", "default")
    wait_until(lambda: len(h.pod_changes()) == 3, what="the changes after the drop")
    assert h.pod_changes() == [("MODIFIED", "p0"), ("MODIFIED", "p1"), ("DELETED", "p2")]
    health = h.health("Pod")
    assert health["lists"] == 1 and health["relists"] == 0  # no relist: the watch resumed
    assert health["errors"] >= 1 and health["reconnects"] >= 1
    watches = [r for r in apiserver.requests if r.path == "/api/v1/pods" and r.watch]
    assert len(watches) >= 2
    h.assert_mirrors_server()


def test_garbage_and_hung_answers_are_bounded_errors_then_retried(
    apiserver: TestApiServer, harness_stop: list[Harness]
) -> None:
    populated(apiserver)
    # answers that are not JSON (a proxy's error page): described, retried, then the real list
    apiserver.garble_lists(2)
    h = start(apiserver, ["Pod"], timing=dataclasses.replace(FAST, list_timeout=0.5))
    harness_stop.append(h)
    wait_until(lambda: h.health("Pod")["synced"], what="the list after the garbage")
    health = h.health("Pod")
    assert (health["lists"], health["errors"]) == (1, 2), health
    assert "unreadable answer while listing pods" in health["lastError"], health
    # a relist the API server accepts and never answers: each try bounded by the list timeout
    apiserver.wait_for_watches(1)
    apiserver.hold_lists()
    t0 = time.monotonic()
    assert apiserver.expire_watches() == 1  # 410: the reflector must list again
    wait_until(lambda: h.health("Pod")["errors"] >= 4, what="two timed-out relists")
    assert time.monotonic() - t0 < 5
    assert "timed out" in h.health("Pod")["lastError"]
    apiserver.bind("default", "p0", "n0")  # meanwhile, a change the relist must bring
    apiserver.release_lists()
    wait_until(lambda: h.health("Pod")["relists"] == 1, what="the relist once answered")
    h.assert_mirrors_server()


@pytest.mark.parametrize("compact", [False, True], ids=["history-kept", "history-compacted"])
def test_api_server_restart_is_survived(
    apiserver: TestApiServer, harness_stop: list[Harness], compact: bool
) -> None:
    populated(apiserver)
    h = start(apiserver, ["Node", "Pod"])
    harness_stop.append(h)
    apiserver.wait_for_watches(2)
    apiserver.stop()
    # the cluster changes while its API server is down (the controllers write through another one)
    apiserver.bind("default", "p0", "n0", event=False)
    apiserver.delete("Node", "n2")
    wait_until(
        lambda: (h.health("Pod")["lastError"] or "")
        == f"cannot connect to 127.0.0.1:{apiserver.url.rsplit(':', 1)[1]}: unreachable",
        what="the refused connection",
    )
    assert h.health("Pod")["state"] == "backoff"
    assert h.health("Pod")["lastError"].startswith(
        f"cannot connect to 127.0.0.1:{apiserver.url.rsplit(':', 1)[1]}: "
    )
    apiserver.restart(compact=compact)
    apiserver.wait_for_watches(2)
    wait_until(lambda: len(h.pod_changes()) == 1, what="the bind made while down")
    wait_until(
        lambda: len([c for c in h.changes if c.kind == "Node" and not c.initial]) == 1,
        what="the node deletion",
    )
    assert h.pod_changes() == [("MODIFIED", "p0")]
    wait_until(lambda: h.health("Pod")["state"] == "watching", what="watching again")
    health = h.health("Pod")
    if compact:
        assert health["expired"] == 1 and health["relists"] == 1  # its resourceVersion was gone: relisted
    else:
        assert health["relists"] == 0  # watched on from its resourceVersion
    h.assert_mirrors_server()


def test_bad_credentials_and_unreachable_servers_are_clear_errors(
    apiserver: TestApiServer, harness_stop: list[Harness]
) -> None:
    populated(apiserver)
    h = start(apiserver, ["Pod"], token="wrong-token")
    harness_stop.append(h)
    wait_until(lambda: h.health("Pod")["state"] == "error", what="the error")
    err = h.health("Pod")["lastError"]
    assert "refused the credentials (HTTP 401 Unauthorized)" in err and "listing pods" in err
    assert not h.health("Pod")["synced"]

    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = TestApiServer()
    dead._port = port  # never started: nothing listens there
    h2 = start(dead, ["Pod"])
    harness_stop.append(h2)
    wait_until(lambda: h2.health("Pod")["errors"] >= 1, what="the connection error")
    health = h2.health("Pod")
    assert health["state"] == "backoff"
    assert (
        health["lastError"] == f"cannot connect to 127.0.0.1:{port}: unreachable"
    )


def test_an_optional_kind_not_served_is_unavailable_until_its_crd_is_installed(
    apiserver: TestApiServer, harness_stop: list[Harness]
) -> None:
    h = start(apiserver, ["PodGroup"])
    harness_stop.append(h)
    wait_until(lambda: h.health("PodGroup")["state"] == "unavailable", what="unavailable")
    assert "not served by this cluster" in h.health("PodGroup")["lastError"]
    apiserver.install(PODGROUPS)
    apiserver.create(
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"minMember": 2},
        }
    )
    wait_until(lambda: h.health("PodGroup")["state"] == "watching", what="the CRD watched")
    assert [o["metadata"]["name"] for o in h.mirror.objects()] == ["g"]
    watch = next(r for r in apiserver.requests if r.watch)
    assert watch.path == "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"


def test_event_streams_select_the_schedulers_events(
    apiserver: TestApiServer, harness_stop: list[Harness]
) -> None:
    populated(apiserver)
    h = start(apiserver, ["Event/Scheduled", "Event/FailedScheduling"])
    harness_stop.append(h)
    apiserver.wait_for_watches(2)
    p = apiserver.get("Pod", "p1", "default")
    assert p is not None
    apiserver.record_event(
        p, "Pulled", "image pulled", scheduler="kubelet"
    )  # not the scheduler's: filtered out
    apiserver.bind("default", "p0", "n0")
    apiserver.fail_scheduling("default", "p1", "0/3 nodes are available: 3 Insufficient cpu.")
    wait_until(lambda: len(h.changes) == 2, what="the two events")
    assert sorted((c.stream, c.object["reason"]) for c in h.changes) == [
        ("Event/FailedScheduling", "FailedScheduling"),
        ("Event/Scheduled", "Scheduled"),
    ]
    selectors = {r.query["fieldSelector"][0] for r in apiserver.requests if r.path == "/api/v1/events"}
    assert selectors == {
        "involvedObject.kind=Pod,reason=Scheduled",
        "involvedObject.kind=Pod,reason=FailedScheduling",
    }
    assert all("managedFields" not in c.object["metadata"] for c in h.changes)
