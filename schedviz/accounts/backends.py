"""The authentication backend: Django's user model and passwords, behind the sign-in throttle."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from . import signin_throttle


class ThrottledModelBackend(ModelBackend):
    """``ModelBackend`` whose password checks are throttled (``signin_throttle``).

    Every caller of ``django.contrib.auth.authenticate()`` goes through it: the sign-in page, the
    admin's, and any API authentication that takes a username and password. A locked-out attempt
    raises ``PermissionDenied``, which makes ``authenticate()`` stop and answer ``None`` without
    the password being checked; the request is marked, and ``SigninLockoutMiddleware`` answers 429.
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        attempt = signin_throttle.begin(str(username), request)
        if isinstance(attempt, signin_throttle.Lockout):
            raise PermissionDenied(attempt.message)
        try:
            user = super().authenticate(request, username=username, password=password, **kwargs)
        except BaseException:
            attempt.abandon()
            raise
        if user is None:
            attempt.failed()
        else:
            attempt.succeeded()
        return user

    async def aauthenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        # the throttle's cache calls block: one hand-over to a thread for the whole check
        return await sync_to_async(self.authenticate)(request, username=username, password=password, **kwargs)
