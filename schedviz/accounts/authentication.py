"""`Authorization: Token <token>` against hashed, expiring API tokens."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from .models import ApiToken, hash_token


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() not in (b"token", b"bearer"):
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Invalid token header: expected 'Token <token>'.")
        try:
            raw = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token header: not ASCII.") from None
        tok = ApiToken.objects.active().select_related("user").filter(digest=hash_token(raw)).first()
        if tok is None or not tok.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
        ApiToken.objects.filter(pk=tok.pk).update(last_used=timezone.now())
        return tok.user, tok

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
