"""The snapshots endpoints' routes, mounted under ``/api/v1/`` by the project's URLs (``schedviz/urls.py``)."""

from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter(trailing_slash=True)
router.register("snapshots", views.SnapshotViewSet, basename="snapshot")

urlpatterns = router.urls
