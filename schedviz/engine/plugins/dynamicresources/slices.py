"""What the allocator works from (dynamic-resource-allocation/structured): a claim's requests and
constraints, the devices ResourceSlices publish, by node and pool, and the selector verdicts kept
for the replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import cel, quantity
from ...errors import InputError
from .. import _storage as st
from .claims import _SLICES_KEY, JSON, claim_ref

# ----- requests, devices and slices ---------------------------------------------------------------


@dataclass
class _Request:
    """An exact request or one subrequest of a firstAvailable list (the allocator's requestAccessor)."""

    name: str
    class_name: str
    mode: str
    count: int
    admin_access: bool
    has_admin_access: bool
    selectors: list[str]
    # Where the selectors are in the claim (for errors naming one of them).
    selectors_field: str = "spec.devices.requests"


@dataclass
class _ClaimRequest:
    name: str
    exact: _Request | None
    subrequests: list[_Request]


def _parse_request(raw: JSON, name: str, ident: str, fld: str) -> _Request:
    mode = str(raw.get("allocationMode") or "ExactCount")
    count = raw.get("count")
    if count is None:
        count = 1 if mode == "ExactCount" else 0
    if isinstance(count, bool) or not isinstance(count, int):
        raise InputError("must be an integer", obj=ident, field=f"{fld}.count")
    selectors: list[str] = []
    for i, s in enumerate(st.as_list(raw.get("selectors"), ident, f"{fld}.selectors")):
        s = st.as_map(s, ident, f"{fld}.selectors[{i}]")
        cel = s.get("cel")
        # An empty string marks "not a CEL selector" (an unsupported future selector type).
        selectors.append(str(cel.get("expression") or "") if isinstance(cel, dict) else "")
    admin = raw.get("adminAccess")
    return _Request(
        name=name,
        class_name=str(raw.get("deviceClassName") or ""),
        mode=mode,
        count=count,
        admin_access=admin is True,
        has_admin_access=admin is not None,
        selectors=selectors,
        selectors_field=f"{fld}.selectors",
    )


def claim_requests(claim: JSON) -> list[_ClaimRequest]:
    """spec.devices.requests of a v1 claim (``exactly`` / ``firstAvailable``); v1beta1's flat form too."""
    ident = f"ResourceClaim {claim_ref(claim)}"
    devices = st.as_map(st.spec(claim).get("devices"), ident, "spec.devices")
    out: list[_ClaimRequest] = []
    for i, r in enumerate(st.as_list(devices.get("requests"), ident, "spec.devices.requests")):
        fld = f"spec.devices.requests[{i}]"
        r = st.as_map(r, ident, fld)
        name = str(r.get("name") or "")
        exact: _Request | None = None
        subs: list[_Request] = []
        if isinstance(r.get("exactly"), dict):
            exact = _parse_request(r["exactly"], name, ident, f"{fld}.exactly")
        elif r.get("firstAvailable"):
            for j, sr in enumerate(st.as_list(r.get("firstAvailable"), ident, f"{fld}.firstAvailable")):
                sr = st.as_map(sr, ident, f"{fld}.firstAvailable[{j}]")
                subs.append(
                    _parse_request(sr, str(sr.get("name") or ""), ident, f"{fld}.firstAvailable[{j}]")
                )
        elif r.get("deviceClassName"):
            exact = _parse_request(r, name, ident, fld)
        out.append(_ClaimRequest(name, exact, subs))
    return out


def _constraints(claim: JSON) -> list[tuple[set[str], str]]:
    """spec.devices.constraints: (request names, matchAttribute) pairs; None attribute is unsupported."""
    ident = f"ResourceClaim {claim_ref(claim)}"
    devices = st.as_map(st.spec(claim).get("devices"), ident, "spec.devices")
    out: list[tuple[set[str], str]] = []
    for i, c in enumerate(st.as_list(devices.get("constraints"), ident, "spec.devices.constraints")):
        c = st.as_map(c, ident, f"spec.devices.constraints[{i}]")
        attr = c.get("matchAttribute")
        reqs = {
            str(x) for x in st.as_list(c.get("requests"), ident, f"spec.devices.constraints[{i}].requests")
        }
        out.append((reqs, str(attr) if attr else ""))
    return out


@dataclass
class _Device:
    name: str
    attributes: dict[str, Any]  # qualified name -> CEL value
    attr_raw: dict[str, JSON]
    capacity: dict[str, Any]
    raw: JSON
    consumes_counters: bool
    binding_conditions: bool
    node_name: str
    all_nodes: bool
    node_selector: JSON | None
    # What selectors see of the device (driver, attributes, capacity), as a key into _VERDICTS.
    content: tuple[Any, ...] = ()


# Selector outcomes by (expression, device content): the verdict, or the CEL runtime error's text.
# An expression's outcome depends only on the device's driver, attributes and capacity, so devices
# that look alike (the same GPU model on every node) are evaluated once.
_VERDICTS: dict[tuple[str, tuple[Any, ...]], bool | str] = {}
_MAX_VERDICTS = 1 << 18


@dataclass
class _Slice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    all_nodes: bool
    node_selector: JSON | None
    per_device: bool
    shared_counters: bool
    devices: list[_Device]


def _attr_value(raw: object, ident: str, fld: str) -> Any:
    a = st.as_map(raw, ident, fld)
    if "int" in a:
        return a["int"]
    if "bool" in a:
        return a["bool"]
    if "string" in a:
        return str(a["string"])
    if "version" in a:
        v = cel.parse_semver(str(a["version"]))
        return v if v is not None else _BadVersion(str(a["version"]))
    return _BadVersion("")


@dataclass(frozen=True)
class _BadVersion:
    text: str


def _parse_slice(raw: JSON) -> _Slice:
    ident = f"ResourceSlice {st.name_of(raw)}"
    sp = st.spec(raw)
    pool = st.as_map(sp.get("pool"), ident, "spec.pool")
    devices: list[_Device] = []
    for i, d in enumerate(st.as_list(sp.get("devices"), ident, "spec.devices")):
        fld = f"spec.devices[{i}]"
        d = st.as_map(d, ident, fld)
        basic = d.get("basic")
        body: JSON = basic if isinstance(basic, dict) else d  # v1beta1 nests fields in "basic"
        attrs: dict[str, Any] = {}
        attr_raw: dict[str, JSON] = {}
        for k, v in st.as_map(body.get("attributes"), ident, f"{fld}.attributes").items():
            attrs[str(k)] = _attr_value(v, ident, f"{fld}.attributes.{k}")
            attr_raw[str(k)] = v
        caps: dict[str, Any] = {}
        for k, v in st.as_map(body.get("capacity"), ident, f"{fld}.capacity").items():
            value = st.as_map(v, ident, f"{fld}.capacity.{k}").get("value")
            caps[str(k)] = cel.Quantity(quantity.parse(value, obj=ident, field=f"{fld}.capacity.{k}.value"))
        devices.append(
            _Device(
                name=str(d.get("name") or ""),
                attributes=attrs,
                attr_raw=attr_raw,
                capacity=caps,
                raw=body,
                consumes_counters=bool(body.get("consumesCounters")),
                binding_conditions=bool(body.get("bindingConditions")),
                node_name=str(body.get("nodeName") or ""),
                all_nodes=body.get("allNodes") is True,
                node_selector=body.get("nodeSelector")
                if isinstance(body.get("nodeSelector"), dict)
                else None,
            )
        )
    gen = pool.get("generation", 0)
    count = pool.get("resourceSliceCount", 1)
    return _Slice(
        name=st.name_of(raw),
        driver=str(sp.get("driver") or ""),
        pool=str(pool.get("name") or ""),
        generation=int(gen) if isinstance(gen, int) else 0,
        slice_count=int(count) if isinstance(count, int) else 1,
        node_name=str(sp.get("nodeName") or ""),
        all_nodes=sp.get("allNodes") is True,
        node_selector=sp.get("nodeSelector") if isinstance(sp.get("nodeSelector"), dict) else None,
        per_device=sp.get("perDeviceNodeSelection") is True,
        shared_counters=bool(sp.get("sharedCounters")),
        devices=devices,
    )


@dataclass
class _SliceIndex:
    slices: list[_Slice]
    by_node_name: dict[str, list[int]]
    selected: list[int]  # slices with allNodes / a node selector / per-device selection
    selector_masks: dict[int, Any]  # slice index -> mask over all nodes


def _slice_index(cluster: Any) -> _SliceIndex:
    sig = (id(cluster.objects), tuple(sorted(cluster.objects.kinds().items())), cluster.n)
    cached = cluster.caches.get(_SLICES_KEY)
    if cached is not None and cached[0] == sig:
        idx: _SliceIndex = cached[1]
        return idx
    slices = [_parse_slice(o.raw) for o in cluster.objects.of_kind("ResourceSlice")]
    by_node: dict[str, list[int]] = {}
    selected: list[int] = []
    masks: dict[int, Any] = {}
    all_nodes = np.arange(cluster.n, dtype=np.int64)
    for i, s in enumerate(slices):
        if s.node_name:
            by_node.setdefault(s.node_name, []).append(i)
        elif s.all_nodes or s.node_selector is not None or s.per_device or s.shared_counters:
            selected.append(i)
            if not s.all_nodes and s.node_selector is not None:
                masks[i] = st.node_selector_mask(
                    cluster,
                    s.node_selector,
                    all_nodes,
                    obj=f"ResourceSlice {s.name}",
                    fld="spec.nodeSelector",
                )
    idx = _SliceIndex(slices, by_node, selected, masks)
    cluster.caches[_SLICES_KEY] = (sig, idx)
    return idx


def _node_matches(
    cluster: Any, node: int, name: str, all_nodes: bool, selector: JSON | None, ident: str
) -> bool:
    """incubating NodeMatches."""
    if name:
        return bool(cluster.names[node] == name)
    if all_nodes:
        return True
    if selector is not None:
        m = st.node_selector_mask(
            cluster, selector, np.asarray([node], dtype=np.int64), obj=ident, fld="nodeSelector"
        )
        return bool(m[0])
    return False


@dataclass
class _Pool:
    driver: str
    pool: str
    slices: list[_Slice]
    incomplete: bool = False
    invalid: bool = False

    @property
    def ident(self) -> str:
        return f"{self.driver}/{self.pool}"
