"""The shipped Kubernetes manifests: read-only RBAC on exactly what live mode reads, and the
deployment's tiers with the ServiceAccount and secrets where they belong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from schedviz.kube.kinds import STREAMS, rbac_rules

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"


def docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def by_kind(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in items if d["kind"] == kind]


def test_the_cluster_role_grants_get_list_watch_on_exactly_what_is_watched() -> None:
    rbac = docs("rbac.yaml")
    (role,) = by_kind(rbac, "ClusterRole")
    granted: dict[str, set[str]] = {}
    for rule in role["rules"]:
        assert sorted(rule["verbs"]) == ["get", "list", "watch"], rule
        assert "resourceNames" not in rule
        for group in rule["apiGroups"]:
            granted.setdefault(group, set()).update(rule["resources"])
    assert granted == rbac_rules()
    assert {s.plural for s in STREAMS} == set().union(*granted.values())
    # nothing in any role writes
    for r in by_kind(rbac, "ClusterRole") + by_kind(rbac, "Role"):
        for rule in r["rules"]:
            assert set(rule["verbs"]) <= {"get", "list", "watch"}, rule
    (cm_role,) = by_kind(rbac, "Role")
    assert cm_role["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["kube-scheduler-config"],
            "verbs": ["get"],
        }
    ]
    (sa,) = by_kind(rbac, "ServiceAccount")
    for binding in by_kind(rbac, "ClusterRoleBinding") + by_kind(rbac, "RoleBinding"):
        assert binding["subjects"] == [
            {
                "kind": "ServiceAccount",
                "name": sa["metadata"]["name"],
                "namespace": sa["metadata"]["namespace"],
            }
        ]
    (token,) = by_kind(rbac, "Secret")
    assert token["type"] == "kubernetes.io/service-account-token"


def test_the_deployment_runs_the_live_worker_with_the_read_only_account_and_secrets_from_a_secret() -> None:
    deployments = {d["metadata"]["name"]: d for d in by_kind(docs("deployment.yaml"), "Deployment")}
    sa = by_kind(docs("rbac.yaml"), "ServiceAccount")[0]["metadata"]["name"]
    watcher = deployments["schedviz-watcher"]["spec"]["template"]["spec"]
    assert watcher["serviceAccountName"] == sa
    assert watcher["containers"][0]["command"] == ["python", "manage.py", "watch_clusters"]
    assert deployments["schedviz-web"]["spec"]["template"]["spec"]["serviceAccountName"] == sa
    assert deployments["schedviz-worker"]["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
    for d in deployments.values():
        for c in d["spec"]["template"]["spec"]["containers"]:
            assert c["envFrom"] == [{"secretRef": {"name": "schedviz"}}]
            literal = {e["name"] for e in c.get("env", [])}
            assert not literal & {"SECRET_KEY", "SCHEDVIZ_ENCRYPTION_KEY", "DATABASE_URL"}
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
