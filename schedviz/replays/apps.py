from django.apps import AppConfig


class ReplaysConfig(AppConfig):
    name = "schedviz.replays"
    label = "replays"
    default_auto_field = "django.db.models.BigAutoField"
