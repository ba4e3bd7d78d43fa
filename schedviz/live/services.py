"""Live clusters: adding and changing them, storing their timeline, "snapshot now". Views, the
worker and the management commands call these; the watching itself is in runtime.py (no Django)."""

from __future__ import annotations

import hashlib
import json
import logging
import time
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, OperationalError, transaction
from django.db.models import F
from django.utils import timezone

from schedviz.engine.config import parse_config_text
from schedviz.engine.errors import ConfigError, InputError
from schedviz.engine.trace import SCHEDULING
from schedviz.ingestion.models import pack
from schedviz.ingestion.parsing import UploadError, parse_objects
from schedviz.ingestion.services import store_parsed
from schedviz.kube import kubeconfig
from schedviz.kube.kubeconfig import KubeconfigError, Source
from schedviz.outbound import extenders as outbound_extenders

from . import crypto, schedconfig
from .divergence import MATCH, SKIPPED, TIE, Outcome
from .models import LiveCluster, LiveCycle, LiveNodeSet, LiveSnapshotRequest

log = logging.getLogger(__name__)


class LiveError(Exception):
    """A refused request: ``field`` names what is wrong, ``code`` and ``status`` tell the API."""

    def __init__(
        self, message: str, *, field: str = "", code: str = "invalid", status: int = 400, details: Any = None
    ) -> None:
        super().__init__(message)
        self.field = field
        self.code = code
        self.status = status
        self.details = details


def _from_kubeconfig_error(exc: KubeconfigError) -> LiveError:
    status = 400
    return LiveError(str(exc), field=exc.field, code=exc.code, status=status)


def _config_problems(exc: ConfigError | InputError) -> LiveError:
    problems = getattr(exc, "problems", None) or [str(exc)]
    return LiveError(
        "invalid KubeSchedulerConfiguration",
        field="config",
        code="invalid_config",
        details={"problems": problems},
    )


@dataclass
class Credentials:
    """What a create or update request says about how to reach the cluster."""

    source: str
    kubeconfig: str | bytes | None = None
    context: str = ""
    path: str = ""


def _prepare_source(cred: Credentials) -> tuple[Source, dict[str, Any]]:
    """The Source and the fields to store (credentials encrypted); raises LiveError."""
    try:
        if cred.source == LiveCluster.Source.KUBECONFIG:
            if not cred.kubeconfig:
                raise LiveError(
                    "kubeconfig: required for source kubeconfig (the file, or its text)", field="kubeconfig"
                )
            minimal, ctx = kubeconfig.select(kubeconfig.parse(cred.kubeconfig), cred.context or None)
            src = Source("kubeconfig", minimal, context=ctx)
            fields: dict[str, Any] = {
                "context": ctx,
                "path": "",
                "server": kubeconfig.server_of(minimal),
                "credential_kind": kubeconfig.credential_kind(minimal),
                "credentials": crypto.encrypt(json.dumps(minimal).encode()),
            }
        elif cred.source == LiveCluster.Source.PATH:
            if not cred.path:
                raise LiveError("path: required for source path", field="path")
            p = kubeconfig.check_path(cred.path)
            try:
                cfg = kubeconfig.parse(p.read_bytes())
                minimal, ctx = _select_trusted(cfg, cred.context or None)
            except OSError as exc:
                raise LiveError(f"path: {cred.path}: {exc.strerror or exc}", field="path") from None
            src = Source("path", path=str(p), context=ctx)
            fields = {
                "context": ctx,
                "path": str(p),
                "server": kubeconfig.server_of(minimal),
                "credential_kind": kubeconfig.credential_kind(minimal),
                "credentials": None,
            }
        elif cred.source == LiveCluster.Source.IN_CLUSTER:
            if not kubeconfig.in_cluster_available():
                raise LiveError(
                    "source: SchedViz is not running inside Kubernetes (KUBERNETES_SERVICE_HOST is not set); "
                    "upload a kubeconfig instead",
                    field="source",
                )
            src = Source("in-cluster")
            fields = {
                "context": "",
                "path": "",
                "server": "in-cluster",
                "credential_kind": "service-account",
                "credentials": None,
            }
        else:
            raise LiveError(f"source: one of {', '.join(LiveCluster.Source.values)}", field="source")
    except KubeconfigError as exc:
        raise _from_kubeconfig_error(exc) from None
    except crypto.EncryptionKeyError as exc:
        raise LiveError(str(exc), field="kubeconfig", code="encryption_key", status=503) from None
    return src, fields


def _select_trusted(cfg: dict[str, Any], context: str | None) -> tuple[dict[str, Any], str]:
    """Like kubeconfig.select, for the operator's own file: exec plugins and file paths allowed."""
    ctxs = {c.get("name"): c for c in cfg.get("contexts") or [] if isinstance(c, dict)}
    name = context or str(cfg.get("current-context") or "")
    if name not in ctxs:
        raise KubeconfigError(
            f"context: no context {name!r} in the kubeconfig (contexts: {', '.join(map(str, ctxs)) or 'none'})",
            "context",
        )
    cluster_name = (ctxs[name].get("context") or {}).get("cluster")
    cluster = next(
        (
            c.get("cluster") or {}
            for c in cfg.get("clusters") or []
            if isinstance(c, dict) and c.get("name") == cluster_name
        ),
        {},
    )
    user_name = (ctxs[name].get("context") or {}).get("user")
    user = next(
        (
            u.get("user") or {}
            for u in cfg.get("users") or []
            if isinstance(u, dict) and u.get("name") == user_name
        ),
        {},
    )
    return {
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": [{"name": user_name, "user": user}],
    }, name


def _prepare_config(
    config_source: str, config_text: str, config_map: str, config_map_key: str
) -> dict[str, Any]:
    """The configuration fields to store; an uploaded configuration is validated (LiveError)."""
    if config_source == LiveCluster.ConfigSource.DEFAULT:
        return {
            "config_source": config_source,
            "config_text": "",
            "config": None,
            "config_map": "",
            "config_map_key": "",
            "config_notes": schedconfig.build(None).notes(),
        }
    if config_source == LiveCluster.ConfigSource.UPLOADED:
        if not config_text.strip():
            raise LiveError("config: required for config_source uploaded", field="config")
        try:
            outbound_extenders.check_paths(parse_config_text(config_text), "uploaded")
            lc = schedconfig.from_text(config_text, "uploaded")
        except (ConfigError, InputError) as exc:
            raise _config_problems(exc) from None
        return {
            "config_source": config_source,
            "config_text": config_text,
            "config": lc.raw,
            "config_map": "",
            "config_map_key": "",
            "config_notes": lc.notes(),
        }
    if config_source == LiveCluster.ConfigSource.CONFIGMAP:
        ns, _, name = config_map.partition("/")
        if not ns or not name or "/" in name:
            raise LiveError(f"config_map: expected namespace/name, got {config_map!r}", field="config_map")
        return {
            "config_source": config_source,
            "config_text": "",
            "config": None,
            "config_map": config_map,
            "config_map_key": config_map_key,
            "config_notes": {"source": "configmap", "configMap": config_map},
        }
    raise LiveError(
        f"config_source: one of {', '.join(LiveCluster.ConfigSource.values)}", field="config_source"
    )


def _verify(src: Source, config_fields: dict[str, Any]) -> dict[str, Any]:
    """Reach the cluster (and read its ConfigMap); the connection facts, or a LiveError saying why not."""
    try:
        api_client = src.client()
    except KubeconfigError as exc:
        raise _from_kubeconfig_error(exc) from None
    try:
        info = kubeconfig.check_connection(api_client)
        if config_fields["config_source"] == LiveCluster.ConfigSource.CONFIGMAP:
            try:
                lc = schedconfig.from_config_map(
                    api_client, config_fields["config_map"], config_fields["config_map_key"]
                )
            except (ConfigError, InputError) as exc:
                raise _config_problems(exc) from None
            config_fields.update(config=lc.raw, config_map_key=lc.key, config_notes=lc.notes())
        return info
    except KubeconfigError as exc:
        raise _from_kubeconfig_error(exc) from None
    finally:
        api_client.close()


def create_cluster(
    owner: Any,
    *,
    name: str,
    credentials: Credentials,
    config_source: str = "default",
    config_text: str = "",
    config_map: str = "",
    config_map_key: str = "",
    all_nodes: bool = True,
    team: Any = None,
    verify: bool = True,
    enabled: bool = True,
) -> LiveCluster:
    """Add a cluster to watch; nothing is stored unless everything checks out."""
    src, fields = _prepare_source(credentials)
    cfg_fields = _prepare_config(config_source, config_text, config_map, config_map_key)
    if verify:
        _verify(src, cfg_fields)
    return LiveCluster.objects.create(
        owner=owner,
        team=team,
        name=name or fields["server"] or "cluster",
        source=credentials.source,
        all_nodes=all_nodes,
        enabled=enabled,
        **fields,
        **cfg_fields,
    )


def update_cluster(cluster: LiveCluster, changes: dict[str, Any], *, verify: bool = True) -> LiveCluster:
    """Change a cluster: name, team, enabled, all_nodes, its credentials or its configuration.

    The worker restarts its watch when credentials, configuration or all_nodes change.
    """
    restart = False
    fields: dict[str, Any] = {}
    cred = changes.get("credentials")
    src: Source | None = None
    if cred is not None:
        src, cred_fields = _prepare_source(cred)
        fields.update(cred_fields, source=cred.source)
        if cred_fields["server"] != cluster.server:
            fields.update(checkpoint_blob=None, checkpoint_at=None)  # maybe another cluster: start afresh
        restart = True
    if "config_source" in changes:
        cfg_fields = _prepare_config(
            changes["config_source"],
            changes.get("config_text", ""),
            changes.get("config_map", ""),
            changes.get("config_map_key", ""),
        )
        fields.update(cfg_fields)
        restart = True
    if verify and (cred is not None or fields.get("config_source") == LiveCluster.ConfigSource.CONFIGMAP):
        if src is None:
            src = source_of(cluster)
        _verify(src, fields if "config_source" in fields else {"config_source": ""})
    for simple in ("name", "team", "enabled"):
        if simple in changes:
            fields[simple] = changes[simple]
    if "all_nodes" in changes and bool(changes["all_nodes"]) != cluster.all_nodes:
        fields["all_nodes"] = bool(changes["all_nodes"])
        restart = True
    for k, v in fields.items():
        setattr(cluster, k, v)
    if restart:
        cluster.settings_version += 1
    if fields.get("enabled") is False:
        cluster.status, cluster.status_message = "stopped", "disabled"
    cluster.save()
    return cluster


def source_of(cluster: LiveCluster) -> Source:
    """How to reach the cluster (decrypting its credentials)."""
    if cluster.source == LiveCluster.Source.KUBECONFIG:
        if not cluster.credentials:
            raise KubeconfigError("the cluster has no stored credentials")
        minimal = json.loads(crypto.decrypt(bytes(cluster.credentials)))
        return Source("kubeconfig", minimal, context=cluster.context or None)
    if cluster.source == LiveCluster.Source.PATH:
        return Source("path", path=cluster.path, context=cluster.context or None)
    return Source("in-cluster")


def config_loader(cluster: LiveCluster) -> Any:
    """What the watcher calls (with its API client) to get the scheduler configuration."""
    source, raw, ref, key = cluster.config_source, cluster.config, cluster.config_map, cluster.config_map_key

    def load(api_client: Any) -> schedconfig.LiveConfig:
        if source == LiveCluster.ConfigSource.CONFIGMAP:
            return schedconfig.from_config_map(api_client, ref, key)
        if source == LiveCluster.ConfigSource.UPLOADED and raw is not None:
            return schedconfig.build(raw, "uploaded")
        return schedconfig.build(None)

    return load


def check_connection(cluster: LiveCluster) -> dict[str, Any]:
    """Reach the cluster now with its stored credentials (a LiveError says why not)."""
    try:
        src = source_of(cluster)
    except KubeconfigError as exc:
        raise _from_kubeconfig_error(exc) from None
    except crypto.EncryptionKeyError as exc:
        raise LiveError(str(exc), code="encryption_key", status=503) from None
    return _verify(src, {"config_source": ""})


def kubeconfig_contexts(text: str | bytes) -> dict[str, Any]:
    """The contexts of an uploaded kubeconfig (to choose one), nothing stored; and for each, whether
    it can be used (an exec plugin or a file reference is refused)."""
    try:
        cfg = kubeconfig.parse(text)
        listing = kubeconfig.contexts(cfg)
    except KubeconfigError as exc:
        raise _from_kubeconfig_error(exc) from None
    for ctx in listing["contexts"]:
        try:
            kubeconfig.select(cfg, ctx["name"])
            ctx["usable"], ctx["problem"] = True, None
        except KubeconfigError as exc:
            ctx["usable"], ctx["problem"] = False, str(exc)
    return listing


def rotate_credentials() -> int:
    """Re-encrypt every stored credential with the first key of SCHEDVIZ_ENCRYPTION_KEY."""
    n = 0
    for cluster in LiveCluster.objects.exclude(credentials=None).only("pk", "credentials"):
        if not cluster.credentials:
            continue
        token = crypto.rotate(bytes(cluster.credentials))
        LiveCluster.objects.filter(pk=cluster.pk).update(credentials=token)
        n += 1
    return n


# ----- the timeline --------------------------------------------------------------------------------
def _dt(ts: float | None) -> datetime | None:
    return datetime.fromtimestamp(ts, tz=UTC) if ts else None


def _nodeset(cluster_id: Any, names: list[str]) -> LiveNodeSet:
    digest = hashlib.sha256("\n".join(names).encode()).hexdigest()
    existing = LiveNodeSet.objects.filter(cluster_id=cluster_id, digest=digest).only("pk").first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return LiveNodeSet.objects.create(
                cluster_id=cluster_id, digest=digest, count=len(names), names_blob=pack(names)
            )
    except IntegrityError:
        return LiveNodeSet.objects.get(cluster_id=cluster_id, digest=digest)


def _timings(rec: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in rec.stages:
        key = f"{s.point}/{s.plugin}"
        out[key] = out.get(key, 0) + s.duration_micros
    return out


def _plain(value: Any) -> Any:
    """What json cannot encode by itself in an explanation: numpy numbers and arrays, sets."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def pack_explanation(explanation: dict[str, Any], seq: int) -> bytes:
    """The explanation as stored with its cycle (compressed JSON, as ``pack``), numbered as the cycle."""
    value = {**explanation, "seq": seq}
    return zlib.compress(json.dumps(value, separators=(",", ":"), default=_plain).encode(), 6)


def store_outcome(cluster_id: Any, outcome: Outcome) -> LiveCycle | None:
    """Append an outcome to the cluster's timeline; None when that decision is stored already."""
    from schedviz.cycles.codec import encode_cycle

    t = outcome.trigger
    rep = outcome.replayed
    rec = rep.record
    with transaction.atomic():
        cluster = (
            LiveCluster.objects.select_for_update()
            .only("pk", "last_seq", "divergence_codes")
            .get(pk=cluster_id)
        )
        if LiveCycle.objects.filter(cluster_id=cluster_id, dedup=t.dedup).exists():
            return None
        seq = cluster.last_seq + 1
        row = LiveCycle(
            cluster_id=cluster_id,
            seq=seq,
            dedup=t.dedup[:400],
            pod=t.pod,
            namespace=t.pod.partition("/")[0],
            pod_uid=t.pod_uid[:64],
            trigger=t.kind,
            trigger_source=t.source,
            observed=_dt(t.observed) or timezone.now(),
            occurred=_dt(t.occurred),
            resource_version=t.rv[:64],
            actual_result="Scheduled" if t.kind == "bound" else "Unschedulable",
            actual_node=t.node or "",
            actual_message=t.message or "",
            actual_scheduler=t.scheduler,
            agreement=outcome.agreement,
            divergence=outcome.divergence,
            explanations=outcome.explanations,
            notes=outcome.notes,
            exact=outcome.exact,
            gap=t.gap,
            error=rep.error,
            duration_micros=int(outcome.duration * 1e6),
        )
        if rec is not None:
            rec.seq = seq
            rec.kind = SCHEDULING
            winner = None
            if rec.selected_node is not None and rec.totals is not None and rec.scored and len(rec.totals):
                winner = int(rec.totals.max())
            row.profile = rec.profile
            row.result = rec.result
            row.node = rec.selected_node or ""
            row.message = rec.message or rec.error or ""
            row.nominated_node = rec.nominated_node or ""
            row.feasible_count = 0 if rec.feasible is None else len(rec.feasible)
            row.evaluated_count = 0 if rec.evaluation_order is None else len(rec.evaluation_order)
            row.tied_count = 0 if rec.tied is None else len(rec.tied)
            row.winner_total = winner
            row.timings = _timings(rec)
            row.nodeset = _nodeset(cluster_id, rep.node_names)
            row.payload = encode_cycle(rec, rep.reasons)
            row.explanation_error = rep.explanation_error
            if rep.explanation is not None:
                try:
                    row.explanation = pack_explanation(rep.explanation, seq)
                except (TypeError, ValueError) as exc:  # the cycle is stored all the same
                    row.explanation_error = f"the explanation could not be stored: {exc}"[:500]
        row.save()
        codes = dict(cluster.divergence_codes or {})
        if outcome.agreement not in (MATCH, SKIPPED) and outcome.divergence:
            codes[outcome.divergence] = codes.get(outcome.divergence, 0) + 1
        LiveCluster.objects.filter(pk=cluster_id).update(
            last_seq=seq,
            cycles_count=F("cycles_count") + 1,
            matches=F("matches") + (1 if outcome.agreement == MATCH else 0),
            ties=F("ties") + (1 if outcome.agreement == TIE else 0),
            divergences=F("divergences") + (1 if outcome.agreement not in (MATCH, TIE, SKIPPED) else 0),
            skipped=F("skipped") + (1 if outcome.agreement == SKIPPED else 0),
            divergence_codes=codes,
            last_cycle_at=timezone.now(),
        )
    transaction.on_commit(lambda: publish(cluster_id, {"type": "cluster.progress", "seq": seq}))
    return row


def publish(cluster_id: Any, message: dict[str, Any]) -> None:
    """A wake-up for the cluster's websockets (best effort: they also poll the database)."""
    from schedviz.streaming.publish import send

    send(group(cluster_id), message)


def group(cluster_id: Any) -> str:
    return f"cluster-{cluster_id}"


def summary(cluster: LiveCluster) -> dict[str, Any]:
    return {
        "cycles": cluster.cycles_count,
        "match": cluster.matches,
        "tie": cluster.ties,
        "diverged": cluster.divergences,
        "skipped": cluster.skipped,
        "byCode": dict(sorted((cluster.divergence_codes or {}).items())),
        "lastCycleAt": cluster.last_cycle_at,
    }


def cycle_detail(row: LiveCycle) -> dict[str, Any]:
    """The live comparison of a stored cycle (what the API adds to the cycle's page)."""
    return {
        "seq": row.seq,
        "pod": row.pod,
        "trigger": row.trigger,
        "triggerSource": row.trigger_source,
        "observed": row.observed,
        "occurred": row.occurred,
        "resourceVersion": row.resource_version or None,
        "actual": {
            "result": row.actual_result,
            "node": row.actual_node or None,
            "message": row.actual_message or None,
            "scheduler": row.actual_scheduler or None,
        },
        "replay": {
            "result": row.result or None,
            "node": row.node or None,
            "message": row.message or None,
            "tiedCount": row.tied_count,
        },
        "agreement": row.agreement,
        "divergence": row.divergence or None,
        "explanations": row.explanations,
        "notes": row.notes,
        "exact": row.exact,
        "gap": row.gap,
        "error": row.error or None,
    }


def cycle_explanation(row: LiveCycle, stored: dict[str, Any], nodes: list[str]) -> dict[str, Any]:
    """A replayed cycle's stored explanation (as the replay API's explain answers), with each node of
    ``nodes`` it does not compare yet compared from the stored cycle: against the winner, the node's
    weighted scores plugin by plugin when it was feasible, else how it was rejected and the fixes
    the explanation found for it. LiveError (400, ``node``) for a node the cycle does not have."""
    from schedviz.engine.explain import Comparison, compare_scores, recorded_verdict, stored_node_story

    names = row.node_names()
    index = {n: i for i, n in enumerate(names)}
    for n in nodes:
        if n not in index:
            raise LiveError(f"node: no node {n[:253]!r} in cycle {row.seq}", field="node")
    out = dict(stored)
    compared: list[dict[str, Any]] = list(out.get("compared") or [])
    winner = (out.get("winner") or {}).get("node")
    done = {c.get("node") for c in compared} | {winner}
    wanted = [n for n in dict.fromkeys(nodes) if n not in done]
    if not wanted:
        return out
    rec, reasons = row.decoded()
    feasible = set() if rec.feasible is None else {int(i) for i in rec.feasible.tolist()}
    against = index.get(winner) if winner else None
    notes = list(out.get("notes") or [])
    if winner and against not in feasible and rec.selected_node in index:
        # node sampling: the explanation's winner (every node scored) was not scored in the cycle
        against = index[rec.selected_node]
        notes.append(
            f"{winner} was not evaluated in the cycle (node sampling): the nodes asked for are compared "
            f"with the cycle's selected node {rec.selected_node}"
        )
    for n in wanted:
        i = index[n]
        if i in feasible:
            if against is not None and against in feasible and against != i:
                comp = compare_scores(rec, names, against, i)
            else:
                comp = Comparison(n, True, total=rec.node_total(i))
        else:
            verdict = recorded_verdict(rec, reasons, i)
            if verdict is None:
                notes.append(
                    f"{n} was not evaluated in the cycle (node sampling, or a nominated node passed)"
                )
            comp = Comparison(n, False, rejected=verdict, fixes=stored_node_story(out.get("fixes") or [], n))
        compared.append(comp.to_dict())
    out["compared"] = compared
    out["notes"] = notes
    return out


# ----- snapshot now --------------------------------------------------------------------------------
def request_snapshot(cluster: LiveCluster, user: Any, name: str = "") -> LiveSnapshotRequest:
    cluster.refresh_from_db(fields=["worker", "lease_expires", "enabled", "status"])
    if not cluster.enabled or not cluster.worker_alive:
        raise LiveError(
            "no worker is watching this cluster (enable it and run `manage.py watch_clusters`): "
            "there is no mirrored state to freeze",
            code="not_watching",
            status=409,
        )
    for attempt in range(_BUSY_RETRIES):
        try:
            return LiveSnapshotRequest.objects.create(cluster=cluster, requested_by=user, name=name)
        except OperationalError as exc:
            if not _busy(exc) or attempt == _BUSY_RETRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


# SQLite while the worker writes (the embedded default runs it in the web process): a write that meets
# the worker's transaction is tried again, a read polled again, instead of failing the request
_BUSY_RETRIES = 8


def _busy(exc: OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def wait_snapshot(req: LiveSnapshotRequest, timeout: float) -> LiveSnapshotRequest:
    deadline = time.monotonic() + max(0.0, timeout)
    while req.status == LiveSnapshotRequest.Status.PENDING and time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            req.refresh_from_db()
        except OperationalError as exc:
            if not _busy(exc):
                raise
    return req


def fulfil_snapshot(
    req: LiveSnapshotRequest, objects: list[dict[str, Any]], config: dict[str, Any] | None
) -> None:
    """Freeze ``objects`` (the mirrored state) into a snapshot for the requester (the worker calls it)."""
    cluster = req.cluster
    name = req.name or f"{cluster.name} at {timezone.now():%Y-%m-%d %H:%M:%S}Z"
    try:
        parsed = parse_objects(objects, source=cluster.name)
        snap, _ = store_parsed(req.requested_by, parsed, name=name, config=config, team=cluster.team)
    except UploadError as exc:
        req.status, req.error = (
            LiveSnapshotRequest.Status.FAILED,
            f"the mirrored state is not a valid snapshot: {exc}",
        )
    except OperationalError:
        raise  # the database was busy: the worker tries again
    except Exception as exc:
        log.exception("snapshot of %s failed", cluster.pk)
        req.status, req.error = (
            LiveSnapshotRequest.Status.FAILED,
            f"internal error: {type(exc).__name__}: {exc}",
        )
    else:
        req.status, req.snapshot = LiveSnapshotRequest.Status.DONE, snap
    req.finished = timezone.now()
    req.save(update_fields=["status", "snapshot", "error", "finished"])
