"""The replay websocket's route (docs/streaming.md), assembled with the other apps' by ``schedviz/asgi.py``."""

from django.urls import re_path

from .consumers import ReplayConsumer

websocket_urlpatterns = [
    re_path(r"^ws/replays/(?P<replay_id>[0-9a-fA-F-]{36})/$", ReplayConsumer.as_asgi()),
]
