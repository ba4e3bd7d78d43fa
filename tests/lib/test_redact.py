"""API tokens passed as ?token= never reach uvicorn's log lines (schedviz/lib/redact.py)."""

from __future__ import annotations

import io
import logging

import schedviz.asgi  # noqa: F401  (installs the filter, as serving the application does)
from schedviz.lib.redact import redact


def test_token_values_are_replaced_wherever_they_stand_in_a_query() -> None:
    assert redact("/ws/replays/r/?token=svz_secret&batch=1") == "/ws/replays/r/?token=[redacted]&batch=1"
    assert redact("/ws/clusters/c/?mode=live&token=svz_secret") == "/ws/clusters/c/?mode=live&token=[redacted]"
    assert redact("/x/?access_token=abc") == "/x/?access_token=[redacted]"
    assert redact("/api/v1/tokens/?page=2") == "/api/v1/tokens/?page=2"  # a path, not a parameter


def test_uvicorn_lines_for_websockets_and_requests_carry_no_token() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    for name, args in (
        ("uvicorn.error", ("127.0.0.1:5000", "/ws/replays/r/?token=svz_secret&batch=1")),
        ("uvicorn.access", ("127.0.0.1:5000", "GET", "/api/v1/x/?token=svz_secret", "1.1", 200)),
    ):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        old = logger.level
        logger.setLevel(logging.INFO)
        try:
            logger.info('%s - "WebSocket %s" [accepted]' if len(args) == 2 else '%s - "%s %s HTTP/%s" %d', *args)
        finally:
            logger.removeHandler(handler)
            logger.setLevel(old)
    text = out.getvalue()
    assert "svz_secret" not in text and text.count("token=[redacted]") == 2, text
