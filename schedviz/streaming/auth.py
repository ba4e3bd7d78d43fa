"""Websocket authentication: the session (browsers) or an API token (header or ?token=)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.auth import AuthMiddleware
from channels.middleware import BaseMiddleware
from channels.sessions import CookieMiddleware

from schedviz.streaming.db import stream_db


@stream_db
def _user_for_token(raw: str) -> Any:
    from schedviz.accounts.models import ApiToken, hash_token

    tok = ApiToken.objects.active().select_related("user").filter(digest=hash_token(raw)).first()
    if tok is None or not tok.user.is_active:
        return None
    return tok.user


class TokenAuthMiddleware(BaseMiddleware):
    """Sets scope["user"] from an API token when one is given; otherwise the session decides."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        raw = ""
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                parts = value.decode("latin-1").split()
                if len(parts) == 2 and parts[0].lower() in ("token", "bearer"):
                    raw = parts[1]
        if not raw:
            qs = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            raw = (qs.get("token") or [""])[0]
        if raw:
            scope = dict(scope)
            user = await _user_for_token(raw)
            scope["token_user"] = user
            scope["token_given"] = True
        return await super().__call__(scope, receive, send)


class SessionReader(BaseMiddleware):
    """The browser's session (from its cookie), for reading who the user is.

    Channels' own session middleware wraps every message the consumer sends, to save a session the
    consumer changed; SchedViz's websockets never change the session, and a stream sends thousands
    of messages a second, so the session is only read, and ``send`` is passed through untouched.
    """

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        from importlib import import_module

        from django.conf import settings

        store = import_module(settings.SESSION_ENGINE).SessionStore
        key = scope.get("cookies", {}).get(settings.SESSION_COOKIE_NAME)
        return await super().__call__(dict(scope, session=store(key)), receive, send)


def stack(inner: Any) -> Any:
    """Cookies, the session read, the user (session or token): ``AuthMiddlewareStack`` without the
    per-message session wrapper."""
    return CookieMiddleware(SessionReader(AuthMiddleware(TokenAuthMiddleware(inner))))


class BrowserOriginValidator:
    """Refuses cross-site browser connections (Origin not one of ALLOWED_HOSTS).

    Browsers always send Origin on websockets; clients without one (CI tools, scripts) are not
    subject to cross-site request forgery and authenticate with a token.
    """

    def __init__(self, app: Any) -> None:
        from channels.security.websocket import AllowedHostsOriginValidator

        self.app = app
        self.checked = AllowedHostsOriginValidator(app)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if not any(name == b"origin" for name, _ in scope.get("headers", [])):
            return await self.app(scope, receive, send)
        return await self.checked(scope, receive, send)
