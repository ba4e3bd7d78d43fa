"""The configurations, replays and reports endpoints' routes, mounted under ``/api/v1/`` by the
project's URLs (``schedviz/urls.py``)."""

from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter(trailing_slash=True)
router.register("configurations", views.ConfigurationViewSet, basename="configuration")
router.register("replays", views.ReplayViewSet, basename="replay")
router.register("reports", views.ReportViewSet, basename="report")

urlpatterns = router.urls
