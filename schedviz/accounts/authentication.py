"""`Authorization: Token <token>` against hashed, expiring API tokens."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from .models import ApiToken, hash_token

LAST_USED_RESOLUTION = timedelta(seconds=60)  # how precisely `last_used` is kept


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
        now = timezone.now()
        # recorded to the minute: a write per request would serialise a busy token's requests on its row
        if tok.last_used is None or now - tok.last_used >= LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=tok.pk).update(last_used=now)
            tok.last_used = now
        return tok.user, tok

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
