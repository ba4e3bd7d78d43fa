"""API tokens out of the server's logs.

Clients that cannot set headers (a websocket from a script) may pass their API token in the query
string (``?token=``, docs/streaming.md), and uvicorn logs every request's and every websocket's path
with its query string. This filter, on uvicorn's loggers, replaces such a token's value before the
line is written.
"""

from __future__ import annotations

import logging
import re

_TOKEN = re.compile(r"(?i)((?:^|[?&;])(?:token|access_token)=)[^&;\s\"']*")


def redact(text: str) -> str:
    return _TOKEN.sub(r"\1[redacted]", text)


class RedactTokens(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str) and "token=" in record.msg.lower():
            record.msg = redact(record.msg)
        return True


def install(names: tuple[str, ...] = ("uvicorn.access", "uvicorn.error", "daphne.server")) -> None:
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())
