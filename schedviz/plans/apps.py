from django.apps import AppConfig


class PlansConfig(AppConfig):
    name = "schedviz.plans"
    label = "plans"
    default_auto_field = "django.db.models.BigAutoField"
