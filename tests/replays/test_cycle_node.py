"""One node at one cycle (``/replays/<id>/cycles/<seq>/nodes/<node>/``) and the cycle's pod
(``/cycles/<seq>/pod/``): the numbers agree with the stored cycle and the snapshot, and every Filter
plugin's verdict agrees with the one the scheduler recorded for the plugins it ran."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rest_framework.test import APIClient

from tests.webfixtures import error_of

from .test_replays import start

SAMPLE = Path(__file__).resolve().parents[2] / "schedviz" / "samples" / "cluster.yaml"


def test_every_filter_agrees_with_the_recorded_verdicts(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    snap = upload(SAMPLE.read_text())
    replay = start(api, snap["id"], all_nodes=True)
    rid = replay["id"]
    cycles = api.get(f"/api/v1/replays/{rid}/cycles/?page_size=1000").json()["results"]
    pods = {p["key"]: p for p in api.get(f"/api/v1/snapshots/{snap['id']}/pods/?page_size=1000").json()["results"]}
    checked_rejections = 0
    beyond = 0
    for c in cycles[:8]:
        page = api.get(f"/api/v1/replays/{rid}/cycles/{c['seq']}/?page_size=1000").json()
        pod = api.get(f"/api/v1/replays/{rid}/cycles/{c['seq']}/pod/").json()
        assert pod["pod"] == c["pod"]
        assert pod["requests"].get("cpu", 0) == pods[c["pod"]]["requests"].get("cpu", 0)
        assert pod["priority"] == pods[c["pod"]]["priority"]
        for n in page["nodes"]["results"]:
            if not n["evaluated"] or n["filter"] is None:
                continue
            got = api.get(f"/api/v1/replays/{rid}/cycles/{c['seq']}/nodes/{n['name']}/").json()
            assert got["seq"] == c["seq"] and got["node"]["name"] == n["name"] and got["pod"]["pod"] == c["pod"]
            facts = got["node"]
            for r, a in facts["allocatable"].items():
                assert facts["free"][r] == a - facts["requested"].get(r, 0)
            allf = got["allFilters"]
            if allf["preFilter"]["code"] != "Success":
                continue
            ran = [f for f in allf["filters"] if f["ranByScheduler"]]
            rejecting = [f for f in ran if f["code"] not in ("Success", "Skip")]
            if n["filter"]["code"] == "Success":
                assert not rejecting, (c["seq"], n["name"], rejecting)
                assert len(ran) == len(allf["filters"])
                continue
            # the scheduler's verdict is the first rejection among the plugins it ran; the rest did not run
            first = rejecting[0]
            assert (first["plugin"], first["code"], first["reasons"]) == (
                n["filter"]["plugin"],
                n["filter"]["code"],
                n["filter"]["reasons"],
            ), (c["seq"], n["name"])
            assert ran[-1] is first
            checked_rejections += 1
            later = allf["filters"][len(ran) :]
            beyond += sum(1 for f in later if f["code"] not in ("Success", "Skip", None))
    assert checked_rejections >= 10
    assert beyond >= 1, "some rejected node fails more than one filter in the sample"


def test_a_rejected_nodes_resources_as_the_cycle_found_them(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    # cluster_yaml: "huge" asks 16 CPU; "small" has 2 with 1 requested by "running", "large" 8 with web's 500m
    replay = start(api, upload()["id"])
    rid = replay["id"]
    huge = api.get(f"/api/v1/replays/{rid}/cycles/?pod=default/huge").json()["results"][0]
    got = api.get(f"/api/v1/replays/{rid}/cycles/{huge['seq']}/nodes/large/").json()
    assert got["pod"]["requests"]["cpu"] == 16000
    assert got["node"]["allocatable"]["cpu"] == 8000
    assert got["node"]["requested"]["cpu"] == 500  # web was placed on it the cycle before
    assert got["node"]["free"]["cpu"] == 7500
    small = api.get(f"/api/v1/replays/{rid}/cycles/{huge['seq']}/nodes/small/").json()
    assert small["node"]["requested"]["cpu"] == 1000 and small["node"]["podCount"] == 1
    tainted = api.get(f"/api/v1/replays/{rid}/cycles/{huge['seq']}/nodes/tainted/").json()
    assert tainted["node"]["taints"] == [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    verdicts = {f["plugin"]: f for f in tainted["allFilters"]["filters"]}
    # the scheduler stopped at TaintToleration; NodeResourcesFit, later in the profile, would reject it too
    assert verdicts["TaintToleration"]["code"] == "UnschedulableAndUnresolvable"
    assert verdicts["TaintToleration"]["ranByScheduler"]
    # (16 CPU asked of 8 allocatable: more than the node has at all, hence unresolvable)
    assert verdicts["NodeResourcesFit"]["code"] == "UnschedulableAndUnresolvable"
    assert verdicts["NodeResourcesFit"]["reasons"] == ["Insufficient cpu"]
    assert not verdicts["NodeResourcesFit"]["ranByScheduler"]
    assert "beyond" in tainted["allFilters"]["note"] or "not run by the scheduler" in tainted["allFilters"]["note"]


def test_unknown_cycle_node_and_someone_elses_replay(
    api: APIClient, other_api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    replay = start(api, upload()["id"])
    rid = replay["id"]
    err = error_of(api.get(f"/api/v1/replays/{rid}/cycles/1/nodes/nowhere/"), 400)
    assert err["details"] == {"node": ["no node 'nowhere' in the replay's snapshot"]}
    error_of(api.get(f"/api/v1/replays/{rid}/cycles/99/nodes/large/"), 404)
    error_of(api.get(f"/api/v1/replays/{rid}/cycles/99/pod/"), 404)
    error_of(other_api.get(f"/api/v1/replays/{rid}/cycles/1/nodes/large/"), 404)
    error_of(other_api.get(f"/api/v1/replays/{rid}/cycles/1/pod/"), 404)


def test_a_rejection_comes_with_the_plugins_own_numbers(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    """The rejecting plugin's diagnosis, as Why here? gives it: a spread constraint's domain counts and
    skew, the taint the pod does not tolerate (one of the node's own)."""
    snap = upload(SAMPLE.read_text())
    rid = start(api, snap["id"], all_nodes=True)["id"]
    cycles = api.get(f"/api/v1/replays/{rid}/cycles/?page_size=1000").json()["results"]
    wanted = {"PodTopologySpread", "TaintToleration"}
    found: dict[str, list[str]] = {}
    for c in cycles:
        page = api.get(f"/api/v1/replays/{rid}/cycles/{c['seq']}/?page_size=1000").json()
        for n in page["nodes"]["results"]:
            plugin = (n["filter"] or {}).get("plugin")
            if plugin not in wanted or plugin in found:
                continue
            got = api.get(f"/api/v1/replays/{rid}/cycles/{c['seq']}/nodes/{n['name']}/").json()
            entry = next(f for f in got["allFilters"]["filters"] if f["plugin"] == plugin)
            assert entry["reasons"] == n["filter"]["reasons"]
            found[plugin] = entry["diagnosis"]
            if plugin == "TaintToleration":
                taints = {f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in got["node"]["taints"]}
                assert any(t in " ".join(entry["diagnosis"]) for t in taints), (entry, taints)
        if found.keys() == wanted:
            break
    assert found.keys() == wanted
    spread = " ".join(found["PodTopologySpread"])
    assert re.search(r"has \d+ matching pod\(s\) \+ 1 for this pod, global minimum \d+: skew \d+ > \d+", spread), spread
    assert "untolerated taint" in " ".join(found["TaintToleration"])
