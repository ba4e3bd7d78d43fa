"""The load client's own logic (schedviz/tools/loadtest.py): reading positions, merging client processes."""

from __future__ import annotations

import json

from schedviz.tools.loadtest import StreamStats, _check, _cycle_part, _frame_messages, _merge_streams


def test_positions_are_read_from_the_ends_of_cycle_messages_only() -> None:
    msg = {"type": "filter", "offset": 0, "codes": [1, 2], "reasons": [["a]", "}"]], "pos": [12, 3]}
    raw = json.dumps(msg, separators=(",", ":"))
    assert _cycle_part(raw) == ("filter", [12, 3])
    # messages whose content the client checks, other layouts and bytes are parsed in full
    assert _cycle_part(json.dumps({"type": "end", "after": "1.2"}, separators=(",", ":"))) is None
    assert _cycle_part('{"type":"hello","replay":{},"pos":[1,0]}') is None
    assert _cycle_part(json.dumps(msg)) is None  # with spaces: not the server's compact form
    assert _cycle_part('{"pos":[1,0],"type":"score"}') is None
    assert _cycle_part(raw.encode()) is None


def test_client_processes_merge_and_disagreeing_cycles_are_errors() -> None:
    a = StreamStats(streams=2, messages=10, gaps=0, parts={1: 5, 2: 4}, last_seq=2, first_message_s=[0.1])
    b = StreamStats(streams=1, messages=7, duplicates=1, errors=["dup"], parts={1: 5, 2: 3}, last_seq=3)
    m = _merge_streams([a, b])
    assert (m.streams, m.messages, m.duplicates, m.last_seq) == (3, 17, 1, 3)
    assert m.first_message_s == [0.1]
    assert m.errors[0] == "dup" and "cycle 2: 3 parts" in m.errors[1] and len(m.errors) == 2


def test_a_batched_frame_is_checked_message_by_message() -> None:
    msgs = [{"type": "cycle.start", "pos": [1, 0]}, {"type": "stage", "pos": [1, 1]}, {"type": "cycle.end", "pos": [1, 2]}]
    frame = json.dumps(msgs, separators=(",", ":"))
    assert [k for k, _ in _frame_messages(frame)] == ["cycle.start", "stage", "cycle.end"]
    st = StreamStats()
    prev: tuple[int, int] | None = None
    parts, first = 0, True
    for kind, msg in _frame_messages(frame) + _frame_messages(json.dumps([msgs[0], msgs[2]])):
        over, prev, parts, first = _check(kind, msg, st, None, prev, parts, first, 0.0, None)
        assert over is None
    # the second frame goes back to 1.0 (a duplicate), then skips 1.1 (a gap)
    assert (st.cycles, st.duplicates, st.gaps, st.parts) == (2, 1, 1, {1: 3})
    over, prev, _, _ = _check("end", {"type": "end"}, st, None, prev, parts, first, 0.0, None)
    assert over is True and prev == (1, 2)
