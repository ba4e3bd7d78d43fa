"""The live timeline websocket: the replay protocol over a cluster's live cycles, node sets that
change, verdicts, resuming at a position, following new cycles, playback, authorisation."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from schedviz.accounts.models import ApiToken
from schedviz.asgi import application
from schedviz.live import schedconfig, services
from schedviz.live.divergence import explain_trigger
from schedviz.live.models import LiveCluster
from schedviz.live.triggers import BOUND, FAILED, Trigger
from tests.engine.builders import node, pod

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

OBJECTS = [
    node("a", cpu="2"),
    node("b", cpu="8"),
    pod("running", node_name="a", cpu="1"),
    pod("web", cpu="500m"),
    pod("huge", cpu="16"),
    pod("late", cpu="100m"),
]


def trigger(
    kind: str, name: str, seq: int, node_name: str | None = None, message: str | None = None
) -> Trigger:
    return Trigger(
        kind=kind,
        source="pod" if kind == BOUND else "event",
        pod=f"default/{name}",
        pod_uid=f"uid-default-{name}",
        node=node_name,
        message=message,
        scheduler="default-scheduler",
        seq=seq,
        rv=str(seq),
        observed=time.time(),
        occurred=None,
        gap=False,
        dedup=f"{kind}:{name}:{seq}",
    )


def store(cluster: LiveCluster, objects: list[dict[str, Any]], t: Trigger) -> None:
    outcome = explain_trigger(objects, True, t, schedconfig.build(None), all_nodes=True, recent=[])
    services.store_outcome(cluster.pk, outcome)


@sync_to_async
def make_cluster() -> tuple[str, str, LiveCluster]:
    user = User.objects.create_user("alice")
    cluster = LiveCluster.objects.create(
        owner=user, name="prod", source="kubeconfig", server="https://k8s.example:6443", status="watching"
    )
    store(cluster, OBJECTS, trigger(BOUND, "web", 1, "b"))
    store(
        cluster, OBJECTS, trigger(FAILED, "huge", 2, message="0/2 nodes are available: 2 Insufficient cpu.")
    )
    store(
        cluster, [*OBJECTS, node("c", cpu="16", memory="32Gi")], trigger(BOUND, "late", 3, "c")
    )  # a node added meanwhile
    store(cluster, OBJECTS, trigger(BOUND, "gone", 4, "b"))  # a pod SchedViz never saw: not replayed
    _, token = ApiToken.issue(user, "ws")
    return str(cluster.pk), token, cluster


@sync_to_async
def add_cycle(cluster: LiveCluster) -> None:
    store(cluster, OBJECTS, trigger(BOUND, "late", 5, "b"))


async def receive_until(comm: WebsocketCommunicator, pred: Any, limit: int = 500) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(limit):
        msg = json.loads(await comm.receive_from(timeout=10))
        out.append(msg)
        if pred(msg):
            return out
    raise AssertionError(f"not found in {len(out)} messages")


def positions(msgs: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [tuple(m["pos"]) for m in msgs if "pos" in m]  # type: ignore[misc]


async def test_the_timeline_streams_each_cycle_with_its_nodes_and_verdict() -> None:
    cid, token, _ = await make_cluster()
    comm = WebsocketCommunicator(application, f"/ws/clusters/{cid}/?token={token}")
    assert (await comm.connect())[0]
    msgs = await receive_until(comm, lambda m: m["type"] == "status")
    hello = msgs[0]
    assert hello["type"] == "hello" and hello["cluster"]["id"] == cid and hello["cluster"]["cyclesDone"] == 4
    assert hello["cluster"]["summary"]["cycles"] == 4 and hello["mode"] == "live"
    pos = positions(msgs)
    assert pos == sorted(pos) and len(pos) == len(set(pos))
    nodes = [(i, m) for i, m in enumerate(msgs) if m["type"] == "nodes"]
    # the node set is sent before cycle 1 and again before cycle 3 (a node was added); not before 2
    # (the same set), nor before 4 (not replayed: its verdict names no node by index)
    assert [m["names"] for _, m in nodes] == [["a", "b"], ["a", "b", "c"]]
    assert [msgs[i + 1]["pos"] for i, _ in nodes] == [[1, 0], [3, 0]]
    assert nodes[0][1]["nodeSet"] != nodes[1][1]["nodeSet"]
    verdicts = [m for m in msgs if m["type"] == "live.verdict"]
    assert [(v["pos"][0], v["pod"], v["agreement"]) for v in verdicts] == [
        (1, "default/web", "match"),
        (2, "default/huge", "diverged"),
        (3, "default/late", "match"),
        (4, "default/gone", "skipped"),
    ]
    assert verdicts[0]["actual"] == {
        "result": "Scheduled",
        "node": "b",
        "message": None,
        "scheduler": "default-scheduler",
    }
    assert verdicts[1]["divergence"] == "message" and verdicts[1]["explanations"][-1]["code"] == "message"
    assert verdicts[3]["error"] == "pod default/gone is not in the mirrored state" and verdicts[3]["pos"] == [
        4,
        0,
    ]
    # each replayed cycle: start ... end, then the verdict
    first = [m["type"] for m in msgs if m.get("pos", [0])[0] == 1]
    assert first[0] == "cycle.start" and first[-2:] == ["cycle.end", "live.verdict"]
    selection = next(m for m in msgs if m["type"] == "selection" and m["pos"][0] == 3)
    assert selection["node"] == 2  # index into the latest nodes message: c
    assert msgs[-1]["type"] == "status" and msgs[-1]["cyclesDone"] == 4
    await comm.disconnect()


async def test_resuming_mid_cycle_sends_the_nodes_again_then_the_rest_and_follows_new_cycles() -> None:
    cid, token, cluster = await make_cluster()
    comm = WebsocketCommunicator(application, f"/ws/clusters/{cid}/?token={token}&after=3.1")
    assert (await comm.connect())[0]
    msgs = await receive_until(comm, lambda m: m["type"] == "status")
    assert msgs[0]["type"] == "hello" and msgs[0]["resumeAfter"] == "3.1"
    assert msgs[1]["type"] == "nodes" and msgs[1]["names"] == ["a", "b", "c"]
    assert positions(msgs)[0] == (3, 2)
    await add_cycle(cluster)
    more = await receive_until(comm, lambda m: m["type"] == "live.verdict")
    assert more[0]["type"] == "nodes" and more[0]["names"] == ["a", "b"]  # back to the first set
    assert {m["pos"][0] for m in more if "pos" in m} == {5}
    await comm.disconnect()


async def test_batched_frames_keep_the_node_sets_before_their_cycles() -> None:
    cid, token, _ = await make_cluster()
    comm = WebsocketCommunicator(application, f"/ws/clusters/{cid}/?token={token}")
    assert (await comm.connect())[0]
    plain = await receive_until(comm, lambda m: m["type"] == "status")
    await comm.disconnect()
    comm = WebsocketCommunicator(application, f"/ws/clusters/{cid}/?token={token}&batch=1")
    assert (await comm.connect())[0]
    frames: list[Any] = []
    while not (frames and isinstance(frames[-1], dict) and frames[-1]["type"] == "status"):
        frames.append(json.loads(await comm.receive_from(timeout=10)))
    await comm.disconnect()
    flat = [m for f in frames for m in (f if isinstance(f, list) else [f])]
    assert flat == plain
    cycles = [f for f in frames if isinstance(f, list)]
    assert [f[-1]["type"] for f in cycles] == ["live.verdict"] * 4
    assert [{m["pos"][0] for m in f} for f in cycles] == [{1}, {2}, {3}, {4}]


async def test_playback_steps_and_ends() -> None:
    cid, token, _ = await make_cluster()
    comm = WebsocketCommunicator(application, f"/ws/clusters/{cid}/?token={token}&mode=playback")
    assert (await comm.connect())[0]
    hello = json.loads(await comm.receive_from(timeout=10))
    assert hello["type"] == "hello" and hello["mode"] == "playback"
    await comm.send_to(text_data=json.dumps({"action": "step"}))
    msgs = await receive_until(comm, lambda m: m["type"] == "live.verdict")
    assert {m["pos"][0] for m in msgs if "pos" in m} == {1}
    await comm.send_to(text_data=json.dumps({"action": "seek", "cycle": 4}))
    await comm.send_to(text_data=json.dumps({"action": "step"}))
    msgs = await receive_until(comm, lambda m: m["type"] == "live.verdict")
    assert positions(msgs) == [(4, 0)]
    await comm.send_to(text_data=json.dumps({"action": "play", "speed": 100}))
    msgs = await receive_until(comm, lambda m: m["type"] == "end")
    assert msgs[-1]["after"].startswith("4.")
    await comm.disconnect()


async def test_other_users_and_anonymous_clients_are_refused() -> None:
    cid, _, _ = await make_cluster()

    @sync_to_async
    def other() -> str:
        return ApiToken.issue(User.objects.create_user("mallory"), "ws")[1]

    comm = WebsocketCommunicator(application, f"/ws/clusters/{cid}/?token={await other()}")
    await comm.connect()
    assert (await comm.receive_output(timeout=10))["code"] == 4404
    comm = WebsocketCommunicator(application, f"/ws/clusters/{cid}/")
    await comm.connect()
    assert (await comm.receive_output(timeout=10))["code"] == 4401
