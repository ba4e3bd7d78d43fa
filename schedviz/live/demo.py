"""A live cluster to watch without a cluster: the bundled sample served by the test API server, a
scripted scheduler making decisions in it, and the live worker watching it (``manage.py live_demo``).

The scripted scheduler places the next pending pod where SchedViz's engine would (so most cycles
match), now and then on another feasible node (a divergence) and reports the engine's message for a
pod that fits nowhere (a FailedScheduling that matches). It also expires the watches now and then,
so the health shows relists. When no pod is left pending it creates copies of the sample's pending
pods, so the timeline keeps growing.
"""

from __future__ import annotations

import copy
import itertools
import logging
import os
import secrets
import threading
import time
from typing import Any

import yaml
from django.contrib.auth.models import User

from schedviz.kube.testing import TestApiServer
from schedviz.outbound import kube as outbound_kube
from schedviz.replays.demo import DEMO_PASSWORD, DEMO_USER, SAMPLE

from . import schedconfig, services
from .divergence import replay_pod
from .models import LiveCluster
from .triggers import BOUND, Trigger
from .worker import Worker

log = logging.getLogger(__name__)
NAME = "Demo cluster (scripted, local test API server)"


def _pending(srv: TestApiServer) -> list[dict[str, Any]]:
    pods = [p for p in srv.objects("Pod") if not (p.get("spec") or {}).get("nodeName")]
    pods = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    return sorted(pods, key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"]))


def _everything(srv: TestApiServer) -> list[dict[str, Any]]:
    kinds = {r.kind for r in srv.resources} - {"Event", "ConfigMap"}
    return [o for kind in sorted(kinds) for o in srv.objects(kind)]


class ScriptedScheduler:
    def __init__(self, srv: TestApiServer, *, diverge_every: int = 7, expire_every: int = 25) -> None:
        self.srv = srv
        self.config = schedconfig.build(None)
        self.diverge_every = diverge_every
        self.expire_every = expire_every
        self.steps = 0
        self.failed: set[str] = set()
        self.copies = itertools.count(1)
        self.templates = [copy.deepcopy(p) for p in _pending(srv)]

    def step(self) -> str:
        self.steps += 1
        if self.expire_every and self.steps % self.expire_every == 0:
            self.srv.expire_watches()
        pending = [p for p in _pending(self.srv) if p["metadata"]["uid"] not in self.failed]
        if not pending:
            self.failed.clear()
            self._more_pods()
            return "created pods"
        pod = pending[0]
        md = pod["metadata"]
        key = f"{md.get('namespace', 'default')}/{md['name']}"
        t = Trigger(
            BOUND, "pod", key, md["uid"], None, None, "", 0, "", time.time(), None, False, key, pod_object=pod
        )
        rec = replay_pod(_everything(self.srv), t, self.config).record
        ns, name = md.get("namespace", "default"), md["name"]
        if rec is not None and rec.result == "Gated":  # not enqueued: no decision until its gates go
            self.failed.add(md["uid"])
            return f"{key} waits for its scheduling gates"
        if rec is not None and rec.result == "NotHandled":  # another scheduler's pod: it places it
            names = [n["metadata"]["name"] for n in self.srv.objects("Node")]
            self.srv.bind(
                ns, name, names[self.steps % len(names)], scheduler=pod["spec"].get("schedulerName", "other")
            )
            return f"another scheduler bound {key}"
        if rec is not None and rec.result in ("Scheduled", "Waiting") and rec.selected_node:
            node = rec.selected_node
            if self.diverge_every and self.steps % self.diverge_every == 0 and rec.feasible is not None:
                names = [n["metadata"]["name"] for n in self.srv.objects("Node")]
                others = [names[i] for i in rec.feasible.tolist() if i < len(names) and names[i] != node]
                node = others[-1] if others else node
            self.srv.bind(ns, name, node)
            return f"bound {key} to {node}"
        message = rec.message if rec is not None and rec.message else "0/0 nodes are available"
        self.srv.fail_scheduling(ns, name, message)
        self.failed.add(md["uid"])
        return f"could not schedule {key}"

    def _more_pods(self) -> None:
        n = next(self.copies)
        for tpl in self.templates:
            pod = copy.deepcopy(tpl)
            md = pod["metadata"]
            md["name"] = f"{md['name']}-{n}"
            for k in ("uid", "resourceVersion", "creationTimestamp"):
                md.pop(k, None)
            pod.pop("status", None)
            self.srv.create(pod)


def start_server(port: int = 0) -> TestApiServer:
    """The stand-in API server on loopback. This process may reach it: its address joins
    SCHEDVIZ_CLUSTER_HOSTS here (the guard refuses loopback to clusters added from kubeconfigs)."""
    srv = TestApiServer(token=secrets.token_urlsafe(24))
    srv._port = port
    srv.start()
    allowed = os.environ.get(outbound_kube.SETTING, "").split(",")
    if "127.0.0.1" not in allowed:
        os.environ[outbound_kube.SETTING] = ",".join([*filter(None, allowed), "127.0.0.1"])
    doc = yaml.safe_load(SAMPLE.read_text())
    for obj in doc["items"] if isinstance(doc, dict) else doc:
        try:
            srv.resource_for(obj)
        except KeyError:
            continue  # kinds the scheduler does not watch
        srv.create(obj)
    return srv


def demo_cluster(user: Any, srv: TestApiServer) -> LiveCluster:
    """The demo's cluster, pointed at this run's server (its port and token change every run)."""
    cred = services.Credentials("kubeconfig", yaml.safe_dump(srv.kubeconfig(context="demo")))
    existing = LiveCluster.objects.filter(owner=user, name=NAME).first()
    if existing is None:
        return services.create_cluster(user, name=NAME, credentials=cred)
    cluster = services.update_cluster(existing, {"credentials": cred, "enabled": True})
    # another run's cluster: its checkpoint is of that server's history
    LiveCluster.objects.filter(pk=cluster.pk).update(checkpoint_blob=None, checkpoint_at=None)
    return cluster


def run(
    stop: threading.Event,
    *,
    username: str = DEMO_USER,
    interval: float = 2.0,
    seconds: float | None = None,
    port: int = 0,
    say: Any = print,
) -> None:
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save()
    srv = start_server(port)
    worker_stop = threading.Event()
    try:
        cluster = demo_cluster(user, srv)
        worker = Worker(f"live-demo-{secrets.token_hex(3)}", cluster_ids=[cluster.pk])
        thread = threading.Thread(target=worker.run, args=(worker_stop, 0.5), daemon=True)
        thread.start()
        say(f"live demo: {srv.url} watched as cluster {cluster.pk} ({NAME}) for user {username}")
        deadline = time.monotonic() + 60
        while LiveCluster.objects.filter(pk=cluster.pk, status="watching").count() == 0:
            if stop.wait(0.1) or time.monotonic() > deadline:  # decisions start once it is watched
                return
        scheduler = ScriptedScheduler(srv)
        started = time.monotonic()
        while not stop.wait(interval):
            say(f"live demo: {scheduler.step()}")
            if seconds is not None and time.monotonic() - started >= seconds:
                break
    finally:
        if "worker" in locals() and not stop.is_set():  # ran its time (not interrupted)
            _drain(worker, 10.0)
        worker_stop.set()
        if "thread" in locals():
            thread.join(30)
        srv.close()


def _drain(worker: Worker, timeout: float) -> None:
    """Let the worker replay the decisions it has seen (at most ``timeout`` seconds): a decision
    waits for the mirror to catch up with it, and the demo's last ones should be in its timeline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = list(worker.running.values())
        if all(r.watcher.idle() for r in running):
            return
        time.sleep(0.05)
