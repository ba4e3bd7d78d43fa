"""The replay websocket: ordering, catch-up after reconnect, playback controls, authorisation."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from schedviz.accounts.models import ApiToken
from schedviz.asgi import application
from schedviz.cycles.messages import FILTER_CHUNK
from schedviz.ingestion.services import create_snapshot
from schedviz.replays.services import start_replay
from tests.webfixtures import cluster_yaml

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture(autouse=True)
def _sync(settings: Any) -> None:
    settings.SCHEDVIZ_TASK_MODE = "sync"


@sync_to_async
def make_replay(username: str = "alice", extra_pods: int = 3) -> tuple[str, str]:
    user = User.objects.create_user(username)
    snap, _ = create_snapshot(user, cluster_yaml(extra_pods).encode(), "c.yaml")
    replay = start_replay(user, snap, all_nodes=True)
    _, token = ApiToken.issue(user, "ws")
    return str(replay.pk), token


@sync_to_async
def token_for(username: str) -> str:
    user = User.objects.create_user(username)
    return ApiToken.issue(user, "ws")[1]


async def receive_all(comm: WebsocketCommunicator, until: str = "end", limit: int = 2000) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(limit):
        msg = json.loads(await comm.receive_from(timeout=10))
        out.append(msg)
        if msg["type"] == until:
            return out
    raise AssertionError(f"no {until!r} in {len(out)} messages")


def positions(msgs: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [tuple(m["pos"]) for m in msgs if "pos" in m]  # type: ignore[misc]


async def test_live_stream_sends_every_cycle_in_order(settings: Any) -> None:
    rid, token = await make_replay(extra_pods=3)
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}")
    connected, _ = await comm.connect()
    assert connected
    msgs = await receive_all(comm)
    await comm.disconnect()
    assert msgs[0]["type"] == "hello" and msgs[0]["replay"]["status"] == "succeeded"
    assert msgs[1]["type"] == "nodes" and msgs[1]["names"] == ["small", "large", "tainted"]
    pos = positions(msgs)
    assert pos == sorted(pos) and len(pos) == len(set(pos))
    starts = [m for m in msgs if m["type"] == "cycle.start"]
    ends = [m for m in msgs if m["type"] == "cycle.end"]
    assert [m["pos"][0] for m in starts] == [1, 2, 3, 4, 5]
    assert [m["pod"] for m in starts][:2] == ["default/web", "default/huge"]
    assert ends[0]["result"] == "Scheduled" and ends[0]["node"] == "large"
    assert ends[1]["result"] == "Unschedulable" and ends[1]["message"].startswith("0/3 nodes are available")
    # every cycle's parts come in order: start, PreFilter stages, filter verdicts, ..., end
    first = [m for m in msgs if m.get("pos", [0])[0] == 1]
    types = [m["type"] for m in first]
    assert types[0] == "cycle.start" and types[-1] == "cycle.end"
    assert types.index("filter") < types.index("score") < types.index("selection")
    verdicts = next(m for m in first if m["type"] == "filter")
    assert verdicts["codes"] == [0, 0, 3]
    assert starts[0]["filterPlugins"][verdicts["plugins"][2]] == "TaintToleration"
    assert starts[0]["reasons"][verdicts["reasons"][2]] == ["node(s) had untolerated taint(s)"]
    score = next(m for m in first if m["type"] == "score")
    assert score["top"][0]["node"] == 1 and score["feasible"] == 2
    assert msgs[-2]["type"] == "status" and msgs[-2]["status"] == "succeeded"


async def test_reconnect_resumes_without_gap_or_duplicate() -> None:
    rid, token = await make_replay(extra_pods=3)
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}")
    await comm.connect()
    full = await receive_all(comm)
    await comm.disconnect()
    all_pos = positions(full)
    cut = all_pos[len(all_pos) // 2]
    comm2 = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}&after={cut[0]}.{cut[1]}")
    await comm2.connect()
    rest = await receive_all(comm2)
    await comm2.disconnect()
    assert positions(rest) == [p for p in all_pos if p > cut]


async def frames_until_end(comm: WebsocketCommunicator) -> list[Any]:
    out: list[Any] = []
    for _ in range(2000):
        frame = json.loads(await comm.receive_from(timeout=10))
        out.append(frame)
        if isinstance(frame, dict) and frame["type"] == "end":
            return out
    raise AssertionError("no end")


def flatten(frames: list[Any]) -> list[dict[str, Any]]:
    return [m for f in frames for m in (f if isinstance(f, list) else [f])]


async def test_batched_frames_carry_the_same_messages_one_frame_per_cycle() -> None:
    rid, token = await make_replay(extra_pods=3)
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}")
    await comm.connect()
    plain = await receive_all(comm)
    await comm.disconnect()
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}&batch=1")
    await comm.connect()
    frames = await frames_until_end(comm)
    await comm.disconnect()
    assert flatten(frames) == plain
    batched = [f for f in frames if isinstance(f, list)]
    # every cycle of this small cluster fits one frame: start first, end last, nothing else batched
    assert [[m["pos"][0] for m in f] for f in batched] == [[q] * len(f) for q, f in enumerate(batched, 1)]
    assert all(f[0]["type"] == "cycle.start" and f[-1]["type"] == "cycle.end" for f in batched)
    assert all("pos" not in f for f in frames if isinstance(f, dict))
    # resuming mid-cycle: the rest of that cycle in one frame, then whole cycles
    all_pos = positions(plain)
    cut = next(p for p in all_pos if p[0] == 2 and p[1] == 3)
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}&batch=1&after=2.3")
    await comm.connect()
    rest = await frames_until_end(comm)
    await comm.disconnect()
    assert positions(flatten(rest)) == [p for p in all_pos if p > cut]
    first = next(f for f in rest if isinstance(f, list))
    assert first[0]["pos"] == [2, 4] and first[-1]["type"] == "cycle.end"


async def test_a_bad_stream_option_is_named_and_the_socket_closed() -> None:
    rid, token = await make_replay()
    for query, field in (("batch=yes", "batch"), ("mode=fast", "mode"), ("after=x", "after")):
        comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}&{query}")
        await comm.connect()
        err = json.loads(await comm.receive_from(timeout=5))
        assert err["type"] == "error" and err["message"].startswith(f"{field}:"), query
        out = await comm.receive_output(timeout=5)
        assert out["type"] == "websocket.close" and out["code"] == 4400
        await comm.disconnect()


@sync_to_async
def delete_replay(rid: str) -> None:
    from schedviz.replays.models import Replay

    Replay.objects.filter(pk=rid).delete()


async def test_a_replay_deleted_while_streamed_ends_its_streams() -> None:
    from schedviz.replays import consumers

    rid, token = await make_replay()
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}&mode=playback")
    await comm.connect()
    assert json.loads(await comm.receive_from())["type"] == "hello"
    await delete_replay(rid)
    consumers._memo.forget(uuid.UUID(rid))  # as a wake-up would, without waiting for the state's few hundred ms
    await comm.send_to(text_data=json.dumps({"action": "step"}))
    msgs = [json.loads(await comm.receive_from(timeout=5)) for _ in range(2)]  # nodes, then the error
    assert msgs[-1] == {"type": "error", "code": "gone", "message": "the replay was deleted"}
    out = await comm.receive_output(timeout=5)
    assert out["type"] == "websocket.close" and out["code"] == 4404


async def test_playback_controls() -> None:
    rid, token = await make_replay(extra_pods=3)
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}&mode=playback")
    await comm.connect()
    hello = json.loads(await comm.receive_from())
    assert hello["type"] == "hello" and hello["mode"] == "playback"
    json.loads(await comm.receive_from())  # nodes
    assert await comm.receive_nothing(timeout=0.3)  # paused: nothing comes
    await comm.send_to(text_data=json.dumps({"action": "step"}))
    one = await receive_all(comm, until="cycle.end")
    assert {m["pos"][0] for m in one if "pos" in m} == {1}
    await comm.send_to(text_data=json.dumps({"action": "seek", "cycle": 4}))
    await comm.send_to(text_data=json.dumps({"action": "step"}))
    four = await receive_all(comm, until="cycle.end")
    assert {m["pos"][0] for m in four if "pos" in m} == {4}
    await comm.send_to(text_data=json.dumps({"action": "play", "speed": 100}))
    rest = await receive_all(comm, until="end")
    assert {m["pos"][0] for m in rest if "pos" in m} == {5}
    await comm.send_to(text_data=json.dumps({"action": "play", "speed": 0}))
    err = json.loads(await comm.receive_from())
    assert err["type"] == "error" and "speed" in err["message"]
    await comm.disconnect()


async def test_pause_stops_a_playing_replay_after_the_cycle_in_flight() -> None:
    rid, token = await make_replay(extra_pods=3)
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}&mode=playback&batch=1")
    await comm.connect()
    assert [json.loads(await comm.receive_from())["type"] for _ in range(2)] == ["hello", "nodes"]
    await comm.send_to(text_data=json.dumps({"action": "play", "speed": 2}))  # a cycle every 0.5 s
    first = json.loads(await comm.receive_from(timeout=5))
    assert {m["pos"][0] for m in first} == {1} and first[-1]["type"] == "cycle.end"
    await comm.send_to(text_data=json.dumps({"action": "pause"}))
    assert await comm.receive_nothing(timeout=1.5)  # three cycles' time: paused
    await comm.send_to(text_data=json.dumps({"action": "step"}))
    second = json.loads(await comm.receive_from(timeout=5))
    assert {m["pos"][0] for m in second} == {2}
    assert await comm.receive_nothing(timeout=0.7)  # a step is one cycle, then paused again
    await comm.disconnect()


async def test_other_users_and_anonymous_are_refused() -> None:
    rid, _ = await make_replay("owner")
    stranger = await token_for("mallory")
    for url, code in (
        (f"/ws/replays/{rid}/?token={stranger}", 4404),
        (f"/ws/replays/{rid}/", 4401),
        (f"/ws/replays/{rid}/?token=svz_not-a-token", 4401),
    ):
        comm = WebsocketCommunicator(application, url)
        await comm.connect()
        out = await comm.receive_output(timeout=5)
        assert out["type"] == "websocket.close" and out["code"] == code, url
        await comm.disconnect()


@sync_to_async
def team_and_stale_tokens(rid: str) -> tuple[str, str, str]:
    """A team member's token for the replay's team, and the owner's revoked and expired tokens."""
    from django.utils import timezone

    from schedviz.accounts.models import Team
    from schedviz.replays.models import Replay

    replay = Replay.objects.select_related("owner").get(pk=rid)
    team = Team.objects.create(name="platform")
    member = User.objects.create_user("bob")
    team.members.add(replay.owner, member)
    Replay.objects.filter(pk=rid).update(team=team)
    revoked, revoked_raw = ApiToken.issue(replay.owner, "revoked")
    revoked.revoked = timezone.now()
    revoked.save()
    expired, expired_raw = ApiToken.issue(replay.owner, "expired")
    expired.expires = timezone.now()
    expired.save()
    return ApiToken.issue(member, "ws")[1], revoked_raw, expired_raw


async def test_team_members_follow_shared_replays_and_stale_tokens_do_not() -> None:
    rid, _ = await make_replay("owner")
    member, revoked, expired = await team_and_stale_tokens(rid)
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={member}&batch=1")
    assert (await comm.connect())[0]
    hello = json.loads(await comm.receive_from(timeout=5))
    assert hello["type"] == "hello" and hello["replay"]["id"] == rid
    await comm.disconnect()
    for token in (revoked, expired):
        comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}")
        await comm.connect()
        out = await comm.receive_output(timeout=5)
        assert out["type"] == "websocket.close" and out["code"] == 4401
        await comm.disconnect()


async def test_cross_site_browser_origin_is_refused() -> None:
    rid, token = await make_replay()
    comm = WebsocketCommunicator(application, f"/ws/replays/{rid}/?token={token}", headers=[(b"origin", b"https://evil.example")])
    connected, _ = await comm.connect()
    assert not connected


def test_filter_messages_are_chunked_below_a_mebibyte() -> None:
    import numpy as np

    from schedviz.cycles.messages import cycle_messages
    from schedviz.engine.trace import CycleRecord

    n = 12000
    rec = CycleRecord(pod="default/p", profile="default-scheduler", result="Unschedulable", seq=1, message="m")
    rec.filter_codes = np.full(n, 2, dtype=np.int8)
    rec.filter_plugins = np.zeros(n, dtype=np.int16)
    rec.filter_reasons = np.zeros(n, dtype=np.int32)
    rec.filter_plugin_names = ["NodeResourcesFit"]
    msgs = cycle_messages(rec, [("Insufficient cpu",)])
    chunks = [m for m in msgs if m["type"] == "filter"]
    assert [c["offset"] for c in chunks] == list(range(0, n, FILTER_CHUNK))
    assert max(len(json.dumps(m)) for m in msgs) < 2**20


def test_batched_frames_stay_below_their_budget_and_carry_each_message_once() -> None:
    from schedviz.cycles.messages import FRAME_BYTES, frames

    encoded = [((1, i), json.dumps({"type": "filter", "pad": "x" * 150_000, "pos": [1, i]})) for i in range(9)]
    batched = frames(encoded, (0, -1), batch=True)
    assert 1 < len(batched) < len(encoded)
    assert all(len(text) <= FRAME_BYTES for _, text in batched)
    got = [m["pos"] for _, text in batched for m in json.loads(text)]
    assert got == [[1, i] for i in range(9)]
    assert [pos for pos, text in batched] == [tuple(json.loads(text)[-1]["pos"]) for _, text in batched]
    # after a position: only what follows it; unbatched: one frame per message
    assert [pos for pos, _ in frames(encoded, (1, 6), batch=False)] == [(1, 7), (1, 8)]
    assert frames(encoded, (1, 8), batch=True) == []


def test_node_lists_are_chunked_below_a_mebibyte_whatever_the_names() -> None:
    from schedviz.cycles.messages import NODES_CHUNK, node_messages

    longest = [f"n{i:05d}-" + "x" * 246 for i in range(5000)]  # 253 characters, the most a name may have
    msgs = node_messages(longest)
    assert max(len(json.dumps(m, separators=(",", ":"))) for m in msgs) < 2**20 / 3
    assert [n for m in msgs for n in m["names"]] == longest
    assert [m["offset"] for m in msgs] == [sum(len(m["names"]) for m in msgs[:k]) for k in range(len(msgs))]
    short = [f"n{i}" for i in range(12000)]
    assert [len(m["names"]) for m in node_messages(short)] == [NODES_CHUNK, NODES_CHUNK, 2000]
    assert node_messages([]) == [{"type": "nodes", "offset": 0, "names": []}]
