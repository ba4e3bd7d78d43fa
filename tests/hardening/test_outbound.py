"""What an ordinary user's upload can make the server call or read: nothing it should not.

Through the API, as a user who is not staff: scheduler extenders and watched clusters' API servers
named in every spelling of loopback, link-local, a public-looking name that resolves to loopback,
an allowed host that redirects elsewhere, file paths in configurations, kubeconfig paths that climb
or link out of their directories. Local listeners count what reaches them: nothing may.
"""

from __future__ import annotations

import builtins
import http.server
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from schedviz.outbound.addresses import AllowList
from schedviz.outbound.connect import Refused, vetted_addresses
from schedviz.outbound.extenders import ExtenderPolicy
from tests.webfixtures import cluster_yaml, error_of

LOOPBACK_SPELLINGS = ["127.0.0.1", "localhost", "[::1]", "[::ffff:127.0.0.1]", "2130706433", "0x7f000001", "127.1"]
PUBLIC_LOOKING = "api.prod-cluster.example.com"


# --------------------------------------------------------------------------------------------------
# Listeners that record whatever reaches them


class Listener:
    """An HTTP server on loopback (IPv4 and IPv6) recording every request; ``routes`` maps a path to
    (status, headers, body)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.connections = 0
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                outer.requests.append((self.command, self.path))
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                status, headers, body = outer.routes.get(self.path, (404, {}, b""))
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def verify_request(self, request: Any, client_address: Any) -> bool:
                outer.connections += 1
                return True

        class Server6(Server):
            address_family = socket.AF_INET6

        self.v4 = Server(("127.0.0.1", 0), Handler)
        self.port = self.v4.server_address[1]
        try:
            self.v6: Server | None = Server6(("::1", self.port), Handler)
        except OSError:
            self.v6 = None
        self.threads = [
            threading.Thread(target=s.serve_forever, daemon=True) for s in (self.v4, self.v6) if s is not None
        ]
        for t in self.threads:
            t.start()

    def close(self) -> None:
        for s in (self.v4, self.v6):
            if s is not None:
                s.shutdown()
                s.server_close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture
def second_listener() -> Iterator[Listener]:
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture(autouse=True)
def operator_allows_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The defaults: no extender URL and no non-public cluster host allowed."""
    monkeypatch.delenv("SCHEDVIZ_EXTENDER_URLS", raising=False)
    monkeypatch.delenv("SCHEDVIZ_CLUSTER_HOSTS", raising=False)


@pytest.fixture
def public_name_resolves_to_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """A DNS name that looks public but whose record points at 127.0.0.1 (DNS rebinding, or a
    record an attacker controls)."""
    real = socket.getaddrinfo

    def fake(host: Any, *args: Any, **kw: Any) -> Any:
        if host == PUBLIC_LOOKING:
            return real("127.0.0.1", *args, **kw)
        return real(host, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", fake)


@pytest.fixture
def files_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path ``open`` is called with from now on (builtins and os)."""
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file: Any, *args: Any, **kw: Any) -> Any:
        opened.append(os.fspath(file) if isinstance(file, str | os.PathLike) else str(file))
        return real_open(file, *args, **kw)

    def spy_os_open(path: Any, *args: Any, **kw: Any) -> Any:
        opened.append(os.fspath(path))
        return real_os_open(path, *args, **kw)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    return opened


# --------------------------------------------------------------------------------------------------
# The guard itself


@pytest.mark.parametrize(
    "host", [*LOOPBACK_SPELLINGS, "169.254.169.254", "10.0.0.7", "192.168.1.1", "100.64.0.1", "[fd00::1]", "[fe80::1]", "0.0.0.0"]
)
def test_every_spelling_of_a_non_public_address_is_refused(host: str) -> None:
    with pytest.raises(Refused) as refused:
        vetted_addresses(host, 443, AllowList.parse("", "SCHEDVIZ_CLUSTER_HOSTS"))
    assert "refused" in str(refused.value) and "SCHEDVIZ_CLUSTER_HOSTS" in str(refused.value)


def test_a_public_looking_name_that_resolves_to_loopback_is_refused(public_name_resolves_to_loopback: None) -> None:
    with pytest.raises(Refused, match=f"{PUBLIC_LOOKING} resolves to a loopback address"):
        vetted_addresses(PUBLIC_LOOKING, 443, AllowList.parse("", "SCHEDVIZ_CLUSTER_HOSTS"))


def test_the_allow_list_opens_exactly_what_it_names() -> None:
    allow = AllowList.parse("127.0.0.1, 10.1.0.0/16 kube.internal", "SCHEDVIZ_CLUSTER_HOSTS")
    assert vetted_addresses("127.1", 443, allow)  # the address is named, however it is spelled
    assert vetted_addresses("10.1.2.3", 443, allow)
    with pytest.raises(Refused):
        vetted_addresses("10.2.0.1", 443, allow)
    with pytest.raises(Refused):
        vetted_addresses("[::1]", 443, allow)
    assert vetted_addresses("93.184.216.34", 443, AllowList.parse("", "X"))  # public: no list needed


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://ext.internal:8888/scheduler/filter", True),
        ("http://ext.internal:8888/scheduler", True),
        ("HTTP://EXT.internal:8888/scheduler/prioritize", True),
        ("http://ext.internal:8889/scheduler/filter", False),  # another port
        ("https://ext.internal:8888/scheduler/filter", False),  # another scheme
        ("http://ext.internal:8888/schedulers/filter", False),  # not on a path boundary
        ("http://ext.internal:8888/scheduler/../admin", False),
        ("http://ext.internal:8888/scheduler/%2e%2e/admin", False),
        ("http://ext.internal:8888/scheduler%2fx", False),
        ("http://ext.internal:8888@169.254.169.254/scheduler/filter", False),
        ("http://user@ext.internal:8888/scheduler/filter", False),
        ("http://ext.internal.evil.com:8888/scheduler/filter", False),
        ("file:///etc/passwd", False),
    ],
)
def test_extender_url_prefixes_match_whole_parts(url: str, allowed: bool) -> None:
    assert ExtenderPolicy(("http://ext.internal:8888/scheduler",)).allows(url) is allowed


# --------------------------------------------------------------------------------------------------
# Extenders through the API


def extender_config(url: str, **tls: Any) -> dict[str, Any]:
    ext: dict[str, Any] = {"urlPrefix": url, "filterVerb": "filter", "weight": 1}
    if tls:
        ext.update(enableHTTPS=True, tlsConfig=tls)
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "extenders": [ext]}


@pytest.fixture
def snapshot_id(upload: Callable[..., dict[str, Any]]) -> str:
    return str(upload(cluster_yaml())["id"])


def start(api: APIClient, snapshot_id: str, config: dict[str, Any], **extra: Any) -> Any:
    return api.post(
        "/api/v1/replays/", {"snapshot": snapshot_id, "config": config, "all_nodes": True, **extra}, format="json"
    )


@pytest.mark.parametrize("host", [*LOOPBACK_SPELLINGS, "169.254.169.254"])
def test_an_extender_the_operator_did_not_allow_is_refused_and_never_called(
    api: APIClient, snapshot_id: str, listener: Listener, host: str
) -> None:
    url = f"http://{host}:{listener.port}/internal"
    err = error_of(start(api, snapshot_id, extender_config(url)), 400)
    assert err["code"] == "invalid_config"
    [problem] = err["details"]["problems"]
    assert problem.startswith("extenders[0].urlPrefix: Forbidden: extender ") and url in problem
    assert "SCHEDVIZ_EXTENDER_URLS" in problem
    assert listener.connections == 0 and listener.requests == []


def test_skipping_extenders_replays_without_them_and_names_them(
    api: APIClient, snapshot_id: str, listener: Listener
) -> None:
    url = f"http://127.0.0.1:{listener.port}/internal"
    r = start(api, snapshot_id, extender_config(url), extenders="skip")
    assert r.status_code == 201, r.content
    replay = api.get(f"/api/v1/replays/{r.json()['id']}/").json()
    assert replay["status"] == "succeeded", replay
    assert replay["options"]["extendersNotCalled"] == [url]
    assert "extenders" not in (replay["config"] or {})
    cycles = api.get(f"/api/v1/replays/{replay['id']}/cycles/").json()["results"]
    assert {c["pod"]: c["result"] for c in cycles} == {"default/web": "Scheduled", "default/huge": "Unschedulable"}
    assert listener.connections == 0
    # explain replays the same way: without the extender
    ex = api.get(f"/api/v1/replays/{replay['id']}/explain/", {"pod": "default/web"})
    assert ex.status_code == 200, ex.content
    assert listener.connections == 0


def test_the_snapshots_own_configuration_is_held_to_the_same_rule(
    api: APIClient, listener: Listener
) -> None:
    url = f"http://127.0.0.1:{listener.port}/internal"
    docs = yaml.safe_load(cluster_yaml())["items"] + [extender_config(url)]
    r = api.post("/api/v1/snapshots/", {"content": yaml.safe_dump_all(docs)}, format="json")
    assert r.status_code == 201, r.content
    sid = r.json()["id"]
    err = error_of(api.post("/api/v1/replays/", {"snapshot": sid}, format="json"), 400)
    assert "SCHEDVIZ_EXTENDER_URLS" in err["details"]["problems"][0]
    ok = api.post("/api/v1/replays/", {"snapshot": sid, "extenders": "skip"}, format="json")
    assert ok.status_code == 201 and ok.json()["options"]["extendersNotCalled"] == [url]
    assert listener.connections == 0


def test_saved_configurations_and_reports_refuse_extenders_not_allowed(
    api: APIClient, snapshot_id: str, listener: Listener
) -> None:
    url = f"http://127.0.0.1:{listener.port}/internal"
    text = yaml.safe_dump(extender_config(url))
    err = error_of(api.post("/api/v1/configurations/", {"name": "x", "text": text}, format="json"), 400)
    assert "SCHEDVIZ_EXTENDER_URLS" in err["details"]["problems"][0]
    described = api.post("/api/v1/configurations/validate/", {"text": text}, format="json").json()
    assert described["valid"] is False and "SCHEDVIZ_EXTENDER_URLS" in described["problems"][0]
    report = api.post(
        "/api/v1/reports/",
        {"snapshot_id": snapshot_id, "config": SimpleUploadedFile("c.yaml", text.encode()), "wait": 10},
        format="multipart",
    )
    assert error_of(report, 400)["code"] == "invalid_config"
    skipped = api.post(
        "/api/v1/reports/",
        {"snapshot_id": snapshot_id, "config": SimpleUploadedFile("c.yaml", text.encode()), "wait": 10, "extenders": "skip"},
        format="multipart",
    )
    assert skipped.status_code == 200, skipped.content
    assert skipped.json()["extendersNotCalled"] == {"config": [url], "baseline": []}
    assert listener.connections == 0


def test_an_allowed_extender_that_redirects_is_not_followed(
    api: APIClient, snapshot_id: str, listener: Listener, second_listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = f"http://127.0.0.1:{listener.port}/ok"
    monkeypatch.setenv("SCHEDVIZ_EXTENDER_URLS", allowed)
    for target in ("http://169.254.169.254/latest/meta-data/", f"http://127.0.0.1:{second_listener.port}/internal/filter"):
        listener.routes["/ok/filter"] = (307, {"Location": target}, b"")
        listener.requests.clear()
        r = start(api, snapshot_id, extender_config(allowed))
        assert r.status_code == 201, r.content
        cycles = api.get(f"/api/v1/replays/{r.json()['id']}/cycles/").json()["results"]
        web = next(c for c in cycles if c["pod"] == "default/web")
        assert web["result"] == "Error" and "code 307" in web["message"], web
        assert listener.requests and all(path == "/ok/filter" for _, path in listener.requests)
    assert second_listener.connections == 0


def test_an_allowed_extender_that_is_down_reports_no_socket_detail(
    api: APIClient, snapshot_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    allowed = f"http://127.0.0.1:{port}/ext"
    monkeypatch.setenv("SCHEDVIZ_EXTENDER_URLS", allowed)
    r = start(api, snapshot_id, extender_config(allowed))
    cycles = api.get(f"/api/v1/replays/{r.json()['id']}/cycles/").json()["results"]
    web = next(c for c in cycles if c["pod"] == "default/web")
    assert web["result"] == "Error" and web["message"].endswith(": unreachable"), web
    assert "refused" not in web["message"] and "dial tcp" not in web["message"]


# --------------------------------------------------------------------------------------------------
# File paths in uploaded configurations


@pytest.mark.parametrize("field", ["caFile", "certFile", "keyFile"])
def test_tls_file_paths_are_refused_and_never_read(
    api: APIClient, snapshot_id: str, tmp_path: Path, files_opened: list[str], field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.pem"
    secret.write_text("not for users")
    monkeypatch.setenv("SCHEDVIZ_EXTENDER_URLS", "https://ext.example.com/")
    cfg = extender_config("https://ext.example.com/x", **{field: str(secret)})
    expected = f"extenders[0].tlsConfig.{field}: Forbidden: a file path on the SchedViz server"
    for mode in ("call", "skip"):
        err = error_of(start(api, snapshot_id, cfg, extenders=mode), 400)
        assert err["details"]["problems"][0].startswith(expected), err
    err = error_of(
        api.post("/api/v1/configurations/", {"name": "tls", "text": yaml.safe_dump(cfg)}, format="json"), 400
    )
    assert err["details"]["problems"][0].startswith(expected)
    docs = yaml.safe_load(cluster_yaml())["items"] + [cfg]
    up = api.post("/api/v1/snapshots/", {"content": yaml.safe_dump_all(docs)}, format="json")
    assert expected in str(error_of(up, 400))
    assert str(secret) not in files_opened


def test_client_connection_kubeconfig_is_refused(api: APIClient, snapshot_id: str) -> None:
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": "/etc/kubernetes/scheduler.conf"},
    }
    err = error_of(start(api, snapshot_id, cfg), 400)
    assert err["details"]["problems"][0].startswith("clientConnection.kubeconfig: Forbidden: a file path")


# --------------------------------------------------------------------------------------------------
# Watched clusters' API servers


def kubeconfig_for(server: str) -> SimpleUploadedFile:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t0ken"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    return SimpleUploadedFile("kubeconfig", yaml.safe_dump(cfg).encode(), content_type="application/yaml")


def add_cluster(api: APIClient, server: str) -> Any:
    return api.post(
        "/api/v1/clusters/",
        {"source": "kubeconfig", "kubeconfig": kubeconfig_for(server), "name": "prod"},
        format="multipart",
    )


@pytest.mark.parametrize("host", [*LOOPBACK_SPELLINGS, "169.254.169.254", PUBLIC_LOOKING])
def test_a_cluster_on_a_non_public_address_is_refused_before_any_connection(
    api: APIClient, listener: Listener, public_name_resolves_to_loopback: None, host: str
) -> None:
    port = listener.port if host != "169.254.169.254" else 80
    err = error_of(add_cluster(api, f"http://{host}:{port}"), 400)
    assert err["code"] == "cluster_unreachable", err
    assert "refused: " in err["message"] and "SCHEDVIZ_CLUSTER_HOSTS" in err["message"], err
    assert listener.connections == 0
    assert api.get("/api/v1/clusters/").json()["count"] == 0


def test_an_allowed_cluster_host_that_redirects_is_not_followed(
    api: APIClient, listener: Listener, second_listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEDVIZ_CLUSTER_HOSTS", "localhost")  # names the host, not 127.0.0.1
    listener.routes["/version/"] = (302, {"Location": f"http://127.0.0.1:{second_listener.port}/version/"}, b"")
    err = error_of(add_cluster(api, f"http://localhost:{listener.port}"), 400)
    assert "302" in err["message"], err
    assert listener.requests == [("GET", "/version/")]
    assert second_listener.connections == 0


def test_a_cluster_that_is_down_reports_no_socket_detail(api: APIClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDVIZ_CLUSTER_HOSTS", "127.0.0.1")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    err = error_of(add_cluster(api, f"http://127.0.0.1:{port}"), 400)
    assert err["code"] == "cluster_unreachable" and err["message"].endswith(": unreachable"), err
    assert "Errno" not in err["message"] and "Connection refused" not in err["message"]


def test_a_proxy_url_in_an_uploaded_kubeconfig_is_refused(api: APIClient, listener: Listener) -> None:
    cfg = yaml.safe_load(kubeconfig_for("https://93.184.216.34").read())
    cfg["clusters"][0]["cluster"]["proxy-url"] = f"http://127.0.0.1:{listener.port}"
    r = api.post(
        "/api/v1/clusters/",
        {"source": "kubeconfig", "kubeconfig": SimpleUploadedFile("k", yaml.safe_dump(cfg).encode()), "name": "p"},
        format="multipart",
    )
    assert "proxy-url" in str(error_of(r, 400))
    assert listener.connections == 0


def test_uploaded_live_configuration_may_not_name_files(api: APIClient, listener: Listener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDVIZ_CLUSTER_HOSTS", "127.0.0.1")
    cfg = extender_config("https://ext.example.com/x", caFile="/etc/hostname")
    r = api.post(
        "/api/v1/clusters/",
        {
            "source": "kubeconfig",
            "kubeconfig": kubeconfig_for(f"http://127.0.0.1:{listener.port}"),
            "name": "p",
            "config_source": "uploaded",
            "config": yaml.safe_dump(cfg),
        },
        format="multipart",
    )
    assert "extenders[0].tlsConfig.caFile: Forbidden" in str(error_of(r, 400))


# --------------------------------------------------------------------------------------------------
# Kubeconfig paths on the server


def test_kubeconfig_paths_stay_inside_their_directories(
    api: APIClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files_opened: list[str]
) -> None:
    allowed = tmp_path / "kubeconfigs"
    allowed.mkdir()
    outside = tmp_path / "private"
    outside.mkdir()
    target = outside / "admin.conf"
    target.write_text(yaml.safe_dump(yaml.safe_load(kubeconfig_for("https://93.184.216.34").read())))
    (allowed / "link.conf").symlink_to(target)
    (allowed / "dirlink").symlink_to(outside, target_is_directory=True)
    monkeypatch.setenv("SCHEDVIZ_KUBECONFIG_DIRS", str(allowed))
    for path in (
        str(allowed / ".." / "private" / "admin.conf"),
        str(allowed / "link.conf"),
        str(allowed / "dirlink" / "admin.conf"),
        str(target),
    ):
        r = api.post("/api/v1/clusters/", {"source": "path", "path": path, "name": "p"}, format="json")
        err = error_of(r, 400)
        assert "SCHEDVIZ_KUBECONFIG_DIRS" in err["message"], (path, err)
    assert str(target) not in files_opened
