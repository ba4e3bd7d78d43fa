"""Creating snapshots: parse, validate, hash and store — or return the one already stored."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import IntegrityError, transaction

from schedviz.engine.config import load_config, parse_config_text
from schedviz.engine.errors import ConfigError, InputError
from schedviz.outbound import extenders as outbound_extenders

from .models import Snapshot, UploadChunk, pack
from .parsing import Limits, ParsedSnapshot, Problem, UploadError, parse_upload
from .streaming import GZIP_MAGIC, ZSTD_MAGIC, Progress, parse_stream
from .summary import summarize

log = logging.getLogger(__name__)


def validate_config_text(text: str, source: str = "config", extenders: str = "call") -> dict[str, Any]:
    """Parse and validate an uploaded KubeSchedulerConfiguration as the server would run it: valid,
    naming no file, its extenders callable here unless ``extenders`` is "skip" (see
    ``schedviz.outbound.extenders``). Raises ConfigError/InputError. The text's content is kept
    whole: what is skipped is decided again where it runs."""
    raw = parse_config_text(text)
    load_config(raw, name=source)
    if not isinstance(raw, dict):
        raise ConfigError(["expected a KubeSchedulerConfiguration object"], source)
    outbound_extenders.vet(raw, extenders, source)
    return raw


def create_snapshot(
    owner: Any,
    data: bytes,
    filename: str,
    *,
    name: str = "",
    config_text: str | None = None,
    team: Any = None,
    limits: Limits | None = None,
) -> tuple[Snapshot, bool]:
    """Store an upload; returns (snapshot, created). Nothing is stored unless everything is valid."""
    parsed = parse_upload(data, filename, limits or Limits.from_env())
    config = parsed.config
    problems = outbound_extenders.path_problems(config)
    if problems:  # a configuration among the manifests: no file paths either
        raise UploadError.from_messages("KubeSchedulerConfiguration", problems)
    if config_text is not None and config_text.strip():
        try:
            config = validate_config_text(config_text, "config", extenders="skip")
        except (ConfigError, InputError) as exc:
            problems = getattr(exc, "problems", None) or [str(exc)]
            raise UploadError.from_messages("config", problems) from None
    return store_parsed(owner, parsed, name=name or filename, config=config, team=team, size=len(data))


def store_parsed(
    owner: Any,
    parsed: ParsedSnapshot,
    *,
    name: str,
    config: dict[str, Any] | None,
    team: Any = None,
    size: int = 0,
) -> tuple[Snapshot, bool]:
    """Store validated objects (an upload, or a live cluster read), or return the identical snapshot."""
    content_hash = parsed.content_hash if config is parsed.config else _rehash(parsed.content_hash, config)
    existing = (
        Snapshot.objects.filter(owner=owner, content_hash=content_hash, status=Snapshot.Status.READY)
        .defer(*BLOBS)
        .first()
    )
    if existing is not None:
        return _shared(existing, team), False
    summary = summarize(parsed.objects)
    counts = summary.get("counts", {})
    snap = Snapshot(
        owner=owner,
        team=team,
        name=name or "snapshot",
        content_hash=content_hash,
        source_format=parsed.format,
        size_bytes=size,
        node_count=int(counts.get("nodes", 0)),
        pod_count=int(counts.get("pods", 0)),
        pending_count=int(counts.get("pending", 0)),
        kinds=summary.get("kinds", {}),
        ignored=parsed.ignored,
        config=config,
        objects_blob=pack(parsed.objects),
        summary_blob=pack(summary),
    )
    try:
        with transaction.atomic():
            snap.save()
    except IntegrityError:
        # the same upload raced in: one snapshot
        return _shared(
            Snapshot.objects.defer(*BLOBS).get(owner=owner, content_hash=content_hash, status=Snapshot.Status.READY),
            team,
        ), False
    return snap, True


BLOBS = ("objects_blob", "summary_blob")


def _shared(snap: Snapshot, team: Any) -> Snapshot:
    """The stored snapshot, shared with ``team`` when the upload names one (the owner uploads it again)."""
    if team is not None and snap.team_id != team.pk:
        snap.team = team
        snap.save(update_fields=["team"])
    return snap


def _rehash(base: str, config: dict[str, Any] | None) -> str:
    import hashlib
    import json

    h = hashlib.sha256(base.encode())
    h.update(json.dumps(config, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


# ----- uploads of real size: stored as received, read on the worker ----------------------------------
CHUNK_BYTES = 8 * 1024 * 1024
PROGRESS_SECONDS = 0.5  # how often the worker writes its progress to the snapshot's row


def read_inline(head: bytes, tail: bytes, size: int, limits: Limits) -> bool:
    """Whether an upload is small enough to read in the request: at most ``inline_upload_bytes``, not
    zstd, and, when gzip'd, declaring (in its trailer) at most ``inline_decompressed_bytes`` of text.
    The others are stored and read as a stream on the worker (``streaming.parse_stream``)."""
    if size > limits.inline_upload_bytes or head[:4] == ZSTD_MAGIC:
        return False
    if head[:2] == GZIP_MAGIC and len(tail) == 4:
        return int.from_bytes(tail, "little") <= limits.inline_decompressed_bytes
    return True


def start_upload(
    owner: Any,
    chunks: Iterable[bytes],
    filename: str,
    size: int,
    *,
    name: str = "",
    config_text: str | None = None,
    team: Any = None,
    limits: Limits | None = None,
) -> Snapshot:
    """Store an upload as received and have the worker read it (``process_upload``); returns the
    snapshot, ``pending``. Raises UploadError at once for a size over the limit or a bad configuration."""
    limits = limits or Limits.from_env()
    if size > limits.max_upload_bytes:
        raise UploadError(
            [
                Problem(
                    document=filename,
                    message=f"the upload is {size} bytes; the limit is {limits.max_upload_bytes} bytes",
                )
            ]
        )
    config = None
    given = config_text is not None and bool(config_text.strip())
    if given:
        try:
            config = validate_config_text(str(config_text), "config", extenders="skip")
        except (ConfigError, InputError) as exc:
            problems = getattr(exc, "problems", None) or [str(exc)]
            raise UploadError.from_messages("config", problems) from None
    with transaction.atomic():
        snap = Snapshot.objects.create(
            owner=owner,
            team=team,
            name=name or filename or "snapshot",
            content_hash="",
            source_format="",
            size_bytes=size,
            status=Snapshot.Status.PENDING,
            upload_name=filename,
            config=config,
            config_given=given,
            objects_blob=b"",
            summary_blob=b"",
        )
        seq = 0
        buf = bytearray()
        for piece in chunks:
            buf += piece
            while len(buf) >= CHUNK_BYTES:
                UploadChunk.objects.create(snapshot=snap, seq=seq, data=bytes(buf[:CHUNK_BYTES]))
                del buf[:CHUNK_BYTES]
                seq += 1
        if buf:
            UploadChunk.objects.create(snapshot=snap, seq=seq, data=bytes(buf))
        from .tasks import dispatch_upload

        dispatch_upload(snap.pk)
    return snap


def _stored_chunks(snapshot_id: Any) -> Iterator[bytes]:
    """The upload's chunks in order, one row in memory at a time."""
    ids = list(UploadChunk.objects.filter(snapshot_id=snapshot_id).order_by("seq").values_list("pk", flat=True))
    for pk in ids:
        data = UploadChunk.objects.filter(pk=pk).values_list("data", flat=True).first()
        if data is not None:
            yield bytes(data)


def process_upload(snapshot_id: Any, limits: Limits | None = None) -> str:
    """Read a stored upload (the worker's task): the snapshot ends ``ready`` or ``failed``; returns
    its status. Its chunks are deleted either way."""
    limits = limits or Limits.from_env()
    snap = Snapshot.objects.filter(pk=snapshot_id).defer(*BLOBS).first()
    if snap is None or snap.status not in (Snapshot.Status.PENDING, Snapshot.Status.PARSING):
        return "gone" if snap is None else str(snap.status)
    Snapshot.objects.filter(pk=snap.pk).update(status=Snapshot.Status.PARSING, bytes_read=0, objects_parsed=0)
    last = [0.0]

    def report(progress: Progress) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            Snapshot.objects.filter(pk=snap.pk).update(
                bytes_read=progress.bytes_read, objects_parsed=progress.objects
            )

    try:
        streamed = parse_stream(
            _stored_chunks(snap.pk), snap.upload_name, limits, total=snap.size_bytes, on_progress=report
        )
        config = snap.config if snap.config_given else streamed.config
        if not snap.config_given:
            problems = outbound_extenders.path_problems(config)
            if problems:
                raise UploadError.from_messages("KubeSchedulerConfiguration", problems)
    except UploadError as exc:
        _fail(snap, exc.to_dict())
        return str(Snapshot.Status.FAILED)
    except Exception as exc:  # a bug, or the database went away: the snapshot says so
        log.exception("reading upload %s failed", snap.pk)
        _fail(snap, {"message": f"the upload could not be read: {type(exc).__name__}: {exc}", "problems": []})
        return str(Snapshot.Status.FAILED)
    content_hash = streamed.content_hash if config is streamed.config else _rehash(streamed.content_hash, config)
    existing = (
        Snapshot.objects.filter(owner_id=snap.owner_id, content_hash=content_hash, status=Snapshot.Status.READY)
        .exclude(pk=snap.pk)
        .defer(*BLOBS)
        .first()
    )
    if existing is not None:
        _duplicate(snap, existing)
        return str(Snapshot.Status.FAILED)
    counts = streamed.summary_counts
    try:
        with transaction.atomic():
            Snapshot.objects.filter(pk=snap.pk).update(
                status=Snapshot.Status.READY,
                content_hash=content_hash,
                source_format=streamed.format,
                node_count=int(counts.get("nodes", 0)),
                pod_count=int(counts.get("pods", 0)),
                pending_count=int(counts.get("pending", 0)),
                kinds=streamed.kinds,
                ignored=streamed.ignored,
                config=config,
                objects_blob=streamed.objects_blob,
                summary_blob=streamed.summary_blob,
                objects_parsed=sum(streamed.kinds.values()) + sum(streamed.ignored.values()),
                bytes_read=snap.size_bytes,
                error=None,
            )
            UploadChunk.objects.filter(snapshot_id=snap.pk).delete()
    except IntegrityError:  # the same content finished first elsewhere
        existing = Snapshot.objects.filter(
            owner_id=snap.owner_id, content_hash=content_hash, status=Snapshot.Status.READY
        ).first()
        if existing is None:
            raise
        _duplicate(snap, existing)
        return str(Snapshot.Status.FAILED)
    return str(Snapshot.Status.READY)


def _fail(snap: Snapshot, error: dict[str, Any], duplicate_of: Any = None) -> None:
    with transaction.atomic():
        Snapshot.objects.filter(pk=snap.pk).update(
            status=Snapshot.Status.FAILED, error=error, duplicate_of=duplicate_of, objects_blob=b"", summary_blob=b""
        )
        UploadChunk.objects.filter(snapshot_id=snap.pk).delete()


def _duplicate(snap: Snapshot, existing: Snapshot) -> None:
    _fail(
        snap,
        {
            "message": f"the same cluster is already stored as snapshot {existing.name!r} ({existing.pk})",
            "problems": [],
        },
        duplicate_of=existing.pk,
    )


def store_stream(
    owner: Any,
    chunks: Iterable[bytes],
    filename: str,
    *,
    name: str,
    size: int = 0,
    source_format: str = "",
    limits: Limits | None = None,
) -> tuple[Snapshot, bool]:
    """Read manifests as a stream here and now (``import-cluster`` after writing a cluster to a file),
    and store them, or return the identical snapshot; (snapshot, created). Raises UploadError."""
    streamed = parse_stream(chunks, filename, limits or Limits.from_env(), total=size)
    problems = outbound_extenders.path_problems(streamed.config)
    if problems:
        raise UploadError.from_messages("KubeSchedulerConfiguration", problems)
    existing = (
        Snapshot.objects.filter(owner=owner, content_hash=streamed.content_hash, status=Snapshot.Status.READY)
        .defer(*BLOBS)
        .first()
    )
    if existing is not None:
        return existing, False
    counts = streamed.summary_counts
    snap = Snapshot(
        owner=owner,
        name=name or filename,
        content_hash=streamed.content_hash,
        source_format=source_format or streamed.format,
        size_bytes=size,
        node_count=int(counts.get("nodes", 0)),
        pod_count=int(counts.get("pods", 0)),
        pending_count=int(counts.get("pending", 0)),
        kinds=streamed.kinds,
        ignored=streamed.ignored,
        config=streamed.config,
        objects_blob=streamed.objects_blob,
        summary_blob=streamed.summary_blob,
        objects_parsed=sum(streamed.kinds.values()) + sum(streamed.ignored.values()),
        bytes_read=size,
    )
    try:
        with transaction.atomic():
            snap.save()
    except IntegrityError:
        return Snapshot.objects.defer(*BLOBS).get(
            owner=owner, content_hash=streamed.content_hash, status=Snapshot.Status.READY
        ), False
    return snap, True
