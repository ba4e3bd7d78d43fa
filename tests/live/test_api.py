"""The live clusters API: adding a cluster (kubeconfig, server path, in-cluster), what is refused,
credentials encrypted and never shown or logged, configuration sources, ownership."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from schedviz.accounts.models import Team
from schedviz.kube.testing import TestApiServer
from schedviz.live import crypto
from schedviz.live.models import LiveCluster
from tests.kubefixtures import namespace
from tests.webfixtures import client_for, error_of


def upload(cfg: dict[str, Any], name: str = "kubeconfig") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, yaml.safe_dump(cfg).encode(), content_type="application/yaml")


def add(api: APIClient, srv: TestApiServer, **fields: Any) -> Any:
    cfg = fields.pop("kubeconfig", None) or srv.kubeconfig()
    return api.post(
        "/api/v1/clusters/",
        {"source": "kubeconfig", "kubeconfig": upload(cfg), "name": "prod", **fields},
        format="multipart",
    )


@pytest.fixture
def cluster_server(apiserver: TestApiServer) -> TestApiServer:
    apiserver.create(namespace("default"))
    return apiserver


def test_adding_a_cluster_keeps_its_credentials_encrypted_never_shown_nor_logged(
    api: APIClient, cluster_server: TestApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = cluster_server.token
    r = add(api, cluster_server)
    assert r.status_code == 201, r.content
    body = r.json()
    assert (
        body["source"] == "kubeconfig" and body["server"] == cluster_server.url and body["context"] == "test"
    )
    assert body["credential_kind"] == "token" and body["credentials_stored"] is True
    assert body["status"] == "pending" and body["worker"]["alive"] is False and body["summary"]["cycles"] == 0
    assert body["config_source"] == "default" and body["config_notes"]["profiles"] == ["default-scheduler"]
    # the cluster was reached before being saved: its version, then one namespace
    assert [r.path for r in cluster_server.requests] == ["/version/", "/api/v1/namespaces"]
    row = LiveCluster.objects.get(pk=body["id"])
    assert row.credentials is not None and secret.encode() not in bytes(row.credentials)
    assert json.loads(crypto.decrypt(bytes(row.credentials)))["users"][0]["user"]["token"] == secret
    for url in (
        "/api/v1/clusters/",
        f"/api/v1/clusters/{body['id']}/",
        f"/api/v1/clusters/{body['id']}/health/",
    ):
        answer = api.get(url)
        assert answer.status_code == 200 and secret not in answer.content.decode()
        assert 'credentials"' not in answer.content.decode().replace("credentials_stored", "")
    assert secret not in r.content.decode() and secret not in caplog.text


@pytest.mark.parametrize(
    ("user", "words"),
    [
        (
            {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": "sh",
                    "args": ["-c", "id"],
                }
            },
            "an exec credential plugin runs a program",
        ),
        ({"auth-provider": {"name": "oidc", "config": {}}}, "an auth-provider runs commands"),
        ({"tokenFile": "/etc/passwd"}, "tokenFile reads a file"),
    ],
)
def test_kubeconfigs_that_would_run_programs_or_read_files_are_refused(
    api: APIClient, cluster_server: TestApiServer, user: dict[str, Any], words: str
) -> None:
    cfg = cluster_server.kubeconfig()
    cfg["users"][0]["user"] = user
    err = error_of(add(api, cluster_server, kubeconfig=cfg), 400)
    assert err["code"] == "invalid_kubeconfig" and words in err["message"]
    assert err["details"] == {"kubeconfig": [err["message"]]}
    assert LiveCluster.objects.count() == 0 and cluster_server.requests == []


def test_a_missing_context_names_the_ones_there_are(api: APIClient, cluster_server: TestApiServer) -> None:
    err = error_of(add(api, cluster_server, context="staging"), 400)
    assert err["details"] == {"context": ["context: no context 'staging' in the kubeconfig (contexts: test)"]}


def test_bad_credentials_and_unreachable_servers_are_clear_errors(
    api: APIClient, cluster_server: TestApiServer
) -> None:
    err = error_of(add(api, cluster_server, kubeconfig=cluster_server.kubeconfig(token="tok-3x9-wrong")), 400)
    assert err["code"] == "cluster_unauthorized"
    assert (
        "refused the credentials (HTTP 401 Unauthorized)" in err["message"]
        and "tok-3x9-wrong" not in err["message"]
    )
    url = cluster_server.url
    cluster_server.stop()
    err = error_of(add(api, cluster_server, kubeconfig=cluster_server.kubeconfig(server=url)), 400)
    assert err["code"] == "cluster_unreachable" and err["message"].startswith(
        f"cannot connect to {url.split('//')[1]}: "
    )
    assert LiveCluster.objects.count() == 0
    # verify=false stores it anyway; checking it later says the same
    r = add(api, cluster_server, kubeconfig=cluster_server.kubeconfig(server=url), verify="false")
    assert r.status_code == 201
    err = error_of(api.post(f"/api/v1/clusters/{r.json()['id']}/check/"), 400)
    assert err["code"] == "cluster_unreachable"
    cluster_server.start()
    assert api.post(f"/api/v1/clusters/{r.json()['id']}/check/").json() == {
        "server": url,
        "version": "v1.35.4",
    }


def test_a_kubeconfigs_contexts_say_which_can_be_used(api: APIClient, cluster_server: TestApiServer) -> None:
    cfg = cluster_server.kubeconfig()
    cfg["users"].append({"name": "sso", "user": {"exec": {"command": "kubelogin"}}})
    cfg["contexts"].append(
        {"name": "sso", "context": {"cluster": "test", "user": "sso", "namespace": "team-a"}}
    )
    r = api.post("/api/v1/clusters/kubeconfig-contexts/", {"kubeconfig": upload(cfg)}, format="multipart")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["current"] == "test"
    by_name = {c["name"]: c for c in body["contexts"]}
    assert by_name["test"]["usable"] is True and by_name["test"]["server"] == cluster_server.url
    assert by_name["sso"]["usable"] is False and "exec credential plugin" in by_name["sso"]["problem"]
    assert by_name["sso"]["namespace"] == "team-a"
    assert cluster_server.token not in r.content.decode()
    assert LiveCluster.objects.count() == 0


CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NetworkOverhead
        weight: 5
  pluginConfig:
  - name: NetworkOverhead
    args: {}
extenders:
- urlPrefix: http://extender.kube-system:8888
  filterVerb: filter
  bindVerb: bind
"""


def test_the_scheduler_configuration_uploaded_or_read_from_a_configmap(
    api: APIClient, cluster_server: TestApiServer
) -> None:
    err = error_of(
        add(
            api,
            cluster_server,
            config_source="uploaded",
            config="kind: KubeSchedulerConfiguration\nprofiles: 3\n",
        ),
        400,
    )
    assert err["code"] == "invalid_config" and err["details"]["problems"]
    r = add(api, cluster_server, config_source="uploaded", config=CONFIG)
    assert r.status_code == 201, r.content
    notes = r.json()["config_notes"]
    assert notes["unknownPlugins"] == ["NetworkOverhead"] and notes["extenders"] == [
        "http://extender.kube-system:8888"
    ]
    stored = LiveCluster.objects.get(pk=r.json()["id"]).config
    assert stored is not None and "extenders" not in stored  # never called: an extender may bind pods

    err = error_of(
        add(api, cluster_server, config_source="configmap", config_map="kube-system/scheduler-config"), 400
    )
    assert (
        err["code"] == "config_map_unreadable"
        and "no ConfigMap kube-system/scheduler-config" in err["message"]
    )
    cluster_server.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "scheduler-config", "namespace": "kube-system"},
            "data": {
                "scheduler-config.yaml": CONFIG.replace(
                    "default-scheduler", "default-scheduler\n  percentageOfNodesToScore: 40"
                )
            },
        }
    )
    r = add(api, cluster_server, config_source="configmap", config_map="kube-system/scheduler-config")
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["config_map_key"] == "scheduler-config.yaml"
    assert body["config_notes"]["source"] == "configmap" and body["config_notes"]["unknownPlugins"] == [
        "NetworkOverhead"
    ]
    assert any(
        req.path == "/api/v1/namespaces/kube-system/configmaps/scheduler-config"
        for req in cluster_server.requests
    )
    err = error_of(add(api, cluster_server, config_source="configmap", config_map="nonsense"), 400)
    assert err["details"] == {"config_map": ["config_map: expected namespace/name, got 'nonsense'"]}


def test_in_cluster_needs_kubernetes_and_server_paths_need_allowed_directories(
    api: APIClient, cluster_server: TestApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    err = error_of(api.post("/api/v1/clusters/", {"source": "in-cluster"}, format="json"), 400)
    assert err["details"]["source"][0].startswith("source: SchedViz is not running inside Kubernetes")
    path = tmp_path / "prod.kubeconfig"
    path.write_text(yaml.safe_dump(cluster_server.kubeconfig()))
    monkeypatch.delenv("SCHEDVIZ_KUBECONFIG_DIRS", raising=False)
    err = error_of(api.post("/api/v1/clusters/", {"source": "path", "path": str(path)}, format="json"), 400)
    assert "kubeconfig paths on the server are disabled" in err["message"]
    monkeypatch.setenv("SCHEDVIZ_KUBECONFIG_DIRS", str(tmp_path))
    r = api.post("/api/v1/clusters/", {"source": "path", "path": str(path)}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["server"] == cluster_server.url and r.json()["path"] == str(path)
    assert (
        LiveCluster.objects.get(pk=r.json()["id"]).credentials is None
    )  # nothing copied: the file is the operator's


def test_other_users_see_nothing_and_team_members_read_but_do_not_change(
    api: APIClient, cluster_server: TestApiServer, alice: User, bob: User, carol: User
) -> None:
    team = Team.objects.create(name="sre")
    team.members.add(alice, bob)
    r = add(api, cluster_server, team=str(team.pk))
    assert r.status_code == 201, r.content
    cid = r.json()["id"]
    carol_api, bob_api = client_for(carol), client_for(bob)
    assert error_of(carol_api.get(f"/api/v1/clusters/{cid}/"), 404)["code"] == "not_found"
    assert error_of(carol_api.get(f"/api/v1/clusters/{cid}/cycles/"), 404)["code"] == "not_found"
    assert carol_api.get("/api/v1/clusters/").json()["count"] == 0
    assert bob_api.get(f"/api/v1/clusters/{cid}/").status_code == 200
    assert (
        error_of(bob_api.patch(f"/api/v1/clusters/{cid}/", {"name": "mine"}, format="json"), 403)["code"]
        == "forbidden"
    )
    assert error_of(bob_api.post(f"/api/v1/clusters/{cid}/check/"), 403)["code"] == "forbidden"
    assert error_of(bob_api.delete(f"/api/v1/clusters/{cid}/"), 403)["code"] == "forbidden"
    version = LiveCluster.objects.get(pk=cid).settings_version
    r = api.patch(f"/api/v1/clusters/{cid}/", {"name": "production", "enabled": False}, format="json")
    assert r.status_code == 200 and r.json()["name"] == "production" and r.json()["status"] == "stopped"
    assert LiveCluster.objects.get(pk=cid).settings_version == version  # nothing to restart for
    r = api.patch(f"/api/v1/clusters/{cid}/", {"config_source": "uploaded", "config": CONFIG}, format="json")
    assert r.status_code == 200 and r.json()["config_notes"]["unknownPlugins"] == ["NetworkOverhead"]
    assert LiveCluster.objects.get(pk=cid).settings_version == version + 1
    # a snapshot needs a worker watching the cluster
    err = error_of(api.post(f"/api/v1/clusters/{cid}/snapshot/", {}, format="json"), 409)
    assert err["code"] == "not_watching"
    assert api.delete(f"/api/v1/clusters/{cid}/").status_code == 204
    assert LiveCluster.objects.count() == 0
