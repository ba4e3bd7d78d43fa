from django.contrib import admin
from django.urls import include, path, re_path

from schedviz.accounts import views as accounts_views

from . import health, metrics, views

urlpatterns = [
    # every page that checks a password does it under the sign-in throttle (schedviz/accounts/signin_throttle.py):
    # these come before the admin's and django.contrib.auth's own views for the same paths
    path(
        "admin/password_change/",
        admin.site.admin_view(accounts_views.AdminPasswordChangeView.as_view()),
        name="admin_password_change",
    ),
    path("admin/", admin.site.urls),
    path("api/", include("schedviz.api.urls")),
    path("accounts/login/", accounts_views.SignInView.as_view(), name="login"),
    path("accounts/password_change/", accounts_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("", views.spa, name="home"),
    re_path(r"^(?P<path>(snapshots|replays|live|compare|configurations)(/.*)?)$", views.spa, name="spa"),
]

handler500 = "schedviz.api.middleware.server_error"
