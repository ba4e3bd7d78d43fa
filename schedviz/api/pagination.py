from __future__ import annotations

from typing import Any

from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request

from .errors import ApiError


def _positive_int(request: Request, name: str) -> int | None:
    """The query parameter ``name`` as a positive integer (None when absent); 400 naming it otherwise."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        problem = "must be a positive integer"
        raise ApiError(f"{name}: {problem}, got {raw[:40]!r}", code="invalid", details={name: [problem]})
    return value


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 1000
    invalid_page_message = "page: {message} (page {page_number})"

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> list[Any] | None:
        if request.query_params.get(self.page_query_param) not in self.last_page_strings:
            _positive_int(request, self.page_query_param)  # not a number: 400; past the end: 404 (DRF)
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request: Request) -> int:
        size = _positive_int(request, self.page_size_query_param)
        if size is None:
            return self.page_size
        return min(size, self.max_page_size)
