"""SchedViz: replays and explains Kubernetes scheduling decisions."""

__version__ = "0.1.0"
