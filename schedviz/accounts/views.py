"""Sign-in and password-change views whose password checks are throttled (``signin_throttle``)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import reverse_lazy

from .forms import AdminThrottledPasswordChangeForm, SignInForm, ThrottledPasswordChangeForm


class SignInView(auth_views.LoginView):
    """``/accounts/login/``: the form says when sign-in is paused (the middleware makes it a 429)."""

    authentication_form = SignInForm


class PasswordChangeView(auth_views.PasswordChangeView):
    """``/accounts/password_change/``: the old password is checked under the sign-in throttle."""

    form_class: type[ThrottledPasswordChangeForm | AdminThrottledPasswordChangeForm] = (
        ThrottledPasswordChangeForm
    )

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs = super().get_form_kwargs()
        kwargs["request"] = self.request
        return kwargs


class AdminPasswordChangeView(PasswordChangeView):
    """``/admin/password_change/``: the admin's own page (``AdminSite.password_change``), with the
    throttled form; wrapped in ``admin.site.admin_view`` in the URL configuration."""

    form_class = AdminThrottledPasswordChangeForm
    success_url = reverse_lazy("admin:password_change_done")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        self.request.current_app = admin.site.name
        return {**admin.site.each_context(self.request), **super().get_context_data(**kwargs)}
