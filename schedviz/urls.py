from django.contrib import admin
from django.urls import include, path, re_path

from . import health, views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("schedviz.api.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("healthz", health.healthz, name="healthz"),
    path("", views.spa, name="home"),
    re_path(r"^(?P<path>(snapshots|replays|live|compare|configurations)(/.*)?)$", views.spa, name="spa"),
]

handler500 = "schedviz.api.middleware.server_error"
