"""`schedviz load`: a load test of a running SchedViz server (web + worker, PostgreSQL, Redis).

Many websocket clients watch one replay while a steady stream of API requests runs, for a while:

- the replay: a synthetic cluster (``--nodes`` x ``--pods``, every node evaluated) uploaded and
  replayed through the API, or an existing one (``--replay ID``);
- ``--clients`` websocket clients (``/ws/replays/<id>/``, live mode) connect as the replay starts and
  receive every message. Each checks that positions advance with no gap and no duplicate (every
  cycle's parts 0, 1, 2, ... and cycles one after another) up to ``end``. Then it reconnects with
  ``after=`` a random position it has seen and checks the stream resumes exactly after it, again
  to ``end``; and so on until the time is up;
- ``--api-rps`` requests per second, open loop (each at its scheduled time, whatever the latency of
  the others): the replay, its cycle list, one cycle's node page, the snapshot's nodes, the lists.
  Latency counts from the scheduled time, so a server that falls behind shows it;
- ``--pid PID`` (repeatable): the resident memory of those processes (the web server's), sampled
  every second.

The verdict: no stream error, no gap, no duplicate, no API error, API p95 under ``--p95-ms``,
memory stable (the last third's median within ``--memory-growth`` of the first third's, after
warm-up). Exit status 0 when everything passes, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import io
import json
import multiprocessing
import os
import random
import re
import statistics
import threading
import time
import urllib.parse
import uuid
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any


class LoadError(Exception):
    pass


# --------------------------------------------------------------------------------------------------
# HTTP (blocking, one keep-alive connection per worker thread)


class _Http:
    def __init__(self, base: str, token: str) -> None:
        u = urllib.parse.urlsplit(base)
        if u.scheme not in ("http", "https"):
            raise LoadError(f"--url must be http(s)://HOST[:PORT], got {base!r}")
        self.scheme, self.host, self.port = u.scheme, u.hostname or "127.0.0.1", u.port
        self.token = token
        self.local = threading.local()

    def _conn(self) -> http.client.HTTPConnection:
        c = getattr(self.local, "conn", None)
        if c is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            c = cls(self.host, self.port, timeout=60)
            self.local.conn = c
        return c

    def request(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
    ) -> tuple[int, bytes]:
        headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            c = self._conn()
            try:
                c.request(method, path, body=body, headers=headers)
                r = c.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                c.close()
                self.local.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def json(self, method: str, path: str, body: Any = None) -> Any:
        status, data = self.request(method, path, None if body is None else json.dumps(body).encode())
        if status >= 400:
            raise LoadError(f"{method} {path}: {status} {data[:300]!r}")
        return json.loads(data)


def _multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    out = io.BytesIO()
    for k, v in fields.items():
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode())
    for k, (name, data) in files.items():
        out.write(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n".encode()
        )
        out.write(data + b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return out.getvalue(), f"multipart/form-data; boundary={boundary}"


def prepare_replay(http_: _Http, nodes: int, pods: int) -> dict[str, Any]:
    """Upload a synthetic snapshot and create (start) its replay; returns ids and sizes."""
    from schedviz.tools.bench_engine import synthetic_cluster

    snap = synthetic_cluster(nodes, pods)
    payload = json.dumps({"kind": "List", "items": [n.raw for n in snap.nodes] + [p.raw for p in snap.pods]})
    body, ctype = _multipart({"name": f"load {nodes}x{pods}"}, {"file": ("load.json", payload.encode())})
    status, data = http_.request("POST", "/api/v1/snapshots/", body, ctype)
    if status not in (200, 201):
        raise LoadError(f"uploading the snapshot: {status} {data[:300]!r}")
    s = json.loads(data)
    r = http_.json("POST", "/api/v1/replays/", {"snapshot": s["id"], "all_nodes": True, "name": "load test"})
    return {"snapshot": s["id"], "replay": r["id"], "nodes": s["node_count"], "pending": s["pending_count"]}


# --------------------------------------------------------------------------------------------------
# Websocket clients


@dataclass
class StreamStats:
    streams: int = 0  # complete streams, start (or resume point) to `end`
    resumes: int = 0
    messages: int = 0
    frames: int = 0  # websocket frames (a batched frame carries a cycle's messages)
    cycles: int = 0
    gaps: int = 0
    duplicates: int = 0
    errors: list[str] = field(default_factory=list)
    reconnects: int = 0
    drops: list[str] = field(default_factory=list)  # connections lost (then resumed after the last position)
    parts: dict[int, int] = field(default_factory=dict)  # cycle seq -> number of messages (from full streams)
    last_seq: int = 0
    first_message_s: list[float] = field(default_factory=list)


def _next_pos(pos: tuple[int, int], parts: dict[int, int]) -> tuple[int, int] | None:
    """The position right after ``pos`` when every cycle's part count is known."""
    c, p = pos
    n = parts.get(c)
    if n is None:
        return None
    return (c, p + 1) if p + 1 < n else (c + 1, 0)


_TAIL = re.compile(r'"pos":\[(\d+),(\d+)\]\}$')


def _cycle_part(raw: str | bytes) -> tuple[str, list[int]] | None:
    """(type, pos) of a cycle's message, read from its ends without parsing the whole message (the
    server writes ``type`` first and ``pos`` last): a client receiving thousands of messages a second
    spends its time on the positions, not on decoding verdicts. None for anything else."""
    if not isinstance(raw, str) or not raw.startswith('{"type":"'):
        return None
    end = raw.find('"', 9)
    m = _TAIL.search(raw, max(0, len(raw) - 40))
    if end < 0 or m is None:
        return None
    kind = raw[9:end]
    if kind in ("hello", "status", "end", "error"):
        return None
    return kind, [int(m.group(1)), int(m.group(2))]


async def _stream(
    ws_url: str,
    after: tuple[int, int] | None,
    st: StreamStats,
    deadline: float,
    expect_total: int | None,
    cursor: list[tuple[int, int] | None] | None = None,
) -> tuple[int, int] | None:
    """One connection to `end`: checks the positions; returns the last position. ``cursor[0]`` follows
    the last position received, for a client whose connection drops to resume after it."""
    import websockets

    url = ws_url + (f"&after={after[0]}.{after[1]}" if after else "")
    prev: tuple[int, int] | None = after
    cycle_parts = 0
    t0 = time.perf_counter()
    first = True
    async with websockets.connect(url, max_size=8 * 2**20, open_timeout=30, close_timeout=5) as ws:
        while True:
            remaining = deadline + 120 - time.monotonic()  # a stream in progress may finish late
            raw = await asyncio.wait_for(ws.recv(), timeout=max(5.0, min(remaining, 120.0)))
            st.frames += 1
            for kind, msg in _frame_messages(raw):
                st.messages += 1
                over, prev, cycle_parts, first = _check(kind, msg, st, after, prev, cycle_parts, first, t0, cursor)
                if over is not None:
                    if over:
                        last = prev[0] if prev else 0
                        if expect_total is not None and last != expect_total:
                            st.gaps += 1
                            st.errors.append(f"ended after cycle {last}, expected {expect_total}")
                        st.last_seq = max(st.last_seq, last)
                        st.streams += 1
                    return prev


def _frame_messages(raw: str | bytes) -> list[tuple[str, dict[str, Any]]]:
    """(type, message) of every message a frame carries: one, or a batched cycle's (a JSON array)."""
    if isinstance(raw, str) and raw.startswith("["):
        return [(str(m.get("type")), m) for m in json.loads(raw)]
    head = _cycle_part(raw)
    if head is not None:
        return [(head[0], {"pos": head[1]})]
    msg = json.loads(raw)
    return [(str(msg.get("type")), msg)]


def _check(
    kind: str,
    msg: dict[str, Any],
    st: StreamStats,
    after: tuple[int, int] | None,
    prev: tuple[int, int] | None,
    cycle_parts: int,
    first: bool,
    t0: float,
    cursor: list[tuple[int, int] | None] | None,
) -> tuple[bool | None, tuple[int, int] | None, int, bool]:
    """Checks one message against the previous position. Returns (over, prev, cycle_parts, first):
    ``over`` is None while the stream goes on, True after its ``end``, False when the replay failed."""
    if "pos" in msg:
        pos = (int(msg["pos"][0]), int(msg["pos"][1]))
        if first:
            st.first_message_s.append(time.perf_counter() - t0)
            first = False
        if prev is not None and pos <= prev:
            st.duplicates += 1
            st.errors.append(f"duplicate or out of order: {pos} after {prev}")
        elif prev is not None and prev != (0, -1):
            expected_next = _next_pos(prev, st.parts)
            same_cycle = pos[0] == prev[0] and pos[1] == prev[1] + 1
            next_cycle = pos[0] == prev[0] + 1 and pos[1] == 0
            if expected_next is not None and pos != expected_next:
                st.gaps += 1
                st.errors.append(f"gap: {pos} after {prev} (expected {expected_next})")
            elif expected_next is None and not (same_cycle or next_cycle):
                st.gaps += 1
                st.errors.append(f"gap: {pos} after {prev}")
        elif prev in (None, (0, -1)) and pos != (1, 0):
            st.gaps += 1
            st.errors.append(f"the stream starts at {pos}, not (1, 0)")
        if kind == "cycle.start":
            cycle_parts = 0
        cycle_parts += 1
        if kind == "cycle.end":
            st.cycles += 1
            known = st.parts.get(pos[0])
            if after is None and pos[1] == cycle_parts - 1:  # a full cycle seen from its start
                if known is not None and known != cycle_parts:
                    st.errors.append(f"cycle {pos[0]}: {cycle_parts} parts, earlier {known}")
                st.parts[pos[0]] = cycle_parts
        if cursor is not None:
            cursor[0] = pos
        return None, pos, cycle_parts, first
    if kind == "hello" and msg["replay"]["attempt"] != 1:
        st.errors.append(f"unexpected attempt {msg['replay']['attempt']}")
    elif kind == "end":
        return True, prev, cycle_parts, first
    elif kind == "status" and msg.get("status") in ("failed", "cancelled"):
        st.errors.append(f"replay {msg.get('status')}: {msg.get('reason')}")
        return False, prev, cycle_parts, first
    return None, prev, cycle_parts, first


async def _watcher(
    ws_url: str, st: StreamStats, deadline: float, total: asyncio.Future[int], rng: random.Random
) -> None:
    after: tuple[int, int] | None = None
    cursor: list[tuple[int, int] | None] = [None]
    while time.monotonic() < deadline:
        expect = total.result() if total.done() else None
        cursor[0] = after
        try:
            last = await _stream(ws_url, after, st, deadline, expect, cursor)
        except Exception as exc:  # a dropped connection: reconnect after the last position received
            st.reconnects += 1  # reported; what matters is that the resumed stream has no gap
            st.drops.append(f"{type(exc).__name__}: {exc}"[:200])
            after = cursor[0]
            await asyncio.sleep(0.5)
            continue
        if last is not None and not total.done():
            total.set_result(last[0])
        # resume from a random position seen (a full cycle set is known after the first stream)
        seqs = sorted(st.parts)
        if not seqs:
            after = None
            continue
        c = rng.choice(seqs)
        after = (c, rng.randrange(st.parts[c]))
        st.resumes += 1


# --------------------------------------------------------------------------------------------------
# API load


@dataclass
class ApiStats:
    latencies_ms: list[float] = field(default_factory=list)
    by_path: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    late_starts: int = 0


def _api_paths(ids: dict[str, Any], pending: int) -> list[tuple[str, str]]:
    rid, sid = ids["replay"], ids["snapshot"]
    seq = max(1, pending // 2)
    return [
        ("replay", f"/api/v1/replays/{rid}/"),
        ("cycles", f"/api/v1/replays/{rid}/cycles/?page_size=50"),
        ("cycle", f"/api/v1/replays/{rid}/cycles/{seq}/?page_size=100"),
        ("cycle-failed", f"/api/v1/replays/{rid}/cycles/1/?verdict=failed&page_size=50"),
        ("snapshot-nodes", f"/api/v1/snapshots/{sid}/nodes/?page_size=100"),
        ("replays", "/api/v1/replays/?page_size=20"),
        ("snapshots", "/api/v1/snapshots/?page_size=20"),
    ]


def _api_load(
    http_: _Http,
    ids: dict[str, Any],
    pending: int,
    rps: float,
    deadline: float,
    st: ApiStats,
    stop: threading.Event,
) -> None:
    if rps <= 0:
        return
    every = _api_paths(ids, pending)
    # a cycle's page exists once the replay has stored it: those join the mix when the replay has ended
    paths = [p for p in every if p[0] not in ("cycle", "cycle-failed")]
    ended = threading.Event()
    lock = threading.Lock()

    def watch_replay() -> None:
        while time.monotonic() < deadline and not stop.is_set():
            with contextlib.suppress(LoadError, OSError, ValueError):
                if http_.json("GET", f"/api/v1/replays/{ids['replay']}/")["status"] in (
                    "succeeded",
                    "failed",
                    "cancelled",
                ):
                    ended.set()
                    return
            time.sleep(0.5)

    threading.Thread(target=watch_replay, daemon=True).start()

    def one(name: str, path: str, scheduled: float) -> None:
        try:
            status, data = http_.request("GET", path)
            err = None if status == 200 else f"{name}: {status} {data[:200]!r}"
        except Exception as exc:
            status, err = 0, f"{name}: {type(exc).__name__}: {exc}"
        ms = (time.perf_counter() - scheduled) * 1000
        with lock:
            st.latencies_ms.append(ms)
            st.by_path.setdefault(name, []).append(ms)
            st.statuses[status] = st.statuses.get(status, 0) + 1
            if err:
                st.errors.append(err[:300])

    interval = 1.0 / rps
    with ThreadPoolExecutor(max_workers=max(4, int(rps))) as pool:
        start = time.perf_counter()
        i = 0
        while time.monotonic() < deadline and not stop.is_set():
            scheduled = start + i * interval
            delay = scheduled - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.05:
                st.late_starts += 1
            if ended.is_set() and len(paths) < len(every):
                paths = every
            name, path = paths[i % len(paths)]
            pool.submit(one, name, path, scheduled)
            i += 1


# --------------------------------------------------------------------------------------------------
# Memory


def rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _sample_memory(
    pids: list[int], samples: dict[int, list[tuple[float, int]]], stop: threading.Event, t0: float
) -> None:
    while not stop.is_set():
        for pid in pids:
            v = rss_bytes(pid)
            if v is not None:
                samples.setdefault(pid, []).append((time.monotonic() - t0, v))
        stop.wait(1.0)


def _memory_verdict(series: list[tuple[float, int]], warmup: float, growth: float) -> dict[str, Any]:
    values = [v for t, v in series if t >= warmup] or [v for _, v in series]
    if len(values) < 3:
        return {"samples": len(values), "stable": True}
    third = max(1, len(values) // 3)
    first, last = statistics.median(values[:third]), statistics.median(values[-third:])
    mib = 1024 * 1024
    return {
        "samples": len(values),
        "firstMiB": round(first / mib, 1),
        "lastMiB": round(last / mib, 1),
        "maxMiB": round(max(v for _, v in series) / mib, 1),
        "growth": round(last / first - 1, 3),
        "stable": last <= first * (1 + growth) + 16 * mib,
    }


# --------------------------------------------------------------------------------------------------
# The run


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * len(s)))], 1)


def _ws_process(
    ws_url: str, clients: int, deadline: float, seed: int, total_hint: int | None, nice: int = 0
) -> StreamStats:
    """One client process: ``clients`` watchers on one event loop (``deadline`` is CLOCK_MONOTONIC,
    which every process of the machine shares). ``nice`` lowers its priority, so that on a machine it
    shares with the server the process timing the API requests is not kept waiting by its siblings."""
    if nice:
        os.nice(nice)
    st = StreamStats()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        total: asyncio.Future[int] = loop.create_future()
        if total_hint is not None:
            total.set_result(total_hint)
        rng = random.Random(seed)
        await asyncio.gather(
            *(_watcher(ws_url, st, deadline, total, random.Random(rng.random())) for _ in range(clients))
        )

    asyncio.run(main())
    return st


def _api_process(
    url: str, token: str, ids: dict[str, Any], pending: int, rps: float, deadline: float
) -> ApiStats:
    st = ApiStats()
    _api_load(_Http(url, token), ids, pending, rps, deadline, st, threading.Event())
    return st


def _merge_streams(parts: list[StreamStats]) -> StreamStats:
    out = StreamStats()
    for st in parts:
        out.streams += st.streams
        out.resumes += st.resumes
        out.messages += st.messages
        out.frames += st.frames
        out.cycles += st.cycles
        out.gaps += st.gaps
        out.duplicates += st.duplicates
        out.errors += st.errors
        out.reconnects += st.reconnects
        out.drops += st.drops
        out.last_seq = max(out.last_seq, st.last_seq)
        out.first_message_s += st.first_message_s
        for seq, n in st.parts.items():
            known = out.parts.setdefault(seq, n)
            if known != n:  # every client must see the same messages for a cycle
                out.errors.append(f"cycle {seq}: {n} parts in one client process, {known} in another")
    return out


def run(
    url: str,
    token: str,
    *,
    clients: int = 200,
    api_rps: float = 50,
    duration: float = 120,
    nodes: int = 1000,
    pods: int = 100,
    replay: str | None = None,
    pids: list[int] | None = None,
    p95_ms: float = 300,
    memory_growth: float = 0.25,
    seed: int = 1,
    processes: int | None = None,
    client_nice: int = 5,
) -> dict[str, Any]:
    """The load run. The websocket clients run in ``processes`` processes (default: one per 50
    clients, at most 4; at ``client_nice``) and the API requests in one more, so that a client's own
    work (thousands of messages a second) does not delay the requests it times."""
    http_ = _Http(url, token)
    if replay:
        r = http_.json("GET", f"/api/v1/replays/{replay}/")
        ids = {"replay": replay, "snapshot": r["snapshot"], "nodes": None, "pending": r["cycles_total"]}
    else:
        ids = prepare_replay(http_, nodes, pods)
    ws_base = url.replace("https://", "wss://").replace("http://", "ws://").rstrip("/")
    ws_url = f"{ws_base}/ws/replays/{ids['replay']}/?token={urllib.parse.quote(token)}&batch=1"
    pids = pids or []
    nproc = max(1, min(clients, processes or min(4, -(-clients // 50))))
    t0 = time.monotonic()
    deadline = t0 + duration
    samples: dict[int, list[tuple[float, int]]] = {}
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_memory, args=(pids, samples, stop, t0), daemon=True)
    sampler.start()
    rng = random.Random(seed)
    shares = [clients // nproc + (1 if i < clients % nproc else 0) for i in range(nproc)]
    ctx = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(max_workers=nproc + 1, mp_context=ctx) as pool:
            api_future = pool.submit(
                _api_process, url, token, ids, int(ids["pending"] or 1), api_rps, deadline
            )
            ws_futures = [
                pool.submit(_ws_process, ws_url, n, deadline, rng.randrange(2**31), None, client_nice)
                for n in shares
                if n > 0
            ]
            stream = _merge_streams([f.result() for f in ws_futures])
            api = api_future.result()
    finally:
        stop.set()
        sampler.join(timeout=5)
    elapsed = time.monotonic() - t0
    final = http_.json("GET", f"/api/v1/replays/{ids['replay']}/")
    memory = {
        str(pid): _memory_verdict(s, min(10.0, duration / 4), memory_growth) for pid, s in samples.items()
    }
    p95 = _pct(api.latencies_ms, 0.95)
    checks = {
        "replaySucceeded": final["status"] == "succeeded",
        "everyClientFinishedAStream": stream.streams >= clients,
        "noGap": stream.gaps == 0,
        "noDuplicate": stream.duplicates == 0,
        "noStreamError": not stream.errors,
        "noApiError": not api.errors,
        "apiP95": p95 is not None and p95 < p95_ms if api_rps > 0 else True,
        "memoryStable": all(m["stable"] for m in memory.values()),
    }
    return {
        "url": url,
        "replay": ids["replay"],
        "nodes": ids.get("nodes"),
        "cycles": stream.last_seq,
        "clients": clients,
        "clientProcesses": nproc,
        "durationSeconds": round(elapsed, 1),
        "streams": {
            "complete": stream.streams,
            "resumes": stream.resumes,
            "messages": stream.messages,
            "messagesPerSecond": round(stream.messages / elapsed, 1),
            "frames": stream.frames,
            "cycleEnds": stream.cycles,
            "gaps": stream.gaps,
            "duplicates": stream.duplicates,
            "reconnects": stream.reconnects,
            "drops": sorted({d.split(":")[0] for d in stream.drops}),
            "errors": stream.errors[:20],
            "firstMessageP95Ms": _pct([s * 1000 for s in stream.first_message_s], 0.95),
        },
        "api": {
            "requests": len(api.latencies_ms),
            "ratePerSecond": round(len(api.latencies_ms) / elapsed, 1),
            "p50Ms": _pct(api.latencies_ms, 0.5),
            "p95Ms": p95,
            "p99Ms": _pct(api.latencies_ms, 0.99),
            "maxMs": _pct(api.latencies_ms, 1.0),
            "p95ByPathMs": {k: _pct(v, 0.95) for k, v in sorted(api.by_path.items())},
            "statuses": {str(k): v for k, v in sorted(api.statuses.items())},
            "lateStarts": api.late_starts,
            "errors": api.errors[:20],
        },
        "memory": memory,
        "checks": checks,
        "passed": all(checks.values()),
    }


def summary(r: dict[str, Any]) -> str:
    s, a = r["streams"], r["api"]
    lines = [
        f"replay {r['replay']}: {r['nodes'] or '?'} nodes, {r['cycles']} cycles; {r['clients']} websocket clients "
        f"for {r['durationSeconds']} s",
        f"streams: {s['complete']} complete ({s['resumes']} resumed mid-replay), {s['messages']} messages "
        f"({s['messagesPerSecond']}/s) in {s['frames']} frames, gaps {s['gaps']}, duplicates {s['duplicates']}, reconnects {s['reconnects']}",
        f"api: {a['requests']} requests ({a['ratePerSecond']}/s), p50 {a['p50Ms']} ms, p95 {a['p95Ms']} ms, "
        f"p99 {a['p99Ms']} ms, max {a['maxMs']} ms, statuses {a['statuses']}",
    ]
    for pid, m in r["memory"].items():
        if "firstMiB" in m:
            lines.append(
                f"memory of pid {pid}: {m['firstMiB']} -> {m['lastMiB']} MiB (max {m['maxMiB']}, "
                f"{m['growth']:+.1%}) {'stable' if m['stable'] else 'GROWING'}"
            )
    for err in (s["errors"] + a["errors"])[:10]:
        lines.append(f"  error: {err}")
    failed = [k for k, ok in r["checks"].items() if not ok]
    lines.append("PASS" if r["passed"] else "FAIL: " + ", ".join(failed))
    return "\n".join(lines)


def main_pids(values: list[str]) -> list[int]:
    out = []
    for v in values:
        try:
            out.append(int(v))
        except ValueError:
            raise LoadError(f"--pid must be a process id, got {v!r}") from None
        if not os.path.exists(f"/proc/{out[-1]}"):
            raise LoadError(f"--pid {v}: no such process")
    return out
