"""One JSON shape for every error: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler


class ApiError(exceptions.APIException):
    """An error with a stable code and structured details (e.g. upload problems)."""

    status_code: int = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"

    def __init__(self, message: str, *, code: str = "invalid", details: Any = None, status_code: int = 400) -> None:
        super().__init__(detail=message, code=code)
        self.code = code
        self.details = details
        self.status_code = status_code


def _codes(exc: exceptions.APIException) -> str:
    if isinstance(exc, exceptions.ValidationError):
        return "invalid"
    if isinstance(exc, exceptions.NotAuthenticated):
        return "not_authenticated"
    if isinstance(exc, exceptions.AuthenticationFailed):
        return "authentication_failed"
    if isinstance(exc, exceptions.NotFound):
        return "not_found"
    if isinstance(exc, exceptions.Throttled):
        return "throttled"
    if isinstance(exc, exceptions.MethodNotAllowed):
        return "method_not_allowed"
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return "unsupported_media_type"
    if isinstance(exc, exceptions.ParseError):
        return "parse_error"
    return str(getattr(exc, "default_code", "error"))


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ApiError):
        body = {"error": {"code": exc.code, "message": str(exc.detail), "details": exc.details}}
    elif isinstance(exc, exceptions.ValidationError):
        body = {"error": {"code": "invalid", "message": "invalid request", "details": response.data}}
    elif isinstance(exc, exceptions.APIException):
        detail = response.data.get("detail", str(exc)) if isinstance(response.data, dict) else str(exc)
        body = {"error": {"code": _codes(exc), "message": str(detail), "details": None}}
    else:
        body = {"error": {"code": "error", "message": str(exc), "details": None}}
    response.data = body
    return response
