"""Wake-ups on the channel layer, best effort: a worker tells every consumer in a group that something
was stored (the database is the source of truth; consumers also poll it)."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

log = logging.getLogger(__name__)


def send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, message)
    except Exception:  # streaming is best effort; consumers also poll the database
        log.warning("could not publish to the channel layer", exc_info=True)
