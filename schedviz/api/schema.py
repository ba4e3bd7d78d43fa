"""OpenAPI: the token scheme, and the error answers every operation documents.

Every operation lists, besides its own answers, the errors it can give in the one error shape
(``ErrorSerializer``): 401 always (every endpoint needs authentication), 429 always (every request
is throttled), 503 always (the database cannot be reached), 404 when the path names an object or a paginated list's page is past the end, 400 when the operation takes a body or query
parameters, 415 when it takes a body. Endpoint-specific errors (403, 409, 422) are declared on the apps' views with ``extend_schema``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

from .serializers import ErrorSerializer

GENERIC_ERRORS = {
    "400": "Bad input: malformed body, a wrong type, or an invalid query parameter. "
    "`details` names the fields and their problems.",
    "401": "Not authenticated: no credentials, or an invalid, expired or revoked token.",
    "404": "No such object among those you may read (another user's ids answer 404 too).",
    "429": "Throttled: the `Retry-After` header says after how many seconds to try again.",
    "503": "The database is briefly unavailable (`unavailable`); `Retry-After` says when to try again.",
    "404-page": "`page` is past the last page.",
    "415": "The body's media type is not one this operation reads (see its request body's content types).",
}


# the query of a cycle's node page, a replay's or a live cluster's (schedviz/cycles/pages.py)
NODE_PAGE_PARAMETERS = [
    OpenApiParameter("page", int),
    OpenApiParameter("page_size", int),
    OpenApiParameter("sort", str, enum=["rank", "name", "verdict"]),
    OpenApiParameter("verdict", str, enum=["passed", "failed", "not-evaluated"]),
    OpenApiParameter("plugin", str, description="Only nodes rejected by this filter plugin"),
    OpenApiParameter("search", str, description="Node name contains (case-insensitive)"),
]


def error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=description)


# errors several apps' endpoints document
FORBIDDEN = error("You can read this object (it is shared with your team) but only its owner can change it.")
THROTTLED_UPLOAD = error(
    "Too many uploads (the `uploads` throttle scope); `Retry-After` says when to try again."
)


class SchedVizAutoSchema(AutoSchema):
    """drf-spectacular's schema plus the generic error answers."""

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        codes = ["401", "429", "503"]
        if "{" in self.path:
            codes.append("404")
        elif self._is_paginated_list():
            codes.append("404-page")
        takes_body = self.method in ("POST", "PUT", "PATCH") and self.get_request_serializer() is not None
        if takes_body or self._has_query_parameters():
            codes.append("400")
        if takes_body:
            codes.append("415")
        for key in codes:
            code = key.partition("-")[0]
            if code not in responses:
                responses[code] = self._get_response_for_code(  # type: ignore[no-untyped-call]
                    error(GENERIC_ERRORS[key]), code, direction=direction
                )
        return dict(sorted(responses.items()))

    def _is_paginated_list(self) -> bool:
        return bool(self._is_list_view() and self._get_paginator() is not None)  # type: ignore[no-untyped-call]

    def _has_query_parameters(self) -> bool:
        if self._is_paginated_list():
            return True
        return any(p.get("in") == "query" for p in self._get_parameters())


class ApiTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "schedviz.accounts.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "An API token (POST /api/v1/tokens/), sent as `Authorization: Token <token>` "
            "(`Bearer <token>` is accepted too).",
        }
