"""The plans endpoint's routes, mounted under ``/api/v1/`` by the project's URLs."""

from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter(trailing_slash=True)
router.register("plans", views.PlanViewSet, basename="plan")

urlpatterns = router.urls
