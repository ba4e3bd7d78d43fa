"""Snapshot ingestion: reading uploaded or live cluster snapshots into validated Kubernetes objects.

``parsing`` turns an upload (YAML, JSON, archives, kube-scheduler-simulator exports) into a
``ParsedSnapshot`` or an ``UploadError`` listing every problem; ``summary`` describes a snapshot's
nodes and pods with the engine's own arithmetic; ``live`` reads a running cluster through the
Kubernetes API. These modules are plain Python (no Django).
"""
