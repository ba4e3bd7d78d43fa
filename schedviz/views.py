"""The browser entry point: the explorer's single page, for signed-in users."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: the app's own page for unknown URLs (JSON in the API's error shape for clients
    that ask for JSON); under /api/ the API's catch-all answers first."""
    if "application/json" in request.headers.get("Accept", "") and "text/html" not in request.headers.get("Accept", ""):
        message = f"no page at {request.path}"
        return JsonResponse({"error": {"code": "not_found", "message": message, "details": None}}, status=404)
    return render(request, "404.html", {"path": request.path}, status=404)


@login_required
@ensure_csrf_cookie
def spa(request: HttpRequest, path: str = "") -> HttpResponse:
    index = settings.EXPLORER_DIR / "index.html"
    if index.exists():
        return HttpResponse(index.read_text(encoding="utf-8"), content_type="text/html; charset=utf-8")
    return render(request, "home.html")
