"""A tiny scheduler extender for the extender scenario (standard library only).

Run it next to ``schedviz replay``::

    python schedviz/samples/pipeline/extender/server.py --port 8888 &
    schedviz replay schedviz/samples/pipeline/extender/cluster.yaml \
        --config schedviz/samples/pipeline/extender/config.yaml

It answers kube-scheduler's extender calls (k8s.io/kube-scheduler/extender/v1: JSON with the Go field
names as keys) under ``/scheduler``:

- ``POST /scheduler/filter`` (ExtenderArgs -> ExtenderFilterResult): nodes labelled
  ``maintenance=true`` fail with the reason "node is under maintenance"; the others pass;
- ``POST /scheduler/prioritize`` (ExtenderArgs -> HostPriorityList): 10 (MaxExtenderPriority) for
  nodes labelled ``storage=ssd``, 0 for the others.

The configuration is not ``nodeCacheCapable``, so the scheduler sends whole Node objects (labels
included) in ``Nodes.items`` and expects the passing ones back the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/scheduler"
MAINTENANCE_LABEL = ("maintenance", "true")
PREFERRED_LABEL = ("storage", "ssd")
MAINTENANCE_REASON = "node is under maintenance"
MAX_EXTENDER_PRIORITY = 10


def _labels(node: dict[str, Any]) -> dict[str, str]:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return labels if isinstance(labels, dict) else {}


def _has(node: dict[str, Any], label: tuple[str, str]) -> bool:
    return _labels(node).get(label[0]) == label[1]


def _name(node: dict[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def _nodes(args: dict[str, Any]) -> list[dict[str, Any]]:
    items = (args.get("Nodes") or {}).get("items") or []
    return [n for n in items if isinstance(n, dict)]


def filter_nodes(args: dict[str, Any]) -> dict[str, Any]:
    """ExtenderArgs -> ExtenderFilterResult."""
    passed: list[dict[str, Any]] = []
    failed: dict[str, str] = {}
    for node in _nodes(args):
        if _has(node, MAINTENANCE_LABEL):
            failed[_name(node)] = MAINTENANCE_REASON
        else:
            passed.append(node)
    return {"Nodes": {"metadata": {}, "items": passed}, "FailedNodes": failed, "Error": ""}


def prioritize(args: dict[str, Any]) -> list[dict[str, Any]]:
    """ExtenderArgs -> HostPriorityList."""
    return [
        {"Host": _name(n), "Score": MAX_EXTENDER_PRIORITY if _has(n, PREFERRED_LABEL) else 0}
        for n in _nodes(args)
    ]


VERBS = {"filter": filter_nodes, "prioritize": prioritize}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        prefix, _, verb = self.path.rpartition("/")
        handler = VERBS.get(verb) if prefix == PREFIX else None
        if handler is None:
            self.send_error(404, f"no extender verb at {self.path}")
            return
        try:
            args = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        except ValueError as exc:
            self.send_error(400, f"bad ExtenderArgs: {exc}")
            return
        data = json.dumps(handler(args)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"extender: {format % args}\n")


def make_server(host: str = "127.0.0.1", port: int = 8888) -> ThreadingHTTPServer:
    """The server, bound (port 0: a free port); call serve_forever() on it."""
    return ThreadingHTTPServer((host, port), Handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8888, help="0 picks a free port")
    args = parser.parse_args(argv)
    server = make_server(args.host, args.port)
    print(f"extender listening on http://{args.host}:{server.server_port}{PREFIX}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
