from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured


class ReplaysConfig(AppConfig):
    name = "schedviz.replays"
    label = "replays"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Custom plugins, before any configuration is validated: SCHEDVIZ_PLUGIN_MODULES, then the
        # installed "schedviz.plugins" entry points, loaded now so that a broken one stops startup.
        from django.conf import settings

        from schedviz.engine.runtime import registry

        try:
            registry.load_modules(getattr(settings, "SCHEDVIZ_PLUGIN_MODULES", []))
            registry.load_entry_points()
        except registry.PluginError as exc:
            raise ImproperlyConfigured(f"custom scheduler plugins: {exc}") from None
        # Extenders this process calls (replays, reports, explain) go through the guarded transport:
        # only URLs under SCHEDVIZ_EXTENDER_URLS, vetted addresses, no redirect, no file read.
        from schedviz.outbound import extenders as outbound_extenders

        outbound_extenders.install()
        # wake-ups for the replays' websockets
        from . import publish

        publish.connect()
