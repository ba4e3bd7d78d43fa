"""Kubeconfigs (what is refused, contexts), the in-cluster ServiceAccount over TLS, connection errors."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedviz.kube import kubeconfig
from schedviz.kube.kubeconfig import KubeconfigError, Source
from schedviz.kube.testing import TestApiServer
from tests.kubefixtures import namespace


def config_with(user: dict[str, Any], cluster: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster or {"server": "https://example.invalid:6443"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    cfg.update(extra)
    return cfg


@pytest.mark.parametrize(
    ("user", "cluster", "words"),
    [
        (
            {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "aws"}},
            None,
            "an exec credential plugin runs a program",
        ),
        ({"auth-provider": {"name": "gcp"}}, None, "an auth-provider runs commands"),
        ({"tokenFile": "/etc/shadow"}, None, "tokenFile reads a file on the SchedViz server"),
        (
            {"client-certificate": "/root/cert.pem", "client-key": "/root/key.pem"},
            None,
            "client-certificate reads a file",
        ),
        (
            {"token": "t"},
            {"server": "https://x", "certificate-authority": "/etc/ca.pem"},
            "certificate-authority reads a file",
        ),
    ],
)
def test_uploaded_kubeconfigs_may_not_run_programs_or_read_files(
    user: dict[str, Any], cluster: dict[str, Any] | None, words: str
) -> None:
    cfg = kubeconfig.parse(yaml.safe_dump(config_with(user, cluster)))
    with pytest.raises(KubeconfigError) as info:
        kubeconfig.select(cfg, None)
    assert words in str(info.value) and "refused in an uploaded kubeconfig" in str(info.value)


def test_only_the_chosen_context_is_kept() -> None:
    cfg = config_with({"token": "abc"})
    cfg["clusters"].append({"name": "other", "cluster": {"server": "https://other:6443"}})
    cfg["users"].append({"name": "admin", "user": {"exec": {"command": "evil"}}})  # not chosen: harmless
    cfg["contexts"].append({"name": "prod", "context": {"cluster": "other", "user": "admin"}})
    minimal, name = kubeconfig.select(kubeconfig.parse(yaml.safe_dump(cfg)), None)
    assert name == "ctx"
    assert minimal["users"] == [{"name": "u", "user": {"token": "abc"}}]
    assert [c["name"] for c in minimal["clusters"]] == ["c"] and minimal["current-context"] == "ctx"
    assert (
        kubeconfig.credential_kind(minimal) == "token"
        and kubeconfig.server_of(minimal) == "https://example.invalid:6443"
    )
    with pytest.raises(KubeconfigError, match="exec credential plugin"):
        kubeconfig.select(kubeconfig.parse(yaml.safe_dump(cfg)), "prod")
    with pytest.raises(
        KubeconfigError, match=r"context: no context 'nope' in the kubeconfig \(contexts: ctx, prod\)"
    ) as info:
        kubeconfig.select(kubeconfig.parse(yaml.safe_dump(cfg)), "nope")
    assert info.value.field == "context"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("clusters: [: nope\n", "kubeconfig: invalid YAML at line 1"),
        ("- a list\n", "expected a Config object"),
        ("kind: Pod\n", "kind is 'Pod', expected Config"),
        ("clusters: {a: 1}\n", "clusters must be a list"),
        ("contexts: [{name: x}]\n", "contexts[0] (x) has no context object"),
    ],
)
def test_malformed_kubeconfigs_say_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(
        KubeconfigError, match=words.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")
    ):
        kubeconfig.select(kubeconfig.parse(text), None)


def test_server_paths_only_under_the_allowed_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = tmp_path / "kubeconfigs"
    allowed.mkdir()
    (allowed / "prod").write_text("kind: Config\n")
    (tmp_path / "secret").write_text("kind: Config\n")
    monkeypatch.delenv(kubeconfig.DIRS_ENV, raising=False)
    with pytest.raises(KubeconfigError, match="kubeconfig paths on the server are disabled"):
        kubeconfig.check_path(str(allowed / "prod"))
    monkeypatch.setenv(kubeconfig.DIRS_ENV, str(allowed))
    assert kubeconfig.check_path(str(allowed / "prod")) == (allowed / "prod").resolve()
    with pytest.raises(KubeconfigError, match="is not under"):
        kubeconfig.check_path(str(allowed / ".." / "secret"))
    with pytest.raises(KubeconfigError, match="no such file"):
        kubeconfig.check_path(str(allowed / "missing"))


def test_connection_check_names_bad_credentials_unreachable_servers_and_bad_certificates(
    apiserver: TestApiServer,
) -> None:
    apiserver.create(namespace("default"))
    info = kubeconfig.check_connection(Source("kubeconfig", apiserver.kubeconfig()).client())
    assert info == {"server": apiserver.url, "version": "v1.35.4"}
    with pytest.raises(KubeconfigError) as bad:
        kubeconfig.check_connection(Source("kubeconfig", apiserver.kubeconfig(token="wrong")).client())
    assert bad.value.code == "cluster_unauthorized"
    assert "refused the credentials (HTTP 401 Unauthorized)" in str(bad.value)
    apiserver.forbidden.add("namespaces")
    with pytest.raises(KubeconfigError) as forbidden:
        kubeconfig.check_connection(Source("kubeconfig", apiserver.kubeconfig()).client())
    assert forbidden.value.code == "cluster_forbidden" and 'cannot list resource "namespaces"' in str(
        forbidden.value
    )
    url = apiserver.url
    apiserver.stop()
    with pytest.raises(KubeconfigError) as down:
        kubeconfig.check_connection(
            Source("kubeconfig", apiserver.kubeconfig(server=url)).client(), timeout=2
        )
    assert down.value.code == "cluster_unreachable"
    # refused, unreachable or timed out: never the socket's own words (errno, "Connection refused")
    assert str(down.value) == f"cannot connect to {url.split('//')[1]}: unreachable"

    with TestApiServer(tls=True) as tls, TestApiServer(tls=True) as impostor:
        tls.create(namespace("default"))
        assert (
            kubeconfig.check_connection(Source("kubeconfig", tls.kubeconfig()).client())["version"]
            == "v1.35.4"
        )
        # the right CA for another server: the certificate does not verify
        cfg = tls.kubeconfig()
        cfg["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(
            impostor.ca_pem
        ).decode()
        with pytest.raises(KubeconfigError) as cert:
            kubeconfig.check_connection(Source("kubeconfig", cfg).client())
        assert cert.value.code == "cluster_unreachable" and str(cert.value).endswith(
            "unreachable: the server's TLS certificate could not be verified"
        )


def test_in_cluster_service_account_over_tls(tmp_path: Path) -> None:
    with TestApiServer(tls=True, token="sa-token") as srv:
        srv.create(namespace("kube-system"))
        (tmp_path / "token").write_text("sa-token")
        (tmp_path / "ca.crt").write_bytes(srv.ca_pem)
        env = {
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": srv.url.rsplit(":", 1)[1],
            kubeconfig.SA_DIR_ENV: str(tmp_path),
        }
        assert kubeconfig.in_cluster_available(env) and not kubeconfig.in_cluster_available({})
        api_client = Source("in-cluster").client(env)
        assert kubeconfig.check_connection(api_client)["server"] == srv.url
        assert srv.requests[-1].authorization.lower() == "bearer sa-token"
        with pytest.raises(KubeconfigError, match="not running inside Kubernetes"):
            Source("in-cluster").client({})
