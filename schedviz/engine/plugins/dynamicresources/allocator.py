"""The structured allocator (dynamic-resource-allocation/structured, internal/incubating): the
exhaustive search over claims, requests (or firstAvailable subrequests) and devices, with the
device classes' and requests' CEL selectors and matchAttribute constraints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import cel
from ...errors import InputError
from .. import _storage as st
from .claims import ALLOCATION_RESULTS_MAX_SIZE, JSON, DeviceID, _AllocError, claim_ref, device_holders
from .slices import (
    _MAX_VERDICTS,
    _VERDICTS,
    _BadVersion,
    _ClaimRequest,
    _constraints,
    _Device,
    _node_matches,
    _Pool,
    _Request,
    _Slice,
    _slice_index,
    claim_requests,
)

# ----- the allocator -------------------------------------------------------------------------------


@dataclass
class _Features:
    admin_access: bool
    prioritized_list: bool
    partitionable: bool
    device_taints: bool
    binding_conditions: bool


@dataclass
class _ReqData:
    request: _Request
    parent: str  # name of the parent request for a subrequest, "" otherwise
    class_raw: JSON | None
    num_devices: int
    all_devices: list[tuple[_Slice, _Device, _Pool]] | None = None

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.request.name}" if self.parent else self.request.name


@dataclass
class _Result:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None
    slice: _Slice
    dev: _Device


class Allocator:
    """structured.Allocator for one scheduling cycle: the state of allocated devices is fixed."""

    def __init__(
        self, cluster: Any, features: _Features, allocated: set[DeviceID], classes: dict[str, JSON]
    ) -> None:
        self.cluster = cluster
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self.index = _slice_index(cluster)
        self._selectable: dict[tuple[DeviceID, int, int, int, int, int], bool] = {}
        self._class_selectors: dict[str, list[str]] = {}
        self.last_run: _Run | None = None
        self._holders: dict[DeviceID, str] | None = None
        self._parsed: dict[int, tuple[list[_ClaimRequest], list[tuple[set[str], str]]]] = {}

    def parsed(self, claim: JSON) -> tuple[list[_ClaimRequest], list[tuple[set[str], str]]]:
        """The claim's requests and constraints, parsed once per cycle."""
        hit = self._parsed.get(id(claim))
        if hit is None:
            hit = (claim_requests(claim), _constraints(claim))
            self._parsed[id(claim)] = hit
        return hit

    def gather_pools(self, node: int) -> list[_Pool]:
        """GatherPools: the pools with slices for the node, complete ones with their slices."""
        idx = self.index
        candidates = list(idx.by_node_name.get(self.cluster.names[node], []))
        for i in idx.selected:
            s = idx.slices[i]
            if not self.features.partitionable and (s.per_device or s.shared_counters):
                continue
            if s.shared_counters or s.all_nodes:
                candidates.append(i)
            elif s.node_selector is not None:
                if bool(idx.selector_masks[i][node]):
                    candidates.append(i)
            elif s.per_device:
                for d in s.devices:
                    if _node_matches(
                        self.cluster,
                        node,
                        d.node_name,
                        d.all_nodes,
                        d.node_selector,
                        f"ResourceSlice {s.name}",
                    ):
                        candidates.append(i)
                        break
        pools: dict[tuple[str, str], list[_Slice]] = {}
        for i in sorted(candidates):
            s = idx.slices[i]
            if not self.features.partitionable and (s.per_device or s.shared_counters):
                continue
            key = (s.driver, s.pool)
            have = pools.get(key)
            if have is None or s.generation > have[0].generation:
                pools[key] = [s]
            elif s.generation == have[0].generation:
                have.append(s)
        out: list[_Pool] = []
        for (driver, pool_name), slices in pools.items():
            gen = slices[0].generation
            if len(slices) != slices[0].slice_count:
                same = [s for s in idx.slices if s.driver == driver and s.pool == pool_name]
                if any(s.generation > gen for s in same):
                    continue  # obsolete
                if len([s for s in same if s.generation == gen]) != slices[0].slice_count:
                    out.append(_Pool(driver, pool_name, [], incomplete=True))
                    continue
            names: set[str] = set()
            invalid = False
            for s in slices:
                for d in s.devices:
                    if d.name in names:
                        invalid = True
                    names.add(d.name)
            out.append(_Pool(driver, pool_name, [] if invalid else slices, invalid=invalid))
        return out

    # allocate ------------------------------------------------------------------------------
    def allocate(self, node: int, claims: list[JSON]) -> list[JSON] | None:
        """Allocate: one AllocationResult per claim, None when the node cannot satisfy them all."""
        self.last_run = _Run(self, node, claims)
        return self.last_run.run()

    def holder(self, dev: DeviceID) -> str:
        if self._holders is None:
            self._holders = device_holders(self.cluster)
        return self._holders.get(dev, "another claim")

    def why_not(self, rd: _ReqData, claim: JSON, s: _Slice, d: _Device) -> str | None:
        """Why allocateOne would pass over the device for this request (None: it could take it), in
        the order the allocator checks; for the trace of a node where allocation failed."""
        dev_id = (s.driver, s.pool, d.name)
        if not rd.request.admin_access and dev_id in self.allocated:
            return f"already allocated to {self.holder(dev_id)}"
        if not self.features.binding_conditions and d.binding_conditions:
            return "has binding conditions (DRADeviceBindingConditions is off)"
        try:
            if rd.class_raw is not None:
                cname = st.name_of(rd.class_raw)
                cls_sel = self._class_selectors.get(cname)
                if cls_sel is None:
                    cls_sel = self._class_selectors[cname] = _class_selectors(rd.class_raw)
                if not self._match(cls_sel, s, d, f"class {cname}", rd.class_raw, "spec.selectors"):
                    return f"does not match DeviceClass {cname}"
            if not self._match(
                rd.request.selectors, s, d, f"claim {claim_ref(claim)}", claim, rd.request.selectors_field
            ):
                return "does not match the request's selectors"
        except _AllocError as exc:
            return str(exc)
        if s.per_device and not _node_matches(
            self.cluster, self._node, d.node_name, d.all_nodes, d.node_selector, f"ResourceSlice {s.name}"
        ):
            return "not available on this node"
        if not self.features.partitionable and d.consumes_counters:
            return "consumes shared counters (DRAPartitionableDevices is off)"
        return None

    def selectable(self, key: tuple[int, int, int], rd: _ReqData, claim: JSON, s: _Slice, d: _Device) -> bool:
        if not self.features.binding_conditions and d.binding_conditions:
            return False
        dev_id = (s.driver, s.pool, d.name)
        # Per-device node selection depends on the node: not cached across nodes.
        ckey = (dev_id, id(claim), *key, self._node if s.per_device else -1)
        hit = self._selectable.get(ckey)
        if hit is not None:
            return hit
        ok = True
        if rd.class_raw is not None:
            cname = st.name_of(rd.class_raw)
            cls_sel = self._class_selectors.get(cname)
            if cls_sel is None:
                cls_sel = self._class_selectors[cname] = _class_selectors(rd.class_raw)
            ok = self._match(
                cls_sel, s, d, f"class {st.name_of(rd.class_raw)}", rd.class_raw, "spec.selectors"
            )
        if ok:
            ok = self._match(
                rd.request.selectors, s, d, f"claim {claim_ref(claim)}", claim, rd.request.selectors_field
            )
        if ok and s.per_device:
            ok = _node_matches(
                self.cluster, self._node, d.node_name, d.all_nodes, d.node_selector, f"ResourceSlice {s.name}"
            )
        self._selectable[ckey] = ok
        return ok

    _node: int = 0

    def _match(self, selectors: list[str], s: _Slice, d: _Device, who: str, obj: JSON, fld: str) -> bool:
        for i, expr in enumerate(selectors):
            if not expr:
                raise _AllocError(f"{who}: selector #{i}: CEL expression empty (unsupported selector type?)")
            try:
                # The limits the API server applies when it stores the selector (length, estimated
                # cost), then kube-scheduler's runtime cost limit for each evaluation.
                program = cel.compile_selector(expr, validate=True)
            except (cel.CelUnsupported, cel.CelRefused) as exc:
                kind = "DeviceClass" if who.startswith("class ") else "ResourceClaim"
                name = st.name_of(obj) if kind == "DeviceClass" else claim_ref(obj)
                if isinstance(exc, cel.CelRefused):
                    # validation.go: the object would not have been admitted.
                    raise InputError(
                        str(exc), obj=f"{kind} {name}", field=f"{fld}[{i}].cel.expression"
                    ) from None
                raise InputError(
                    f"CEL expression {expr!r} uses {exc}, which SchedViz does not evaluate",
                    obj=f"{kind} {name}",
                    field=fld,
                ) from None
            except cel.CelCompileError as exc:
                raise _AllocError(f"{who}: selector #{i}: CEL compile error: {exc.stage}{exc}") from None
            for name, value in d.attributes.items():
                if isinstance(value, _BadVersion):
                    raise _AllocError(
                        f"{who}: selector #{i}: CEL runtime error: attribute {name}: parse semantic "
                        f"version: {value.text!r} is not a valid version"
                    )
            if not d.content:
                # Types included: True and 1 are equal keys in Python, not in CEL.
                attrs = tuple((k, type(v).__name__, v) for k, v in d.attributes.items())
                d.content = (s.driver, attrs, tuple(d.capacity.items()))
            matched = _VERDICTS.get((expr, d.content))
            if matched is None:
                try:
                    matched = program.evaluate(cel.device_env(s.driver, d.attributes, d.capacity))
                except cel.CelError as exc:
                    matched = str(exc)
                if len(_VERDICTS) >= _MAX_VERDICTS:
                    _VERDICTS.clear()
                _VERDICTS[(expr, d.content)] = matched
            if isinstance(matched, str):
                raise _AllocError(f"{who}: selector #{i}: CEL runtime error: {matched}")
            if not matched:
                return False
        return True


def _class_selectors(cls: JSON) -> list[str]:
    out: list[str] = []
    ident = f"DeviceClass {st.name_of(cls)}"
    for i, s in enumerate(st.as_list(st.spec(cls).get("selectors"), ident, "spec.selectors")):
        s = st.as_map(s, ident, f"spec.selectors[{i}]")
        cel = s.get("cel")
        out.append(str(cel.get("expression") or "") if isinstance(cel, dict) else "")
    return out


def _lookup_attribute(d: _Device, driver: str, name: str) -> JSON | None:
    """lookupAttribute: a fully qualified name, or the bare id when the domain is the driver's."""
    if name in d.attr_raw:
        return d.attr_raw[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return d.attr_raw.get(ident)


class _MatchAttribute:
    """matchAttributeConstraint: every device of the named requests has the same attribute value."""

    def __init__(self, requests: set[str], attribute: str) -> None:
        self.requests = requests
        self.attribute = attribute
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str, s: _Slice, d: _Device) -> bool:
        if not self._applies(request, sub):
            return True
        raw = _lookup_attribute(d, s.driver, self.attribute)
        if raw is None:
            return False
        typed: tuple[str, Any] | None = None
        for kind in ("string", "int", "bool", "version"):
            if kind in raw:
                typed = (kind, raw[kind])
                break
        if typed is None:
            return False
        if self.count == 0:
            self.value = typed
            self.count = 1
            return True
        if self.value != typed:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if not self._applies(request, sub):
            return
        self.count -= 1


class _Stop(Exception):
    """errAllocationResultMaxSizeExceeded."""


class _Run:
    """One Allocate call (the allocator struct of allocator_incubating.go)."""

    def __init__(self, a: Allocator, node: int, claims: list[JSON]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        a._node = node
        self.pools = a.gather_pools(node)
        self.req: dict[tuple[int, int, int], _ReqData] = {}
        self.requests: list[list[_ClaimRequest]] = []
        self.constraints: list[list[_MatchAttribute]] = []
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}

    def run(self) -> list[JSON] | None:
        for ci, claim in enumerate(self.claims):
            reqs, constraints = self.a.parsed(claim)
            self.requests.append(reqs)
            min_devices = 0
            for ri, r in enumerate(reqs):
                if r.subrequests:
                    if not self.a.features.prioritized_list:
                        raise _AllocError(
                            f"claim {claim_ref(claim)}, request {r.name}: has subrequests, but the "
                            "DRAPrioritizedList feature is disabled"
                        )
                    least = None
                    for si, sub in enumerate(r.subrequests):
                        rd = self._validate((ci, ri, si), claim, sub, r.name)
                        self.req[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    min_devices += least or 0
                elif r.exact is not None:
                    rd = self._validate((ci, ri, 0), claim, r.exact, "")
                    self.req[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
                else:
                    raise _AllocError(
                        f"claim {claim_ref(claim)}, request {r.name}: missing device class name (unsupported request type?)"
                    )
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise _AllocError(
                    f"claim {claim_ref(claim)}: number of requested devices {min_devices} exceeds the claim limit "
                    f"of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            cons: list[_MatchAttribute] = []
            for i, (names, attr) in enumerate(constraints):
                if not attr:
                    raise _AllocError(
                        f"claim {claim_ref(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
                cons.append(_MatchAttribute(names, attr))
            self.constraints.append(cons)
        try:
            done = self.one(0, 0, 0, 0, False)
        except _Stop:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise _AllocError("invalid resource pools were encountered", on_node=True)
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _validate(self, key: tuple[int, int, int], claim: JSON, r: _Request, parent: str) -> _ReqData:
        name = f"{parent}/{r.name}" if parent else r.name
        for i, sel in enumerate(r.selectors):
            if not sel:
                raise _AllocError(
                    f"claim {claim_ref(claim)}, request {name}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if not self.a.features.admin_access and r.has_admin_access:
            raise _AllocError(
                f"claim {claim_ref(claim)}, request {name}: admin access is requested, but the feature is disabled"
            )
        if not r.class_name:
            raise _AllocError(
                f"claim {claim_ref(claim)}, request {name}: missing device class name (unsupported request type?)"
            )
        cls = self.a.classes.get(r.class_name)
        if cls is None:
            raise _AllocError(
                f"claim {claim_ref(claim)}, request {name}: could not retrieve device class {r.class_name}: "
                f'deviceclass.resource.k8s.io "{r.class_name}" not found'
            )
        rd = _ReqData(r, parent, cls, 0)
        if r.mode == "ExactCount":
            rd.num_devices = r.count
        elif r.mode == "All":
            rd.all_devices = []
            for p in self.pools:
                if p.incomplete:
                    raise _AllocError(
                        f"claim {claim_ref(claim)}, request {name}: asks for all devices, but resource pool {p.ident} "
                        "is currently being updated"
                    )
                if p.invalid:
                    raise _AllocError(
                        f"claim {claim_ref(claim)}, request {name}: asks for all devices, but resource pool {p.ident} "
                        "is currently invalid"
                    )
                for s in p.slices:
                    for d in s.devices:
                        if self.a.selectable(key, rd, claim, s, d):
                            rd.all_devices.append((s, d, p))
            rd.num_devices = len(rd.all_devices)
        else:
            raise _AllocError(f"claim {claim_ref(claim)}, request {name}: unsupported count mode {r.mode}")
        return rd

    def report(self) -> list[JSON]:
        """After a failed search: per request, the node's devices the allocator could take and why it
        passes over the others (the trace's Filter details)."""
        out: list[JSON] = []
        for (ci, _ri, _si), rd in self.req.items():  # claims, requests, subrequests in order
            claim = self.claims[ci]
            selectable: list[str] = []
            rejected: dict[str, str] = {}
            for p in self.pools:
                if p.incomplete or p.invalid:
                    rejected[p.ident] = (
                        "pool is being updated (incomplete)" if p.incomplete else "pool is invalid"
                    )
                    continue
                for s in p.slices:
                    for d in s.devices:
                        why = self.a.why_not(rd, claim, s, d)
                        name = f"{s.driver}/{s.pool}/{d.name}"
                        if why is None:
                            selectable.append(name)
                        else:
                            rejected[name] = why
            entry: JSON = {"claim": claim_ref(claim), "request": rd.full_name}
            entry["count"] = "All" if rd.request.mode == "All" else rd.num_devices
            entry["selectable"] = selectable
            entry["rejected"] = rejected
            out.append(entry)
        return out

    def _in_use(self, dev: DeviceID) -> bool:
        return dev in self.a.allocated or bool(self.allocating.get(dev))

    def one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne."""
        if ci >= len(self.claims):
            return True
        reqs = self.requests[ci]
        if ri >= len(reqs):
            try:
                return self.one(ci + 1, 0, 0, 0, False)
            except _Stop:
                return False
        rd = self.req[(ci, ri, si)]
        if not in_sub and rd.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.req:
                try:
                    ok = self.one(ci, ri, sub, di, True)
                except _Stop:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _Stop()
            return False
        request = rd.request
        if request.mode == "All" and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self.one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _Stop()
        claim = self.claims[ci]
        if request.mode == "All":
            assert rd.all_devices is not None
            s, d, _p = rd.all_devices[di]
            undo = self._allocate_device(ci, ri, si, rd, s, d, must=True)
            if undo is None:
                return False
            try:
                done = self.one(ci, ri, si, di + 1, in_sub)
            except _Stop:
                undo()
                raise
            if not done:
                undo()
            return done
        for p in self.pools:
            if p.incomplete or p.invalid:
                continue
            for s in p.slices:
                for d in s.devices:
                    dev_id = (p.driver, p.pool, d.name)
                    if request.admin_access:
                        if ci in self.allocating.get(dev_id, set()):
                            continue
                    elif self._in_use(dev_id):
                        continue
                    if not self.a.selectable((ci, ri, si), rd, claim, s, d):
                        continue
                    undo = self._allocate_device(ci, ri, si, rd, s, d, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self.one(ci, ri, si, di + 1, in_sub)
                    except _Stop:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _allocate_device(
        self, ci: int, ri: int, si: int, rd: _ReqData, s: _Slice, d: _Device, must: bool
    ) -> Any:
        """allocateDevice: None when the device cannot be used, else a function that undoes it."""
        request = rd.request
        dev_id = (s.driver, s.pool, d.name)
        if request.admin_access:
            if ci in self.allocating.get(dev_id, set()):
                return None
        elif self._in_use(dev_id):
            return None
        if not self.a.features.partitionable and d.consumes_counters:
            return None
        base = rd.parent or request.name
        sub = request.name if rd.parent else ""
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, s, d):
                if must:
                    raise _AllocError(
                        f"claim {claim_ref(self.claims[ci])}, request {request.name}: cannot add device "
                        f"{s.driver}/{s.pool}/{d.name} because a claim constraint would not be satisfied"
                    )
                for e in range(i):
                    cons[e].remove(base, sub)
                return None
        self.allocating.setdefault(dev_id, set()).add(ci)
        self.results[ci].append(
            _Result(rd.full_name, s.driver, s.pool, d.name, True if request.admin_access else None, s, d)
        )
        before = len(self.results[ci]) - 1

        def undo() -> None:
            for c in cons:
                c.remove(base, sub)
            self.allocating[dev_id].discard(ci)
            del self.results[ci][before:]

        return undo

    def _result(self, ci: int) -> JSON:
        claim = self.claims[ci]
        results: list[JSON] = []
        for r in self.results[ci]:
            entry: JSON = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
            if r.admin_access is not None:
                entry["adminAccess"] = r.admin_access
            results.append(entry)
        config: list[JSON] = []
        seen_classes: dict[str, tuple[int, int]] = {}
        for ri, cr in enumerate(self.requests[ci]):
            rd = self.req.get((ci, ri, self.selected_sub.get((ci, ri), 0)))
            if rd is None or rd.class_raw is None:
                continue
            cname = st.name_of(rd.class_raw)
            if cname in seen_classes:
                a, b = seen_classes[cname]
                for k in range(a, b):
                    config[k]["requests"].append(rd.full_name)
                continue
            start = len(config)
            for c in st.as_list(st.spec(rd.class_raw).get("config"), "DeviceClass", "spec.config"):
                if isinstance(c, dict):
                    config.append(
                        {"source": "FromClass", "requests": [rd.full_name], **{k: v for k, v in c.items()}}
                    )
            seen_classes[cname] = (start, len(config))
            del cr
        devices = st.as_map(st.spec(claim).get("devices"), "ResourceClaim", "spec.devices")
        for c in st.as_list(devices.get("config"), "ResourceClaim", "spec.devices.config"):
            if not isinstance(c, dict):
                continue
            reqs = [
                str(x) for x in st.as_list(c.get("requests"), "ResourceClaim", "spec.devices.config.requests")
            ]
            body = {k: v for k, v in c.items() if k != "requests"}
            if not reqs:
                config.append({"source": "FromClaim", "requests": reqs, **body})
                continue
            for ri, cr in enumerate(self.requests[ci]):
                if cr.name in reqs:
                    config.append({"source": "FromClaim", "requests": reqs, **body})
                    continue
                if not cr.subrequests:
                    continue
                sub = cr.subrequests[self.selected_sub.get((ci, ri), 0)]
                if f"{cr.name}/{sub.name}" in reqs:
                    config.append({"source": "FromClaim", "requests": reqs, **body})
        out: JSON = {"devices": {"results": results}}
        if config:
            out["devices"]["config"] = config
        selector = self._node_selector(ci)
        if selector is not None:
            out["nodeSelector"] = selector
        return out

    def _node_selector(self, ci: int) -> JSON | None:
        """createNodeSelector: the node of a node-local device, else the slices' selectors ANDed."""
        exprs: list[JSON] = []
        fields: list[JSON] = []
        for r in self.results[ci]:
            s, d = r.slice, r.dev
            name = d.node_name if s.per_device else s.node_name
            selector = d.node_selector if s.per_device else s.node_selector
            if name:
                return {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                    ]
                }
            if selector is not None:
                terms = st.as_list(selector.get("nodeSelectorTerms"), "ResourceSlice", "spec.nodeSelector")
                if len(terms) == 1 and isinstance(terms[0], dict):
                    for req in st.as_list(terms[0].get("matchFields"), "ResourceSlice", "matchFields"):
                        if req not in fields:
                            fields.append(req)
                    for req in st.as_list(
                        terms[0].get("matchExpressions"), "ResourceSlice", "matchExpressions"
                    ):
                        if req not in exprs:
                            exprs.append(req)
                elif len(terms) > 1:
                    raise _AllocError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if not exprs and not fields:
            return None
        term: JSON = {}
        if exprs:
            term["matchExpressions"] = exprs
        if fields:
            term["matchFields"] = fields
        return {"nodeSelectorTerms": [term]}
