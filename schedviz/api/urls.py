"""The API's own pages under ``/api/``: the OpenAPI schema, its docs, and the JSON 404 for any other path.

The endpoints (``/api/v1/``) are the apps' own (``<app>/urls.py``), mounted by ``schedviz/urls.py``.
"""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from .errors import not_found

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # the split view serves its start-up script from a URL: no inline script (Content-Security-Policy)
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    re_path(r"^(?P<path>[\s\S]*)$", not_found),  # any path, newlines included: the JSON 404
]
