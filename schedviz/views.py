"""The browser entry point: the explorer's single page, for signed-in users."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie


@login_required
@ensure_csrf_cookie
def spa(request: HttpRequest, path: str = "") -> HttpResponse:
    index = settings.EXPLORER_DIR / "index.html"
    if index.exists():
        return HttpResponse(index.read_text(encoding="utf-8"), content_type="text/html; charset=utf-8")
    return render(request, "home.html")
