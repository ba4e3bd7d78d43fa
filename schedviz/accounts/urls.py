"""The API tokens endpoints' routes, mounted under ``/api/v1/`` by the project's URLs
(``schedviz/urls.py``, which also routes the sign-in pages)."""

from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter(trailing_slash=True)
router.register("tokens", views.TokenViewSet, basename="token")

urlpatterns = router.urls
