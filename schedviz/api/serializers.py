"""The one error shape every API answer uses (``errors.py``), for the OpenAPI schema."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

J = serializers.JSONField


class ErrorBodySerializer(serializers.Serializer[Any]):
    code = serializers.CharField(
        help_text="Stable machine-readable code, e.g. invalid, not_found, invalid_upload"
    )
    message = serializers.CharField(help_text="What went wrong, for people")
    details = J(
        allow_null=True, help_text="Structured details: field errors ({field: [problems]}) or problems"
    )


class ErrorSerializer(serializers.Serializer[Any]):
    """Every error answer: ``{"error": {"code", "message", "details"}}``."""

    error = ErrorBodySerializer()


class OptionalText(serializers.CharField):
    """A text column stored as "" when there is nothing to say, answered as ``null`` (one
    representation of "none" across listings, details, streams and reports)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str | None:  # type: ignore[override]
        return None if value in ("", None) else str(value)
