"""One JSON shape for every error: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler


class ApiError(exceptions.APIException):
    """An error with a stable code and structured details (e.g. upload problems)."""

    status_code: int = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"

    def __init__(
        self, message: str, *, code: str = "invalid", details: Any = None, status_code: int = 400
    ) -> None:
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
    elif isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        exc = ApiError(
            f"the request body is larger than {limit} bytes: upload the manifests as a file",
            code="too_large",
            status_code=413,
        )
    elif isinstance(exc, SuspiciousOperation):  # too many form fields or files: Django's HTML 400 otherwise
        exc = ApiError(str(exc), code="invalid")
    elif isinstance(exc, DjangoValidationError):
        # a value the database layer refused (e.g. a malformed id): bad input, not a server error
        exc = exceptions.ValidationError(exc.messages)
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


@csrf_exempt  # it changes nothing; without this an unsafe method got the CSRF failure page (HTML 403)
def not_found(request: HttpRequest, path: str = "") -> HttpResponse:
    """Unknown URLs under /api/: the error shape, not Django's HTML page.

    A GET without the trailing slash is redirected as APPEND_SLASH would (this catch-all resolves every
    path, so CommonMiddleware no longer does it); other methods are told where the endpoint is.
    """
    message = f"no API endpoint at {request.path}"
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not not_found:
            if request.method in ("GET", "HEAD"):
                query = request.META.get("QUERY_STRING", "")
                return HttpResponsePermanentRedirect(request.path + "/" + (f"?{query}" if query else ""))
            message += f" (the endpoint is {request.path}/, with a trailing slash)"
    return JsonResponse({"error": {"code": "not_found", "message": message, "details": None}}, status=404)
