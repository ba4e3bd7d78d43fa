from django.contrib import admin
from django.urls import include, path, re_path
from rest_framework.routers import DefaultRouter

from schedviz.accounts import urls as accounts_urls
from schedviz.accounts import views as accounts_views
from schedviz.ingestion import urls as ingestion_urls
from schedviz.live import urls as live_urls
from schedviz.plans import urls as plans_urls
from schedviz.replays import urls as replays_urls

from . import health, metrics, views

# /api/v1/: every app's REST routes (<app>/urls.py) on one router: one API root, the same format suffixes
api_v1 = DefaultRouter(trailing_slash=True)
for app in (ingestion_urls, replays_urls, accounts_urls, live_urls, plans_urls):
    for prefix, viewset, basename in app.router.registry:
        api_v1.register(prefix, viewset, basename=basename)

urlpatterns = [
    # every page that checks a password does it under the sign-in throttle (schedviz/accounts/signin_throttle.py):
    # these come before the admin's and django.contrib.auth's own views for the same paths
    path(
        "admin/password_change/",
        admin.site.admin_view(accounts_views.AdminPasswordChangeView.as_view()),
        name="admin_password_change",
    ),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1.urls)),
    path("api/", include("schedviz.api.urls")),  # the schema, its docs, and the JSON 404 for other paths
    path("accounts/login/", accounts_views.SignInView.as_view(), name="login"),
    path("accounts/password_change/", accounts_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("", views.spa, name="home"),
    re_path(r"^(?P<path>(snapshots|replays|live|compare|configurations|plans)(/.*)?)$", views.spa, name="spa"),
]

handler404 = "schedviz.views.not_found"
handler500 = "schedviz.api.middleware.server_error"
