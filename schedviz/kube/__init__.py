"""The Kubernetes client side, plain Python (no Django): what SchedViz reads from a cluster and how.

- ``kinds``: the one catalogue of the kinds the scheduler reads (and live mode's streams);
- ``kubeconfig``: where a watched cluster's credentials come from, and the API client built from them;
- ``watch`` and ``mirror``: list-then-watch per stream, and the mirrored state with its changelog;
- ``reader``: one read of a whole cluster (``schedviz import-cluster``);
- ``testing``: a stand-in kube-apiserver for the tests and ``manage.py live_demo``.

Every connection to an API server goes through the guarded client (``schedviz.outbound``).
"""
