from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "schedviz.live"
    label = "live"
    verbose_name = "Live clusters"
    default_auto_field = "django.db.models.BigAutoField"
