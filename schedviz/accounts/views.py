"""Sign-in and password-change views whose password checks are throttled (``signin_throttle``), and the
API tokens endpoints (``/api/v1/tokens/``)."""

from __future__ import annotations

import os
from typing import Any

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response

from schedviz.api.viewsets import BaseViewSet, request_user

from . import serializers as s
from .forms import AdminThrottledPasswordChangeForm, SignInForm, ThrottledPasswordChangeForm
from .models import ApiToken


class SignInView(auth_views.LoginView):
    """``/accounts/login/``: the form says when sign-in is paused (the middleware makes it a 429)."""

    authentication_form = SignInForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        # `schedviz serve --demo` sets it: the page offers the demo account it created
        user, sep, password = os.environ.get("SCHEDVIZ_DEMO_ACCOUNT", "").partition(":")
        if user and sep:
            context["demo"] = {"user": user, "password": password}
        return context


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


@extend_schema(tags=["tokens"])
class TokenViewSet(BaseViewSet, mixins.ListModelMixin, mixins.DestroyModelMixin):
    """Your API tokens (their values are never shown again after creation)."""

    serializer_class = s.TokenSerializer
    queryset = ApiToken.objects.none()  # for the schema: the real one is the user's own tokens

    def get_queryset(self) -> QuerySet[ApiToken]:
        return ApiToken.objects.filter(user=request_user(self.request)).order_by("-created")

    @extend_schema(request=s.TokenCreateSerializer, responses={201: s.TokenCreatedSerializer})
    def create(self, request: Request) -> Response:
        """Create a token; its value is in the response once and never again."""
        ser = s.TokenCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        tok, raw = ApiToken.issue(
            request_user(request), ser.validated_data["name"], ser.validated_data.get("ttl_days")
        )
        return Response({**s.TokenSerializer(tok).data, "token": raw}, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Revoke a token: it authenticates nothing from now on."""
        tok = get_object_or_404(self.get_queryset(), pk=pk)
        with transaction.atomic():
            if tok.revoked is None:
                from django.utils import timezone

                tok.revoked = timezone.now()
                tok.save(update_fields=["revoked"])
        return Response(status=status.HTTP_204_NO_CONTENT)
