"""ASGI entry point: HTTP through Django, websockets through Channels."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")
django_asgi = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from schedviz.lib import redact  # noqa: E402
from schedviz.live import routing as live_routing  # noqa: E402
from schedviz.metrics import count_streams  # noqa: E402
from schedviz.replays import routing as replays_routing  # noqa: E402
from schedviz.streaming.auth import BrowserOriginValidator, stack  # noqa: E402
from schedviz.streaming.qos import HttpFirst  # noqa: E402

# each app's websockets (<app>/routing.py)
websocket_urlpatterns = [*replays_routing.websocket_urlpatterns, *live_routing.websocket_urlpatterns]

redact.install()  # the ?token= of websocket clients stays out of the access log

application = ProtocolTypeRouter(
    {
        "http": HttpFirst(django_asgi),
        "websocket": count_streams(BrowserOriginValidator(stack(URLRouter(websocket_urlpatterns)))),
    }
)
