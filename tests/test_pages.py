"""Pages outside the API: an unknown URL gets the app's own 404 page (JSON when JSON is asked for)."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_an_unknown_url_gets_the_apps_page() -> None:
    r = Client().get("/no/such/page")
    assert r.status_code == 404 and r["Content-Type"].startswith("text/html")
    body = r.content.decode()
    assert "SchedViz: page not found" in body and "/no/such/page" in body and 'href="/"' in body


@pytest.mark.django_db
def test_an_unknown_url_answers_json_to_json_clients() -> None:
    r = Client().get("/no/such/page", HTTP_ACCEPT="application/json")
    assert r.status_code == 404
    assert r.json() == {"error": {"code": "not_found", "message": "no page at /no/such/page", "details": None}}
    # the API keeps its own catch-all
    assert Client().get("/api/v1/nope/").json()["error"]["code"] == "not_found"
