"""Creating snapshots: parse, validate, hash and store — or return the one already stored."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from schedviz.engine.config import load_config, parse_config_text
from schedviz.engine.errors import ConfigError, InputError
from schedviz.outbound import extenders as outbound_extenders

from .models import Snapshot, pack
from .parsing import Limits, ParsedSnapshot, UploadError, parse_upload
from .summary import summarize


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
    existing = Snapshot.objects.filter(owner=owner, content_hash=content_hash).defer(*BLOBS).first()
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
            Snapshot.objects.defer(*BLOBS).get(owner=owner, content_hash=content_hash), team
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
