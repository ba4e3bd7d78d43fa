"""Sign-in and password-change forms that say when the sign-in throttle refused an attempt."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.admin.forms import AdminPasswordChangeForm as DjangoAdminPasswordChangeForm
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from . import signin_throttle


class _LockoutMessage:
    """The lockout's message in place of "wrong username or password" when the throttle refused."""

    request: HttpRequest | None
    locked_out = False

    def get_invalid_login_error(self) -> ValidationError:
        lockout = signin_throttle.lockout_of(self.request)
        if lockout is not None:
            self.locked_out = True
            return ValidationError(lockout.message, code="locked_out")
        error: ValidationError = super().get_invalid_login_error()  # type: ignore[misc]
        return error


class SignInForm(_LockoutMessage, AuthenticationForm):
    pass


class AdminSignInForm(_LockoutMessage, AdminAuthenticationForm):
    pass


class _ThrottledOldPassword:
    """The old password of a password change is a password check too: throttled like a sign-in,
    on the same account's count."""

    user: Any
    request: HttpRequest | None = None
    locked_out = False

    def clean_old_password(self) -> str:
        attempt = signin_throttle.begin(self.user.get_username(), self.request)
        if isinstance(attempt, signin_throttle.Lockout):
            self.locked_out = True
            raise ValidationError(attempt.message, code="locked_out")
        try:
            value: str = super().clean_old_password()  # type: ignore[misc]
        except ValidationError:
            attempt.failed()
            raise
        except BaseException:
            attempt.abandon()
            raise
        attempt.succeeded()
        return value


class ThrottledPasswordChangeForm(_ThrottledOldPassword, PasswordChangeForm):
    def __init__(self, user: Any, *args: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.request = request


class AdminThrottledPasswordChangeForm(_ThrottledOldPassword, DjangoAdminPasswordChangeForm):
    def __init__(self, user: Any, *args: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.request = request
