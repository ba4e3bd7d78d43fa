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
