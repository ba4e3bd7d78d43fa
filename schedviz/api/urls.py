from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from . import views
from .errors import not_found

router = DefaultRouter(trailing_slash=True)
router.register("snapshots", views.SnapshotViewSet, basename="snapshot")
router.register("configurations", views.ConfigurationViewSet, basename="configuration")
router.register("replays", views.ReplayViewSet, basename="replay")
router.register("tokens", views.TokenViewSet, basename="token")
router.register("reports", views.ReportViewSet, basename="report")

urlpatterns = [
    path("v1/", include(router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    re_path(r"^(?P<path>.*)$", not_found),
]
