from django.contrib import admin
from django.urls import include, path

from . import health

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("schedviz.api.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("healthz", health.healthz, name="healthz"),
]
