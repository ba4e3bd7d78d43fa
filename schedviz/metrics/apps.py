from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """/metrics: hooks itself to what it counts (the replays' runner), so that nothing imports it back."""

    name = "schedviz.metrics"
    label = "metrics"

    def ready(self) -> None:
        from schedviz.replays import runner

        from . import count_stored_cycles

        if count_stored_cycles not in runner.progress_listeners:
            runner.progress_listeners.insert(0, count_stored_cycles)
