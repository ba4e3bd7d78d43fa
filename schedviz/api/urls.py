from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from schedviz.live import views as live_views

from . import views
from .errors import not_found

router = DefaultRouter(trailing_slash=True)
router.register("snapshots", views.SnapshotViewSet, basename="snapshot")
router.register("configurations", views.ConfigurationViewSet, basename="configuration")
router.register("replays", views.ReplayViewSet, basename="replay")
router.register("tokens", views.TokenViewSet, basename="token")
router.register("reports", views.ReportViewSet, basename="report")
router.register("clusters", live_views.LiveClusterViewSet, basename="cluster")

urlpatterns = [
    path("v1/", include(router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # the split view serves its start-up script from a URL: no inline script (Content-Security-Policy)
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    re_path(r"^(?P<path>[\s\S]*)$", not_found),  # any path, newlines included: the JSON 404
]
