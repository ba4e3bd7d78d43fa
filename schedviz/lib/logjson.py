"""Log records as JSON lines (LOG_FORMAT=json), for log collectors that parse them."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

# attributes every LogRecord has: anything else on a record was passed as ``extra`` and is kept
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the process and thread,
    the exception's traceback when there is one, and the record's extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.process,
            "thread": record.threadName,
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value if isinstance(value, str | int | float | bool | type(None)) else repr(value)
        return json.dumps(out, ensure_ascii=False)
