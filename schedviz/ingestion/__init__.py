"""Snapshot ingestion: reading uploaded or live cluster snapshots into validated Kubernetes objects.

``parsing`` turns an upload (YAML, JSON, archives, kube-scheduler-simulator exports) into a
``ParsedSnapshot`` or an ``UploadError`` listing every problem; ``summary`` describes a snapshot's
nodes and pods with the engine's own arithmetic. These two modules are plain Python (no Django);
reading a running cluster is ``schedviz.kube.reader``.
"""
