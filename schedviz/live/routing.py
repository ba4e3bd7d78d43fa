"""The live timeline websocket's route (docs/live.md), assembled with the other apps' by ``schedviz/asgi.py``."""

from django.urls import re_path

from .consumers import LiveClusterConsumer

websocket_urlpatterns = [
    re_path(r"^ws/clusters/(?P<cluster_id>[0-9a-fA-F-]{36})/$", LiveClusterConsumer.as_asgi()),
]
