"""The kind catalogue (schedviz/kube/kinds.py) against every other place that lists kinds: the engine's
kept kinds and namespaced kinds, the one-shot reader, live mode's streams, the stand-in API server,
the shipped ClusterRole and docs/live.md."""

from __future__ import annotations

import re
from pathlib import Path

import kubernetes.client
import yaml

from schedviz.engine.loader import KEPT_KINDS
from schedviz.engine.objects import KubeObject
from schedviz.kube import reader, testing
from schedviz.kube.kinds import (
    EVENTS_FAILED,
    EVENTS_SCHEDULED,
    KINDS,
    STREAMS,
    UPLOAD_ONLY_KINDS,
    kind,
    rbac_rules,
    stream,
)

ROOT = Path(__file__).resolve().parents[2]
NAMES = [k.kind for k in KINDS]


def test_each_kind_is_listed_once() -> None:
    assert len(set(NAMES)) == len(NAMES)
    assert len({k.plural for k in KINDS}) == len(KINDS)
    assert {"Namespace", "Node", "Pod"} == {k.kind for k in KINDS if k.required}


def test_the_engine_keeps_every_kind_read_besides_nodes_and_pods() -> None:
    # the loader reads Nodes and Pods into their own lists; anything outside KEPT_KINDS is "ignored"
    assert set(NAMES) - {"Node", "Pod"} | UPLOAD_ONLY_KINDS == KEPT_KINDS
    assert not UPLOAD_ONLY_KINDS & set(NAMES)


def test_the_engine_gives_the_namespaced_kinds_a_namespace() -> None:
    namespaced = {k.kind for k in KINDS if k.namespaced}
    # CSIStorageCapacity is namespaced in the API, but the engine leaves its namespace empty when an
    # uploaded object omits it (objects read from a cluster always carry theirs)
    engine_differs = {"CSIStorageCapacity"}
    assert namespaced - engine_differs == KubeObject.namespaced_kinds & set(NAMES)


def test_every_list_call_is_the_clients() -> None:
    for k in KINDS:
        api = getattr(kubernetes.client, k.api)
        assert callable(getattr(api, k.list_all)), k
        if k.list_namespaced is not None:
            assert callable(getattr(api, k.list_namespaced)), k
        assert (k.api == "CustomObjectsApi") == k.custom, k


def test_the_reader_lists_the_built_in_kinds_in_catalogue_order() -> None:
    assert list(reader.kinds_read()) == [k.kind for k in KINDS if not k.custom]
    assert tuple(k for k in KINDS if not k.custom) == reader.RESOURCES


def test_live_mode_streams_every_kind_and_the_schedulers_events() -> None:
    mirrored = [s for s in STREAMS if s.mirrored]
    assert sorted(s.name for s in mirrored) == sorted(NAMES)
    for s in mirrored:
        k = kind(s.name)
        assert (s.kind, s.api_version, s.api, s.method, s.plural, s.required, s.custom) == (
            k.kind,
            k.api_version,
            k.api,
            k.list_all,
            k.plural,
            k.required,
            k.custom,
        )
        assert s.field_selector is None
    events = [s for s in STREAMS if not s.mirrored]
    assert [s.name for s in events] == [EVENTS_SCHEDULED, EVENTS_FAILED]
    assert all(s.kind == "Event" and s.required and s.field_selector for s in events)
    assert stream("Pod").required and not stream("PodGroup").required


def test_the_stand_in_api_server_serves_every_kind() -> None:
    served = {(r.api_version, r.plural, r.kind, r.namespaced) for r in testing.BUILTIN}
    for k in KINDS:
        if k.custom:  # served once a test installs its CRD
            pg = testing.PODGROUPS
            assert (pg.api_version, pg.plural, pg.kind, pg.namespaced) == (
                k.api_version,
                k.plural,
                k.kind,
                k.namespaced,
            )
        else:
            assert (k.api_version, k.plural, k.kind, k.namespaced) in served, k
    others = {r.plural for r in testing.BUILTIN} - {k.plural for k in KINDS}
    assert others == {"events", "configmaps"}


def test_the_cluster_role_grants_what_is_read() -> None:
    docs = [d for d in yaml.safe_load_all((ROOT / "deploy" / "kubernetes" / "rbac.yaml").read_text()) if d]
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    granted: dict[str, set[str]] = {}
    for rule in role["rules"]:
        for group in rule["apiGroups"]:
            granted.setdefault(group, set()).update(rule["resources"])
    expected: dict[str, set[str]] = {"": {"events"}}
    for k in KINDS:
        expected.setdefault(k.group, set()).add(k.plural)
    assert granted == expected == rbac_rules()


def test_docs_name_every_stream_in_order() -> None:
    text = " ".join((ROOT / "docs" / "live.md").read_text().split())
    start = text.index("One entry per stream: every kind the scheduler reads (")
    kinds_part, _, rest = text[start:].partition(") and the scheduler's events (")
    events_part = rest.partition(")")[0]
    assert re.findall(r"`([^`]+)`", kinds_part) == [s.name for s in STREAMS if s.mirrored]
    assert re.findall(r"`([^`]+)`", events_part) == [s.name for s in STREAMS if not s.mirrored]
