"""The live clusters endpoints' routes, mounted under ``/api/v1/`` by the project's URLs (``schedviz/urls.py``)."""

from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter(trailing_slash=True)
router.register("clusters", views.LiveClusterViewSet, basename="cluster")

urlpatterns = router.urls
