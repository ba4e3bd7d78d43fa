from django.urls import re_path

from schedviz.live.consumers import LiveClusterConsumer

from .consumers import ReplayConsumer

websocket_urlpatterns = [
    re_path(r"^ws/replays/(?P<replay_id>[0-9a-fA-F-]{36})/$", ReplayConsumer.as_asgi()),
    re_path(r"^ws/clusters/(?P<cluster_id>[0-9a-fA-F-]{36})/$", LiveClusterConsumer.as_asgi()),
]
