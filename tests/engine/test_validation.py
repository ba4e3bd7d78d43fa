"""Objects the API server would refuse are refused (schedviz/engine/validation.py, docs/validation.md).

Each rule has a valid object (no problem) and an invalid one whose problems are listed in the API
server's exact field.ErrorList wording; then the loader, the command line and the web upload.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedviz.engine.errors import InputError
from schedviz.engine.loader import MAX_PROBLEMS, load_texts, parse_documents
from schedviz.engine.validation import (
    InvalidSnapshot,
    Validator,
    canonical,
    go_quote,
    parse_qty,
)
from schedviz.ingestion.parsing import UploadError, parse_upload

from .builders import container, node, pod

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]

# content.RegexError messages (apimachinery pkg/api/validate/content)
LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAME_PART_ERR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
DNS_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
EFFECTS = 'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
REQ = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
PAFF = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
PANTI = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"


def problems(obj: JSON) -> list[str]:
    return [str(e) for e in Validator().validate(obj)]


def required_affinity(*exprs: JSON, fields: list[JSON] | None = None) -> JSON:
    term: JSON = {"matchExpressions": list(exprs)}
    if fields:
        term["matchFields"] = fields
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def pod_affinity_term(**fields: Any) -> JSON:
    return {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname", **fields}


def with_resources(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> JSON:
    c = container()
    c["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    return pod("p", containers=[c])


def obj(kind: str, api_version: str, name: str, namespace: str | None = None, **fields: Any) -> JSON:
    md: JSON = {"name": name}
    if namespace:
        md["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": md, **fields}


def pvc(**spec: Any) -> JSON:
    base = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return obj("PersistentVolumeClaim", "v1", "data", "default", spec={**base, **spec})


def pv(**spec: Any) -> JSON:
    base = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}, "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}}
    return obj("PersistentVolume", "v1", "pv-1", spec={**base, **spec})


def claim(*requests: JSON, **devices: Any) -> JSON:
    return obj("ResourceClaim", "resource.k8s.io/v1", "gpu", "default", spec={"devices": {"requests": list(requests), **devices}})


def exact(**fields: Any) -> JSON:
    return {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", **fields}}


def resource_slice(**spec: Any) -> JSON:
    base = {"driver": "gpu.example.com", "pool": {"name": "node-1", "resourceSliceCount": 1}, "nodeName": "node-1",
            "devices": [{"name": "gpu-0"}]}
    return obj("ResourceSlice", "resource.k8s.io/v1", "node-1-gpu", spec={**base, **spec})


def pdb(**spec: Any) -> JSON:
    return obj("PodDisruptionBudget", "policy/v1", "web", "default", spec={"selector": {"matchLabels": {"app": "web"}}, **spec})


def sc(**fields: Any) -> JSON:
    return obj("StorageClass", "storage.k8s.io/v1", "fast", **{"provisioner": "ebs.csi.aws.com", **fields})


def csinode(*drivers: JSON) -> JSON:
    return obj("CSINode", "storage.k8s.io/v1", "node-1", spec={"drivers": list(drivers)})


def driver(**fields: Any) -> JSON:
    return {"name": "ebs.csi.aws.com", "nodeID": "i-1", "topologyKeys": ["topology.ebs.csi.aws.com/zone"], **fields}


def rs(selector: Any, kind: str = "ReplicaSet") -> JSON:
    spec = {} if selector is None else {"selector": selector}
    return obj(kind, "apps/v1", "web", "default", spec=spec)


# (id, a valid object, an invalid one, the invalid one's problems in the API server's words)
CASES: list[tuple[str, JSON, JSON, list[str]]] = [
    # ----- Pod: node affinity (ValidateNodeSelectorRequirement, ValidateNodeSelector, ...) ----------
    (
        "node-affinity-operator",
        pod("web", affinity=required_affinity({"key": "zone", "operator": "In", "values": ["a"]})),
        pod("web", affinity=required_affinity({"key": "zone", "operator": "Sometimes", "values": ["a"]})),
        [f'{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Sometimes": not a valid selector operator'],
    ),
    (
        "node-affinity-in-needs-values",
        pod("p", affinity=required_affinity({"key": "zone", "operator": "NotIn", "values": ["a"]})),
        pod("p", affinity=required_affinity({"key": "zone", "operator": "In"})),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
            "must be specified when `operator` is 'In' or 'NotIn'"
        ],
    ),
    (
        "node-affinity-exists-takes-no-values",
        pod("p", affinity=required_affinity({"key": "zone", "operator": "DoesNotExist"})),
        pod("p", affinity=required_affinity({"key": "zone", "operator": "Exists", "values": ["a"]})),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: "
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        ],
    ),
    (
        "node-affinity-gt-one-value",
        pod("p", affinity=required_affinity({"key": "cores", "operator": "Gt", "values": ["4"]})),
        pod("p", affinity=required_affinity({"key": "cores", "operator": "Lt", "values": ["4", "8"]})),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
            "must be specified single value when `operator` is 'Lt' or 'Gt'"
        ],
    ),
    (
        "node-affinity-key",
        pod("p", affinity=required_affinity({"key": "example.com/zone", "operator": "Exists"})),
        pod("p", affinity=required_affinity({"key": "-zone", "operator": "Exists"})),
        [f'{REQ}.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "-zone": {NAME_PART_ERR}'],
    ),
    (
        "node-affinity-needs-a-term",
        pod("p", affinity=required_affinity({"key": "zone", "operator": "Exists"})),
        pod("p", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}),
        [f"{REQ}.nodeSelectorTerms: Required value: must have at least one node selector term"],
    ),
    (
        "node-affinity-match-fields",
        pod("p", affinity=required_affinity(fields=[{"key": "metadata.name", "operator": "In", "values": ["n1"]}])),
        pod("p", affinity=required_affinity(fields=[{"key": "metadata.uid", "operator": "In", "values": ["a", "b"]}])),
        [
            f"{REQ}.nodeSelectorTerms[0].matchFields[0].values: Required value: "
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            f'{REQ}.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key',
        ],
    ),
    (
        "node-affinity-preferred-weight",
        pod("p", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}),
        pod("p", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}),
        [
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
            "Invalid value: 0: must be in the range 1-100"
        ],
    ),
    # ----- Pod: pod (anti-)affinity (validatePodAffinityTerm, validateWeightedPodAffinityTerms) --------
    (
        "pod-affinity-topology-key",
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_affinity_term()]}}),
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_affinity_term(topologyKey="")]}}),
        [
            f"{PAFF}.topologyKey: Required value: can not be empty",
            f'{PAFF}.topologyKey: Invalid value: "": name part must be non-empty',
            f'{PAFF}.topologyKey: Invalid value: "": {NAME_PART_ERR}',
        ],
    ),
    (
        "pod-affinity-selector-operator",
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_affinity_term(
            labelSelector={"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]})]}}),
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_affinity_term(
            labelSelector={"matchExpressions": [{"key": "app", "operator": "Maybe", "values": ["db"]}]})]}}),
        [f'{PAFF}.labelSelector.matchExpressions[0].operator: Invalid value: "Maybe": not a valid selector operator'],
    ),
    (
        "pod-anti-affinity-weight",
        pod("p", affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": pod_affinity_term()}]}}),
        pod("p", affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 101, "podAffinityTerm": pod_affinity_term()}]}}),
        [f"{PANTI}.weight: Invalid value: 101: must be in the range 1-100"],
    ),
    (
        "pod-affinity-namespaces",
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_affinity_term(namespaces=["team-a"])]}}),
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_affinity_term(namespaces=["Team_A"])]}}),
        [f'{PAFF}.namespaces[0]: Invalid value: "Team_A": {DNS_LABEL_ERR}'],
    ),
    (
        "pod-affinity-match-label-keys",
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_affinity_term(
            matchLabelKeys=["pod-template-hash"], mismatchLabelKeys=["tenant"])]}}),
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_affinity_term(
            labelSelector={"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
            matchLabelKeys=["app"], mismatchLabelKeys=["app"])]}}),
        [
            f'{PAFF}.matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
            f'{PAFF}.matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and mismatchLabelKeys',
        ],
    ),
    (
        "pod-affinity-match-label-keys-need-a-selector",
        pod("p", affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": pod_affinity_term(matchLabelKeys=["version"])}]}}),
        pod("p", affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": {"topologyKey": "zone", "matchLabelKeys": ["version"]}}]}}),
        [f"{PANTI}.podAffinityTerm.matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"],
    ),
    # ----- Pod: tolerations (ValidateTolerations) --------------------------------------------------
    (
        "toleration-empty-key-needs-exists",
        pod("p", tolerations=[{"operator": "Exists"}]),
        pod("p", tolerations=[{"operator": "Equal", "value": "x"}]),
        [
            'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
            'which means "match all values and all keys"'
        ],
    ),
    (
        "toleration-seconds-need-no-execute",
        pod("p", tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]),
        pod("p", tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30}]),
        [
            'spec.tolerations[0].effect: Invalid value: "NoSchedule": '
            "effect must be 'NoExecute' when `tolerationSeconds` is set"
        ],
    ),
    (
        "toleration-operator-and-effect",
        pod("p", tolerations=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]),
        pod("p", tolerations=[{"key": "k", "operator": "Maybe", "effect": "Sometimes"}]),
        [
            'spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"',
            f'spec.tolerations[0].effect: Unsupported value: "Sometimes": {EFFECTS}',
        ],
    ),
    (
        "toleration-values",
        pod("p", tolerations=[{"key": "k", "operator": "Equal", "value": "v-1"}]),
        pod("p", tolerations=[{"key": "k", "operator": "Equal", "value": "a b"}, {"key": "k", "operator": "Exists", "value": "v"}]),
        [
            f'spec.tolerations[0].value: Invalid value: "a b": {LABEL_VALUE_ERR}',
            "spec.tolerations[1].value: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
        ],
    ),
    (
        "toleration-comparison-operators",
        pod("p", tolerations=[{"key": "gpu-mem", "operator": "Gt", "value": "-16"}]),
        pod("p", tolerations=[{"key": "gpu-mem", "operator": "Lt", "value": "016"}, {"key": "k", "operator": "Gt", "value": "x"}]),
        [
            'spec.tolerations[0].value: Invalid value: "016": must be a valid decimal integer in canonical form',
            'spec.tolerations[1].value: Invalid value: "x": must be a valid decimal integer in canonical form',
            'spec.tolerations[1].value: Invalid value: "x": strconv.ParseInt: parsing "x": invalid syntax',
        ],
    ),
    # ----- Pod: topology spread constraints (validateTopologySpreadConstraints) ---------------------
    (
        "spread-basic-fields",
        pod("p", topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3}]),
        pod("p", topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Sometimes"}]),
        [
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
            "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
            'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": '
            'supported values: "DoNotSchedule", "ScheduleAnyway"',
        ],
    ),
    (
        "spread-duplicates-min-domains-policies",
        pod("p", topologySpreadConstraints=[
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "nodeTaintsPolicy": "Honor"},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "nodeAffinityPolicy": "Ignore"}]),
        pod("p", topologySpreadConstraints=[
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2, "nodeAffinityPolicy": "Always"},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 0}]),
        [
            'spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, ScheduleAnyway}"',
            "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: "
            "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
            'spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"',
            "spec.topologySpreadConstraints[1].minDomains: Invalid value: 0: must be greater than zero",
            "spec.topologySpreadConstraints[1].minDomains: Invalid value: 0: "
            "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        ],
    ),
    (
        "spread-selector-and-match-label-keys",
        pod("p", topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["pod-template-hash"]}]),
        pod("p", topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["web"]}]}},
                                            {"maxSkew": 1, "topologyKey": "host", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["app"]}]),
        [
            'spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: Invalid value: "Equals": '
            "not a valid selector operator",
            "spec.topologySpreadConstraints[1].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        ],
    ),
    # ----- Pod: other scheduling fields (ValidatePodSpec) ------------------------------------------
    (
        "node-selector-labels",
        pod("p", nodeSelector={"disktype": "ssd"}),
        pod("p", nodeSelector={"disk type": "ssd", "tier": "a b"}),
        [
            f'spec.nodeSelector: Invalid value: "disk type": {NAME_PART_ERR}',
            f'spec.nodeSelector: Invalid value: "a b": {LABEL_VALUE_ERR}',
        ],
    ),
    (
        "scheduling-gates",
        pod("p", schedulingGates=[{"name": "example.com/quota"}]),
        pod("p", schedulingGates=[{"name": "example.com/quota"}, {"name": "example.com/quota"}, {"name": "bad gate"}]),
        [
            'spec.schedulingGates[1]: Duplicate value: "example.com/quota"',
            f'spec.schedulingGates[2]: Invalid value: "bad gate": {NAME_PART_ERR}',
        ],
    ),
    (
        "preemption-policy-priority-class-node-name",
        pod("p", preemptionPolicy="Never", priorityClassName="high", nodeName="node-1"),
        pod("p", preemptionPolicy="Sometimes", priorityClassName="High", nodeName="Node_1"),
        [
            f'spec.nodeName: Invalid value: "Node_1": {SUBDOMAIN_ERR}',
            f'spec.priorityClassName: Invalid value: "High": {SUBDOMAIN_ERR}',
            'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
        ],
    ),
    (
        "metadata",
        pod("web-1", namespace="team-a", labels={"app.kubernetes.io/name": "web"}),
        pod("Web_1", namespace="team.a", labels={"app": "-web"}),
        [
            f'metadata.name: Invalid value: "Web_1": {SUBDOMAIN_ERR}',
            'metadata.namespace: Invalid value: "team.a": must not contain dots',
            f'metadata.labels: Invalid value: "-web": {LABEL_VALUE_ERR}',
        ],
    ),
    # ----- Pod: resources (validateResourceRequirements, ValidateResourceQuantityValue) -------------
    (
        "requests-not-negative",
        with_resources({"cpu": "0", "memory": "1Gi"}),
        with_resources({"cpu": "-100m", "memory": "-1"}),
        [
            'spec.containers[0].resources.requests[cpu]: Invalid value: "-100m": must be greater than or equal to 0',
            'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0',
        ],
    ),
    (
        "requests-at-most-limits",
        with_resources({"cpu": "500m", "memory": "1Gi"}, {"cpu": "0.5", "memory": "2Gi"}),
        with_resources({"cpu": "1.5", "memory": "3Gi"}, {"cpu": "1", "memory": "2048Mi"}),
        [
            'spec.containers[0].resources.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 1',
            'spec.containers[0].resources.requests: Invalid value: "3Gi": must be less than or equal to memory limit of 2Gi',
        ],
    ),
    (
        "extended-resources-need-an-equal-limit",
        with_resources({"example.com/gpu": "2"}, {"example.com/gpu": "2"}),
        with_resources({"example.com/gpu": "1", "example.com/fpga": "1"}, {"example.com/gpu": "2"}),
        [
            'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
            "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
        ],
    ),
    (
        "extended-resources-are-whole",
        with_resources(limits={"example.com/gpu": "1"}),
        with_resources(limits={"example.com/gpu": "500m"}),
        ['spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer'],
    ),
    (
        "resource-names",
        with_resources({"cpu": "1", "hugepages-2Mi": "4Mi"}, {"hugepages-2Mi": "4Mi"}),
        with_resources({"gpu": "1", "hugepages-2Mi": "4Mi"}, {"hugepages-2Mi": "4Mi"}),
        [
            'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
            'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers',
            "spec.containers[0].resources: Forbidden: HugePages require cpu or memory",
        ],
    ),
    (
        "pod-level-resources-and-overhead",
        pod("p", resources={"requests": {"cpu": "1"}}, overhead={"cpu": "250m"}),
        pod("p", resources={"requests": {"ephemeral-storage": "1Gi"}}, overhead={"cpu": "-1"}),
        [
            'spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage": '
            'supported values: "cpu", "hugepages-", "memory"',
            'spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        ],
    ),
    # ----- Pod: containers, ports, volumes, claims -------------------------------------------------
    (
        "containers-required",
        pod("p"),
        dict(pod("p"), spec={"containers": []}),
        ["spec.containers: Required value"],
    ),
    (
        "host-ports",
        pod("p", containers=[container("a", ports=[{"containerPort": 80, "hostPort": 8080}]),
                             container("b", ports=[{"containerPort": 80, "hostPort": 8080, "protocol": "UDP"}])]),
        pod("p", containers=[container("a", ports=[{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 70000}]),
                             container("b", ports=[{"containerPort": 80, "hostPort": 8080, "protocol": "ICMP"},
                                                   {"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}])]),
        [
            "spec.containers[0].ports[1].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
            'spec.containers[1].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
            'spec.containers[1].ports[1].hostPort: Duplicate value: "TCP//8080"',
        ],
    ),
    (
        "init-container-restart-policy",
        pod("p", initContainers=[container("sidecar", restartPolicy="Always")]),
        pod("p", initContainers=[container("sidecar", restartPolicy="Sometimes")]),
        ['spec.initContainers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"'],
    ),
    (
        "volumes",
        pod("p", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                          {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": pvc()["spec"]}}}]),
        pod("p", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": ""}, "hostPath": {"path": "/x"}},
                          {"name": "p-scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
                          {"name": "scratch", "ephemeral": {}},
                          {"name": "ref", "persistentVolumeClaim": {"claimName": "p-scratch"}}]),
        [
            "spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more than 1 volume type",
            "spec.volumes[0].persistentVolumeClaim.claimName: Required value",
            "spec.volumes[1].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value",
            "spec.volumes[2].ephemeral.volumeClaimTemplate: Required value",
            'spec.volumes[3].persistentVolumeClaim.claimName: Invalid value: "p-scratch": '
            "must not reference a PVC that gets created for an ephemeral volume",
        ],
    ),
    (
        "resource-claims",
        pod("p", containers=[dict(container(), resources={"claims": [{"name": "gpu"}]})],
            resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]),
        pod("p", containers=[dict(container(), resources={"claims": [{"name": "fpga"}]})],
            resourceClaims=[{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}]),
        [
            'spec.resourceClaims[0]: Invalid value: {"Name":"gpu","ResourceClaimName":"a","ResourceClaimTemplateName":"b"}: '
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            'spec.containers[0].resources.claims[0]: Not found: "fpga": must be one of the names in pod.spec.resourceClaims: gpu',
        ],
    ),
    # ----- Node (ValidateNode, validateNodeTaints, ValidateNodeResources) ---------------------------
    (
        "node-taints",
        node("n1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}, {"key": "gpu", "effect": "NoExecute"}]),
        node("n1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}, {"key": "gpu", "value": "x", "effect": "NoSchedule"},
                           {"key": "k", "effect": "Sometimes"}, {"key": "k2"}, {"key": "", "value": "a b", "effect": "NoSchedule"}]),
        [
            'spec.taints[1]: Duplicate value: {"Key":"gpu","Value":"x","Effect":"NoSchedule","TimeAdded":null}: '
            "taints must be unique by key and effect pair",
            f'spec.taints[2].effect: Unsupported value: "Sometimes": {EFFECTS}',
            "spec.taints[3].effect: Required value",
            'spec.taints[4].key: Invalid value: "": name part must be non-empty',
            f'spec.taints[4].key: Invalid value: "": {NAME_PART_ERR}',
            f'spec.taints[4].value: Invalid value: "a b": {LABEL_VALUE_ERR}',
        ],
    ),
    (
        "node-resources",
        node("n1", extra={"example.com/gpu": "4"}),
        node("n1", cpu="-2", extra={"example.com/gpu": "1500m"}),
        [
            'status.capacity.cpu: Invalid value: "-2": must be greater than or equal to 0',
            'status.capacity.example.com/gpu: Invalid value: "1500m": must be an integer',
            'status.allocatable.cpu: Invalid value: "-2": must be greater than or equal to 0',
            'status.allocatable.example.com/gpu: Invalid value: "1500m": must be an integer',
        ],
    ),
    (
        "node-name-and-labels",
        node("ip-10-0-0-1.ec2.internal", labels={"topology.kubernetes.io/zone": "eu-west-1a"}),
        dict(node("n/1"), metadata={"name": "n/1", "namespace": "default", "labels": {"zone": "eu west"}}),
        [
            f'metadata.name: Invalid value: "n/1": {SUBDOMAIN_ERR}',
            "metadata.name: Invalid value: \"n/1\": may not contain '/'",
            "metadata.namespace: Forbidden: not allowed on this type",
            f'metadata.labels: Invalid value: "eu west": {LABEL_VALUE_ERR}',
        ],
    ),
    # ----- Namespace, Service, workloads (selectors the spreading plugins read) ---------------------
    (
        "namespace-name",
        obj("Namespace", "v1", "team-a", metadata={"name": "team-a", "labels": {"env": "prod"}}),
        obj("Namespace", "v1", "team.a"),
        ['metadata.name: Invalid value: "team.a": must not contain dots'],
    ),
    (
        "service-selector",
        obj("Service", "v1", "web", "default", spec={"selector": {"app": "web"}}),
        obj("Service", "v1", "1web", "default", spec={"selector": {"app": "web app"}}),
        [
            'metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters '
            "or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
            "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            f'spec.selector: Invalid value: "web app": {LABEL_VALUE_ERR}',
        ],
    ),
    (
        "replicaset-selector",
        rs({"matchLabels": {"app": "web"}}),
        rs({}),
        ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"],
    ),
    (
        "statefulset-selector",
        rs({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "StatefulSet"),
        rs(None, "StatefulSet"),
        ["spec.selector: Required value"],
    ),
    (
        "replicationcontroller-selector",
        obj("ReplicationController", "v1", "web", "default", spec={"replicas": 2, "selector": {"app": "web"}}),
        obj("ReplicationController", "v1", "web", "default", spec={"replicas": -1, "selector": {"app": "w b"}}),
        [f'spec.selector: Invalid value: "w b": {LABEL_VALUE_ERR}', "spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    # ----- PriorityClass (pkg/apis/scheduling/validation) -------------------------------------------
    (
        "priorityclass-user-maximum",
        obj("PriorityClass", "scheduling.k8s.io/v1", "high", value=1_000_000_000, preemptionPolicy="Never"),
        obj("PriorityClass", "scheduling.k8s.io/v1", "high", value=1_000_000_001, preemptionPolicy="Always"),
        [
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
            'preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"',
        ],
    ),
    (
        "priorityclass-system-names",
        obj("PriorityClass", "scheduling.k8s.io/v1", "system-node-critical", value=2000001000),
        obj("PriorityClass", "scheduling.k8s.io/v1", "system-high", value=5),
        [
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
            "error: system-high is not a known system priority class"
        ],
    ),
    # ----- PodDisruptionBudget (pkg/apis/policy/validation) ----------------------------------------
    (
        "pdb-budget",
        pdb(minAvailable="50%"),
        pdb(minAvailable=1, maxUnavailable="120%"),
        [
            'spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":"120%",'
            '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set',
            'spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%',
        ],
    ),
    (
        "pdb-values-and-selector",
        pdb(maxUnavailable=0),
        dict(pdb(minAvailable="half", selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
             status={"disruptionsAllowed": -1}),
        [
            "spec.minAvailable: Invalid value: \"half\": a valid percent string must be a numeric string followed by an "
            "ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0",
        ],
    ),
    # ----- PersistentVolumeClaim / PersistentVolume (ValidatePersistentVolumeClaimSpec / ...Spec) ----
    (
        "pvc-access-modes-and-storage",
        pvc(storageClassName="fast", volumeMode="Block"),
        pvc(accessModes=[], resources={}, volumeMode="Raw"),
        [
            "spec.accessModes: Required value: at least 1 access mode is required",
            "spec.resources[storage]: Required value",
            'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
        ],
    ),
    (
        "pvc-modes",
        pvc(accessModes=["ReadWriteOncePod"]),
        pvc(accessModes=["ReadWriteOncePod", "ReadWriteOnce", "ReadWriteSometimes"], resources={"requests": {"storage": "0"}}),
        [
            'spec.accessModes: Unsupported value: "ReadWriteSometimes": '
            'supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
            'spec.resources[storage]: Invalid value: "0": must be greater than zero',
        ],
    ),
    (
        "pv-node-affinity",
        pv(nodeAffinity={"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}),
        pv(nodeAffinity={"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Sometimes"}]}]}}),
        ['spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Sometimes": not a valid selector operator'],
    ),
    (
        "pv-sources-and-capacity",
        pv(),
        dict(pv(), spec={"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "-1"}, "local": {"path": "/mnt"}, "hostPath": {"path": "/mnt"}}),
        [
            'spec.capacity[storage]: Invalid value: -1: must be a valid resource quantity',
            'spec.capacity[storage]: Invalid value: "-1": must be greater than zero',
            "spec.local: Forbidden: may not specify more than 1 volume type",
        ],
    ),
    (
        "pv-local-needs-node-affinity",
        dict(pv(), spec={"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "local": {"path": "/mnt"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}),
        dict(pv(), spec={"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "local": {"path": "/mnt"}, "nodeAffinity": {}}),
        ["spec.nodeAffinity.required: Required value: must specify required node constraints"],
    ),
    # ----- storage.k8s.io (pkg/apis/storage/validation) ---------------------------------------------
    (
        "storageclass",
        sc(volumeBindingMode="WaitForFirstConsumer", allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}]),
        sc(volumeBindingMode="Later", provisioner="", allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}]}]),
        [
            "provisioner: Required value",
            'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
            'allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
        ],
    ),
    (
        "csinode",
        csinode(driver(allocatable={"count": 25})),
        csinode(driver(allocatable={"count": -1}, nodeID=""), driver(topologyKeys=["bad key"])),
        [
            "spec.drivers[0].nodeID: Required value",
            "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0",
            'spec.drivers[1].name: Duplicate value: "ebs.csi.aws.com"',
            f'spec.drivers[1]: Invalid value: "bad key": {NAME_PART_ERR}',
        ],
    ),
    (
        "csidriver-name",
        obj("CSIDriver", "storage.k8s.io/v1", "ebs.csi.aws.com", spec={"attachRequired": True}),
        obj("CSIDriver", "storage.k8s.io/v1", "EBS", spec={}),
        [f'metadata.name: Invalid value: "EBS": {SUBDOMAIN_ERR}'],
    ),
    (
        "csistoragecapacity",
        obj("CSIStorageCapacity", "storage.k8s.io/v1", "cap-1", "default", storageClassName="fast", capacity="10Gi",
            nodeTopology={"matchLabels": {"zone": "a"}}),
        obj("CSIStorageCapacity", "storage.k8s.io/v1", "cap-1", "default", storageClassName="Fast", capacity="-1Gi"),
        [f'storageClassName: Invalid value: "Fast": {SUBDOMAIN_ERR}', 'capacity: Invalid value: "-1Gi": must be greater than or equal to 0'],
    ),
    (
        "volumeattachment",
        obj("VolumeAttachment", "storage.k8s.io/v1", "va-1", spec={"attacher": "ebs.csi.aws.com", "nodeName": "n1",
                                                                   "source": {"persistentVolumeName": "pv-1"}}),
        obj("VolumeAttachment", "storage.k8s.io/v1", "va-1", spec={"attacher": "ebs.csi.aws.com", "nodeName": "n1", "source": {}}),
        ["spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"],
    ),
    # ----- resource.k8s.io (pkg/apis/resource/validation) -------------------------------------------
    (
        "resourceclaim-request-kinds",
        claim(exact(), {"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.example.com"}]}),
        claim({"name": "gpu"}, {"name": "both", "exactly": {"deviceClassName": "g"}, "firstAvailable": [{"name": "a", "deviceClassName": "g"}]}),
        [
            "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
            "spec.devices.requests[1]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, "
            "but multiple fields are set",
        ],
    ),
    (
        "resourceclaim-exact-request",
        claim(exact(allocationMode="All"), {"name": "two", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}),
        claim({"name": "gpu", "exactly": {"allocationMode": "Some"}}, {"name": "gpu", "exactly": {"deviceClassName": "g", "count": 0,
              "selectors": [{}]}}),
        [
            "spec.devices.requests[0].exactly.deviceClassName: Required value",
            'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"',
            "spec.devices.requests[1].exactly.selectors[0].cel: Required value",
            "spec.devices.requests[1].exactly.count: Invalid value: 0: must be greater than zero",
            'spec.devices.requests[1]: Duplicate value: "gpu"',
        ],
    ),
    (
        "resourceclaim-constraints",
        claim(exact(), constraints=[{"requests": ["gpu"], "matchAttribute": "gpu.example.com/numa"}]),
        claim(exact(), constraints=[{"requests": ["nic"]}]),
        [
            "spec.devices.constraints[0].requests[0]: Invalid value: \"nic\": must be the name of a request in the claim "
            "or the name of a request and a subrequest separated by '/'",
            "spec.devices.constraints[0].matchAttribute: Required value",
        ],
    ),
    (
        "resourceclaimtemplate",
        obj("ResourceClaimTemplate", "resource.k8s.io/v1", "one-gpu", "default", spec={"spec": {"devices": {"requests": [exact()]}}}),
        obj("ResourceClaimTemplate", "resource.k8s.io/v1", "one-gpu", "default", spec={"spec": {"devices": {"requests": [{"name": "GPU"}]}}}),
        [
            f'spec.spec.devices.requests[0].name: Invalid value: "GPU": {DNS_LABEL_ERR}',
            "spec.spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
        ],
    ),
    (
        "deviceclass",
        obj("DeviceClass", "resource.k8s.io/v1", "gpu.example.com", spec={"selectors": [{"cel": {"expression": "true"}}]}),
        obj("DeviceClass", "resource.k8s.io/v1", "gpu.example.com", spec={"selectors": [{}]}),
        ["spec.selectors[0].cel: Required value"],
    ),
    (
        "resourceslice-where",
        resource_slice(),
        resource_slice(nodeName=None, allNodes=False),
        [
            'spec.allNodes: Invalid value: false: must be either unset or set to true',
            "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
        ],
    ),
    (
        "resourceslice-pool-and-devices",
        resource_slice(allNodes=True, nodeName=None),
        resource_slice(pool={"name": "", "resourceSliceCount": 0}, allNodes=True, devices=[{"name": "gpu-0"}, {"name": "gpu-0", "nodeName": "n1"}]),
        [
            "spec.pool.name: Required value",
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
            'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
            "`perDeviceNodeSelection` is required, but multiple fields are set",
            'spec.devices[1]: Duplicate value: "gpu-0"',
            "spec.devices[1]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        ],
    ),
]


@pytest.mark.parametrize(("good", "bad", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(good: JSON, bad: JSON, expected: list[str]) -> None:
    assert problems(good) == []
    assert problems(bad) == expected


# What the API server accepts (or keeps, for objects created before a rule tightened) is not refused.
ACCEPTED: list[tuple[str, JSON]] = [
    # label values in required node affinity and in pod affinity selectors: grandfathered upstream
    ("legacy-label-value-in-node-affinity", pod("p", affinity=required_affinity({"key": "zone", "operator": "In", "values": ["a b"]}))),
    ("legacy-label-value-in-pod-affinity", pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        pod_affinity_term(labelSelector={"matchExpressions": [{"key": "app", "operator": "In", "values": ["w b"]}]})]}})),
    # Gt and Lt tolerations: accepted when the TaintTolerationComparisonOperators gate is on
    ("comparison-tolerations", pod("p", tolerations=[{"key": "mem", "operator": "Lt", "value": "64"}])),
    # defaulted fields: a limit alone is also the request; an empty toleration operator is Equal; no
    # protocol is TCP; no volumeBindingMode is Immediate; CSIDriver's booleans are defaulted
    ("limit-only", with_resources(limits={"example.com/gpu": "1", "cpu": "2"})),
    ("empty-operator", pod("p", tolerations=[{"key": "k", "value": "v"}])),
    ("default-protocol", pod("p", containers=[container(ports=[{"containerPort": 80, "hostPort": 80}])])),
    ("host-network", pod("p", hostNetwork=True, containers=[container(ports=[{"containerPort": 80}])])),
    ("default-binding-mode", sc()),
    ("csidriver-defaults", obj("CSIDriver", "storage.k8s.io/v1", "ebs.csi.aws.com", spec={})),
    # v1beta1 ResourceClaims have their request fields flat (converted into `exactly` upstream)
    ("v1beta1-flat-request", dict(claim({"name": "gpu", "deviceClassName": "gpu.example.com", "count": 2}),
                                  apiVersion="resource.k8s.io/v1beta1")),
    # kinds the engine does not read are not looked at
    ("unread-kind", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not Valid"}}),
]


@pytest.mark.parametrize("o", [a[1] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED])
def test_what_the_api_server_accepts_is_accepted(o: JSON) -> None:
    assert problems(o) == []


def test_host_network_ports_must_match() -> None:
    p = pod("p", hostNetwork=True, containers=[container(ports=[{"containerPort": 80, "hostPort": 8080}])])
    assert problems(p) == ["spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true"]


def test_cached_sections_report_each_pod() -> None:
    """Pods of one template share cache entries; each pod still gets its own problems."""
    v = Validator()
    bad = required_affinity({"key": "zone", "operator": "Sometimes"})
    a, b = pod("a", affinity=bad), pod("b", affinity=copy.deepcopy(bad), namespace="Other_NS")
    assert [str(e) for e in v.validate(a)] == [str(e) for e in v.validate(b)][1:]
    assert len(v.validate(b)) == 2 and len(v.validate(pod("c"))) == 0


# --------------------------------------------------------------------------------------------------
# Rendering: Go's quoting and Quantity.String()


@pytest.mark.parametrize(
    ("text", "fmt", "shown"),
    [
        ("1500m", "DecimalSI", "1500m"),
        ("1.5", "DecimalSI", "1500m"),
        ("0.5", "DecimalSI", "500m"),
        ("2000", "DecimalSI", "2k"),
        ("1500", "DecimalSI", "1500"),
        ("2Gi", "BinarySI", "2Gi"),
        ("1.5Gi", "BinarySI", "1536Mi"),
        ("512Ki", "BinarySI", "512Ki"),
        ("1e3", "DecimalExponent", "1e3"),
        ("-100m", "DecimalSI", "-100m"),
        ("0.0000000001", "DecimalSI", "1n"),
    ],
)
def test_quantity_canonical_form(text: str, fmt: str, shown: str) -> None:
    q = parse_qty(text)
    assert q is not None and q.fmt == fmt and str(q) == shown
    assert canonical(q.value, q.fmt) == shown


def test_go_quote() -> None:
    assert go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote("tab\there\x01é") == '"tab\\there\\x01é"'


# --------------------------------------------------------------------------------------------------
# The loader, the command line, the web upload


BAD_POD = pod("web", affinity=required_affinity({"key": "zone", "operator": "Sometimes", "values": ["a"]}))
OPERATOR_ERROR = (
    f'{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Sometimes": not a valid selector operator'
)


def test_an_invalid_object_is_refused_not_replayed_as_unschedulable() -> None:
    with pytest.raises(InvalidSnapshot) as exc:
        load_texts([("cluster.yaml", yaml.safe_dump({"kind": "List", "items": [node("a"), BAD_POD]}))])
    assert str(exc.value) == f"cluster.yaml: Pod default/web: {OPERATOR_ERROR}"
    assert isinstance(exc.value, InputError)
    assert (exc.value.source, exc.value.obj) == ("cluster.yaml", "Pod default/web")
    assert exc.value.field == f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator"


def test_every_problem_of_a_snapshot_is_reported_together(tmp_path: Path) -> None:
    items = [node("a", taints=[{"key": "k", "effect": "Sometimes"}]), BAD_POD, pod("db", cpu="lots"), pod("ok")]
    with pytest.raises(InvalidSnapshot) as exc:
        load_texts([("one.yaml", yaml.safe_dump({"kind": "List", "items": items[:2]})), ("two.json", json.dumps(items[2:]))])
    got = [str(p) for p in exc.value.problems]
    assert got == [
        f'one.yaml: Node a: spec.taints[0].effect: Unsupported value: "Sometimes": {EFFECTS}',
        f"one.yaml: Pod default/web: {OPERATOR_ERROR}",
        "two.json: Pod default/db: field spec.containers[0].resources.requests.cpu: "
        + got[2].split("spec.containers[0].resources.requests.cpu: ", 1)[1],
    ]
    assert "invalid quantity" in got[2]
    assert str(exc.value).splitlines()[0] == "3 problems; the API server would refuse this snapshot:"


def test_problems_are_bounded() -> None:
    bad = [pod(f"p{i}", tolerations=[{"key": "k", "operator": "Maybe"}]) for i in range(MAX_PROBLEMS + 20)]
    with pytest.raises(InvalidSnapshot) as exc:
        load_texts([("big.json", json.dumps(bad))])
    assert len(exc.value.problems) == MAX_PROBLEMS and exc.value.truncated
    assert "(and more; stopped counting)" in str(exc.value).splitlines()[0]


def test_cli_exits_2_naming_file_object_and_field(tmp_path: Path) -> None:
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump({"kind": "List", "items": [node("a"), BAD_POD]}))
    r = subprocess.run([sys.executable, "-m", "schedviz", "replay", str(f)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"schedviz: error: {f}: Pod default/web: {OPERATOR_ERROR}"
    assert "Unschedulable" not in r.stdout


def test_upload_problems_name_document_object_and_field() -> None:
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node("a"), BAD_POD]})
    with pytest.raises(UploadError) as exc:
        parse_upload(text.encode(), "cluster.yaml")
    assert exc.value.as_dicts() == [
        {
            "document": "cluster.yaml",
            "object": "Pod default/web",
            "field": f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator",
            "message": OPERATOR_ERROR,
        }
    ]


@pytest.mark.django_db
def test_api_upload_is_a_400_invalid_upload(settings: Any) -> None:
    from django.contrib.auth.models import User
    from django.core.cache import cache
    from rest_framework.test import APIClient

    from schedviz.accounts.models import ApiToken
    from schedviz.ingestion.models import Snapshot

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    _, raw = ApiToken.issue(User.objects.create_user("val", password="pw-val"), "test")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node("a"), BAD_POD]})
    r = api.post("/api/v1/snapshots/", {"content": text}, format="json")
    assert r.status_code == 400, r.content
    err = r.json()["error"]
    assert err["code"] == "invalid_upload"
    [detail] = err["details"]
    assert detail["document"]  # the uploaded file's name
    assert {k: detail[k] for k in ("object", "field", "message")} == {
        "object": "Pod default/web",
        "field": f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator",
        "message": OPERATOR_ERROR,
    }
    assert Snapshot.objects.count() == 0


def _fixture_files() -> list[Path]:
    conformance = sorted(
        p for p in (ROOT / "tests" / "conformance" / "fixtures").rglob("*.json") if not p.name.endswith(".expected.json")
    )
    samples = sorted((ROOT / "schedviz" / "samples").rglob("*.yaml"))
    return conformance + samples


def test_every_sample_and_conformance_fixture_is_valid() -> None:
    v = Validator()
    found: list[str] = []
    files = _fixture_files()
    assert len(files) > 40
    for f in files:
        for doc in parse_documents(f.read_text(), str(f)):
            for o in _objects(doc):
                found += [f"{f.name}: {o.get('kind')} {o.get('metadata', {}).get('name')}: {e}" for e in v.validate(o)]
    assert found == []


def _objects(doc: Any) -> list[JSON]:
    if isinstance(doc, list):
        return [o for d in doc for o in _objects(d)]
    if not isinstance(doc, dict):
        return []
    if "kind" not in doc:
        return [o for key in ("nodes", "pods", "items") for o in _objects(doc.get(key) or [])]
    if doc.get("kind", "").endswith("List"):
        return _objects(doc.get("items") or [])
    return [doc]

