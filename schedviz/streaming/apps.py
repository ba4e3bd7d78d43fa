from django.apps import AppConfig


class StreamingConfig(AppConfig):
    """The websockets' shared plumbing (auth, database threads, QoS, publishing, playback controls);
    each app owns its consumers and routes (``<app>/consumers.py``, ``<app>/routing.py``)."""

    name = "schedviz.streaming"
    label = "streaming"
    default_auto_field = "django.db.models.BigAutoField"
