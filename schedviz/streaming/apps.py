from django.apps import AppConfig


class StreamingConfig(AppConfig):
    name = "schedviz.streaming"
    label = "streaming"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import publish

        publish.connect()
