"""The ``schedviz`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .engine import ConfigError, InputError, ReplayOptions, SchedVizError, load_config, load_paths
from .engine.runtime import extenders as extender_transport
from .engine.runtime import registry
from .engine.runtime.replay import Replay
from .engine.trace import CycleRecord, ReplayTrace

SAMPLE = Path(__file__).parent / "samples" / "cluster.yaml"


def _replay(args: argparse.Namespace) -> int:
    if args.format == "jsonl" and args.pretty:
        raise SchedVizError("--pretty does not apply to --format jsonl (one JSON object per line)")
    snapshot = load_paths(args.paths, freeze=True)
    _RETAINED.append(snapshot)
    cfg_source: Any = snapshot.config
    if args.config:
        cfg_source = args.config
    config = load_config(cfg_source)
    preemption = getattr(args, "preemption", None) or "evict"
    with _budget(args) as budget:
        rp = Replay(snapshot, config, ReplayOptions(all_nodes=args.all_nodes, preemption=preemption, budget=budget))
        _RETAINED.append(rp)
        if args.format in ("json", "jsonl"):
            # written cycle by cycle as the replay produces them; memory holds one cycle's expansion
            from .tools.trace_stream import write_json, write_jsonl

            if args.format == "json":
                write_json(rp.trace, rp.cycles(), sys.stdout, indent=1 if args.pretty else None)
            else:
                write_jsonl(rp.trace, rp.cycles(), sys.stdout)
            return 0
        # the table too is written cycle by cycle, each record dropped once written (as the JSON
        # writers do): memory does not hold every cycle's per-node arrays
        from .tools.trace_stream import forget

        final: dict[str, str] = {}
        for rec in rp.cycles():
            sys.stdout.write("".join(line + "\n" for line in _cycle_lines(rp.trace, rec, args.top)))
            final[rec.pod] = rec.result
            forget(rp.trace, rec)
    sys.stdout.write("\n".join(_summary_lines(final.values())) + "\n")
    return 0


def _budget(args: argparse.Namespace) -> Any:
    """--cycle-timeout: each cycle bounded (engine/budget.py); without it, nothing is (a context manager)."""
    from contextlib import nullcontext

    from .engine.budget import Budget

    seconds = getattr(args, "cycle_timeout", None)
    if not seconds:
        return nullcontext(None)
    return Budget(seconds, setting="--cycle-timeout", setup_seconds=None, setup_setting="")


def render_table(trace: ReplayTrace, top: int = 3) -> str:
    """A readable report: per pod its result, node, best nodes with per-plugin scores, and the message."""
    lines: list[str] = []
    for c in trace.cycles:
        lines.extend(_cycle_lines(trace, c, top))
    lines.extend(_summary_lines(final.result for _, final in trace.pod_records().values()))
    return "\n".join(lines) + "\n"


def _cycle_lines(trace: ReplayTrace, c: CycleRecord, top: int) -> list[str]:
    head = f"{c.seq:>4}  {c.pod:<40} {c.result:<14} {c.selected_node or '-'}"
    if c.attempt > 1 and c.kind != "Binding":
        head += f"  (attempt {c.attempt})"
    lines = [head]
    if c.message:
        lines.append(f"      {c.message}")
    if c.nominated_node:
        lines.append(f"      nominated to {c.nominated_node}")
    for e in c.evictions:
        lines.append(f"      evicted {e.pod} from {e.node}")
    for n in c.cleared_nominations:
        lines.append(f"      cleared the nomination of {n.pod} to {n.node}")
    if c.error and c.result in ("NotHandled", "Gated", "Error"):
        lines.append(f"      {c.error}")
    lines.extend(_top_nodes(trace, c, top))
    return lines


def _summary_lines(final_results: Iterable[str]) -> list[str]:
    """The table's last lines: how many pods ended with each result (their final record's)."""
    counts: dict[str, int] = {}
    for result in final_results:
        counts[result] = counts.get(result, 0) + 1
    return ["", "summary: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))]


def _top_nodes(trace: ReplayTrace, c: CycleRecord, top: int) -> list[str]:
    if not c.scored or c.feasible is None or c.totals is None or c.normalized_scores is None:
        return []
    out = []
    for k in _best(c.totals, c.feasible, top):
        parts = []
        for p, name in enumerate(c.score_plugins):
            w = int(c.normalized_scores[p, k]) * c.score_weights[p]
            if w:
                parts.append(f"{name}={w}")
        node = trace.node_names[int(c.feasible[k])]
        out.append(f"        {node:<24} total {int(c.totals[k]):>5}  " + " ".join(parts))
    return out


def _best(totals: Any, feasible: Any, top: int) -> list[int]:
    """The positions of the ``top`` best feasible nodes: highest total first, then snapshot order."""
    n = len(feasible)
    t = np.asarray(totals)
    f = np.asarray(feasible)
    if top > 0 and n > 0 and t.dtype.kind in "iu" and f.dtype.kind in "iu" and t.shape == f.shape == (n,):
        lo, hi = int(t.min()), int(t.max())
        span = int(f.max()) + 1
        if int(f.min()) >= 0 and max(abs(lo), abs(hi)) * span + span < 1 << 62:
            # one integer per node orders them as (-total, node index) does; node indices are unique
            key = -t.astype(np.int64) * span + f.astype(np.int64)
            if top < n:
                part = np.argpartition(key, top - 1)[:top]
                return [int(k) for k in part[np.argsort(key[part], kind="stable")]]
            return [int(k) for k in np.argsort(key, kind="stable")]
    order = sorted(range(n), key=lambda k: (-int(totals[k]), int(feasible[k])))
    return order[:top]


def _bench(args: argparse.Namespace) -> int:
    from .tools.bench_engine import run_bench, summary

    sizes = args.nodes or [500, 1000, 5000]
    ppn = args.pods_per_node
    if ppn is not None and ppn < 1:
        raise SchedVizError("--pods-per-node must be at least 1")
    if args.yaml and ppn is None:
        raise SchedVizError("--yaml needs --pods-per-node (the sparse cluster is not read from a dump)")
    if args.dump:
        from .tools.dense_cluster import DenseShape, write_dump

        if len(sizes) != 1:
            raise SchedVizError("--dump writes one cluster: give one --nodes")
        shape = DenseShape(sizes[0], ppn if ppn is not None else 30, args.pods)
        try:
            size = write_dump(args.dump, shape)
        except OSError as exc:
            raise SchedVizError(f"--dump {args.dump}: cannot write: {exc.strerror or exc}") from None
        print(
            f"wrote {args.dump}: {shape.nodes} nodes, {shape.running} running pods, {shape.pending} pending, "
            f"{size} bytes",
            file=sys.stderr,
        )
        return 0
    as_json = args.json or args.format == "json"
    for n in sizes:
        try:
            r = run_bench(n, args.pods, all_nodes=not args.sampled, pods_per_node=ppn, yaml_form=args.yaml)
        except RuntimeError as exc:  # the measuring process died (out of memory, ...)
            raise SchedVizError(f"bench at {n} nodes: {exc}") from None
        print(json.dumps(r) if as_json else summary(r), flush=True)
    return 0


def _load(args: argparse.Namespace) -> int:
    from .tools.loadtest import LoadError, main_pids, run, summary

    token = args.token or os.environ.get("SCHEDVIZ_TOKEN", "")
    if not token:
        raise SchedVizError("load: --token (or $SCHEDVIZ_TOKEN) is required")
    try:
        r = run(
            args.url, token, clients=args.clients, api_rps=args.api_rps, duration=args.duration,
            nodes=args.nodes, pods=args.pods, replay=args.replay, pids=main_pids(args.pid or []),
            p95_ms=args.p95_ms, processes=args.processes,
        )
    except (LoadError, OSError) as exc:
        raise SchedVizError(f"load: {exc}") from None
    if args.output:
        Path(args.output).write_text(json.dumps(r, indent=1) + "\n")
    print(json.dumps(r) if args.json else summary(r))
    return 0 if r["passed"] else 1


def _bench_stream(args: argparse.Namespace) -> int:
    from .tools.bench_stream import run

    r = run(args.nodes, args.pods, args.database_url, args.redis_url)
    if args.json:
        print(json.dumps(r))
    else:
        print(
            f"{r['nodes']} nodes x {r['pods']} pods: {r['cyclesPerSecond']} cycles/s end to end "
            f"({r['cycles']} cycles in {r['seconds']} s, worker {r['workerSeconds']} s), "
            f"{r['messages']} messages in {r['frames']} batched frames, largest frame {r['maxFrameBytes']} bytes, replay {r['status']}"
        )
    return 0 if r["status"] == "succeeded" else 1


def _bench_storage(args: argparse.Namespace) -> int:
    from .tools.bench_storage import run, run_dense

    if args.pods_per_node:
        r = run_dense(args.database_url, args.nodes, args.pods_per_node, args.pods, args.requests)
    else:
        r = run(args.database_url, args.requests)
    print(json.dumps(r, indent=1))
    return 0


def _bench_upload(args: argparse.Namespace) -> int:
    from .tools.bench_upload import run

    r = run(
        args.database_url,
        dump=args.dump,
        nodes=args.nodes,
        pods_per_node=args.pods_per_node,
        pending=args.pending,
        codec=args.codec,
    )
    print(json.dumps(r, indent=1))
    return 0 if r["worker"]["status"] == "ready" else 1


def _bench_browser(args: argparse.Namespace) -> int:
    from .tools.bench_browser import run, summary

    r = run(args.nodes, args.pods, args.steps, args.chromium, pods_per_node=args.pods_per_node)
    if args.output:
        Path(args.output).write_text(json.dumps(r, indent=1) + "\n")
    print(json.dumps(r) if args.json else summary(r))
    return 0


def _demo(args: argparse.Namespace) -> int:
    ns = argparse.Namespace(paths=[str(SAMPLE)], config=None, all_nodes=False, format="table", top=3, pretty=False)
    return _replay(ns)


def _explain(args: argparse.Namespace) -> int:
    from .engine.explain import explain

    snapshot = load_paths(args.paths, freeze=True)
    cfg_source: Any = args.config if args.config else snapshot.config
    config = load_config(cfg_source)
    ex = explain(
        snapshot,
        args.pod,
        config=config,
        options=ReplayOptions(all_nodes=args.all_nodes, preemption=args.preemption),
        nodes=args.node or [],
    )
    if args.format == "json":
        json.dump(ex.to_dict(), sys.stdout, indent=1 if args.pretty else None)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(ex.to_text())
    return 0


def _report(args: argparse.Namespace) -> int:
    from . import reports

    fail_on = set(args.fail_on or [])
    if reports.FAIL_ON_CHANGES in fail_on and not args.baseline:
        raise SchedVizError("--fail-on changes needs --baseline")
    outputs = [
        (flag, path)
        for flag, path in (("--junit", args.junit), ("--markdown", args.markdown), ("--json", args.json))
        if path
    ]
    if sum(1 for _, path in outputs if path == "-") > 1:
        raise SchedVizError("only one of --junit, --markdown and --json can write to standard output (-)")
    headroom = _headroom_checks(args.min_headroom or [])
    if args.local:
        snapshot = load_paths([args.snapshot], freeze=True)
        candidate = load_config(args.config)
        baseline = load_config(args.baseline) if args.baseline else None
        with _budget(args) as budget:
            report = reports.build_report(snapshot, candidate, baseline, ReplayOptions(budget=budget))
    else:
        from .reports.client import fetch_report

        files = [("--snapshot", args.snapshot), ("--config", args.config), ("--baseline", args.baseline)]
        for flag, path in files:
            if path and not Path(path).is_file():
                raise SchedVizError(f"{flag} {path}: no such file (server mode uploads a single file)")
        token = args.token or os.environ.get("SCHEDVIZ_TOKEN", "")
        report = fetch_report(
            args.server,
            token,
            Path(args.snapshot),
            Path(args.config),
            Path(args.baseline) if args.baseline else None,
            timeout=args.timeout,
        )
    if headroom:  # computed here in both modes, on the snapshot file, under the candidate
        from .reports.headroom import check_headroom

        report["headroom"] = check_headroom(load_paths([args.snapshot]), load_config(args.config), headroom)
    rendered = {
        "--junit": lambda: reports.to_junit_xml(report),
        "--markdown": lambda: reports.to_markdown(report, fail_on=fail_on),
        "--json": lambda: json.dumps(report, indent=2) + "\n",
    }
    try:
        failures = reports.policy_failures(report, fail_on)
        texts = [(flag, path, rendered[flag]()) for flag, path in outputs]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # only a server's report can get here: the local one has the shape the renderers expect
        raise SchedVizError(f"cannot use the report: {type(exc).__name__}: {exc}") from None
    to_stdout = False
    for flag, path, text in texts:
        if path == "-":
            sys.stdout.write(text)
            to_stdout = True
            continue
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise SchedVizError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None
    summary = _report_summary(report, failures)
    (sys.stderr if to_stdout else sys.stdout).write(summary)
    return 1 if failures else 0


def _headroom_checks(values: list[str]) -> list[Any]:
    """--min-headroom POD.yaml=N values as (pod spec, N), read before anything is replayed."""
    from .planning import read_pod_spec
    from .reports.headroom import parse_min_headroom

    checks = []
    for value in values:
        path, count = parse_min_headroom(value)
        checks.append((read_pod_spec(path), count))
    return checks


def _report_summary(report: dict[str, Any], failures: list[str]) -> str:
    """A few lines for the CI log: counts, changes, the pods that cannot be scheduled, the verdict."""
    s = report["summary"]
    counts = [f"{s.get('scheduled', 0)} scheduled", f"{s.get('unschedulable', 0)} unschedulable"]
    for key, label in (
        ("waiting", "waiting"),
        ("errors", "errors"),
        ("notHandled", "not handled"),
        ("gated", "gated"),
    ):
        if s.get(key):
            counts.append(f"{s[key]} {label}")
    pending = s.get("pendingPods", 0)
    lines = [f"schedviz report: {pending} pending pod{'' if pending == 1 else 's'}: " + ", ".join(counts)]
    if report.get("hasBaseline"):
        lines.append(
            f"against the baseline: {s.get('moved', 0)} moved, {s.get('newlyUnschedulable', 0)} newly unschedulable, "
            f"{s.get('newlyScheduled', 0)} newly scheduled, {s.get('resultChanged', 0)} with another result"
        )
    for p in report["pods"]:
        if p.get("result") in ("Unschedulable", "Error"):
            lines.append(f"  {p['pod']}: {p['result']}: {p.get('message') or ''}")
    for h in report.get("headroom") or []:
        verdict = "passed" if h["passed"] else "FAILED"
        lines.append(f"headroom {h['source']}: {h['fits']} of {h['required']} copies of {h['pod']} fit: {verdict}")
    if failures:
        lines.append("policy failed: " + "; ".join(failures))
    return "\n".join(lines) + "\n"


def _plan_inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    """The snapshot and configuration of a plan (capacity, drain, scale-up)."""
    snapshot = load_paths(args.paths, freeze=True)
    return snapshot, load_config(args.config if args.config else snapshot.config)


def _plan_output(args: argparse.Namespace, doc: dict[str, Any], table: str, snapshot: Any) -> None:
    if getattr(args, "write_snapshot", None):
        from .planning import snapshot_document

        try:
            Path(args.write_snapshot).write_text(json.dumps(snapshot_document(snapshot)), encoding="utf-8")
        except OSError as exc:
            raise SchedVizError(f"--write-snapshot {args.write_snapshot}: cannot write: {exc.strerror or exc}") from None
    if args.format == "json":
        json.dump(doc, sys.stdout, indent=1 if args.pretty else None)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(table)


def _capacity(args: argparse.Namespace) -> int:
    from .planning import capacity, read_pod_spec
    from .planning.render import capacity_table

    specs = [read_pod_spec(path) for path in args.pod]
    snapshot, config = _plan_inputs(args)
    plan = capacity(snapshot, specs, config, max_replicas=args.max, order=args.order, all_nodes=args.all_nodes)
    doc = plan.to_dict(utilization=args.utilization)
    _plan_output(args, doc, capacity_table(plan), plan.snapshot)
    return 0


def _drain(args: argparse.Namespace) -> int:
    from .planning import drain
    from .planning.render import drain_table

    snapshot, config = _plan_inputs(args)
    plan = drain(
        snapshot, args.node or [], args.selector, config, respect_pdb=args.respect_pdb, all_nodes=args.all_nodes
    )
    _plan_output(args, plan.to_dict(utilization=args.utilization), drain_table(plan), plan.snapshot)
    if "unschedulable" in (args.fail_on or []) and plan.unschedulable:
        return 1
    return 0


def _scale_up(args: argparse.Namespace) -> int:
    from .planning import scale_up
    from .planning.render import scale_up_table

    snapshot, config = _plan_inputs(args)
    plan = scale_up(snapshot, args.template, config, max_nodes=args.max_nodes, all_nodes=args.all_nodes)
    if getattr(args, "write_snapshot", None) and len(plan.templates) > 1:
        raise SchedVizError("--write-snapshot writes one plan: give one --template")
    _plan_output(args, plan.to_dict(utilization=args.utilization), scale_up_table(plan), plan.templates[0].snapshot)
    return 0


def _config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="KubeSchedulerConfiguration file (YAML or JSON)")


def _all_nodes_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--all-nodes", action="store_true", help="filter and score every node (percentageOfNodesToScore=100)")


def _plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="SNAPSHOT", help="snapshot files or directories (YAML/JSON)")
    _config_option(p)
    _all_nodes_option(p)
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--pretty", action="store_true", help="indent JSON output")
    p.add_argument("--utilization", action="store_true", help="JSON: add requests per node before and after")
    p.add_argument(
        "--write-snapshot",
        metavar="PATH",
        help="also write the snapshot the answer replayed (JSON kind: List): `schedviz replay` or `explain` it",
    )
    _plugin_module_option(p)


def _import_cluster(args: argparse.Namespace) -> int:
    import tempfile

    from .kube.reader import write_cluster

    # the cluster goes to a file page by page, then is read from it as a stream: memory holds a page
    target = Path(args.output) if args.output else None
    with (
        target.open("w+", encoding="utf-8") if target else tempfile.TemporaryFile("w+", encoding="utf-8")
    ) as out:
        read = write_cluster(args.kubeconfig, out, args.context, args.namespace, page_size=args.page_size)
        for kind, why in sorted(read.skipped.items()):
            print(f"schedviz: skipped {kind}: {why}", file=sys.stderr)
        written = sum(read.counts.values())
        if target is not None:
            print(f"wrote {written} objects to {target}")
            return 0
        size = out.tell()
        out.flush()
        out.seek(0)
        return _store_cluster(args, read.server, out.buffer, size)


def _store_cluster(args: argparse.Namespace, server: str, data: Any, size: int) -> int:
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from .ingestion.parsing import UploadError
    from .ingestion.services import store_stream

    call_command("migrate", interactive=False, verbosity=0, run_syncdb=False)
    username = args.user or "demo"
    user = User.objects.filter(username=username).first()
    if user is None:
        print(f"schedviz: error: no user {username!r} (create it first, e.g. manage.py createsuperuser)", file=sys.stderr)
        return 2
    name = args.name or f"{server or 'cluster'} ({args.context or 'current context'})"
    chunks = iter(lambda: data.read(1 << 20), b"")
    try:
        snap, created = store_stream(user, chunks, server or "cluster", name=name, size=size, source_format="live")
    except UploadError as exc:
        print(f"schedviz: error: {exc}", file=sys.stderr)
        return 2
    verb = "stored" if created else "already stored as"
    print(f"{verb} snapshot {snap.pk}: {snap.node_count} nodes, {snap.pod_count} pods ({snap.pending_count} pending)")
    return 0


def _race_schedulers(specs: list[str]) -> list[tuple[str, str]]:
    """``--scheduler NAME=CONFIG_FILE`` values as (name, path)."""
    out: list[tuple[str, str]] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise SchedVizError(f"--scheduler {spec}: expected NAME=CONFIG_FILE")
        if any(name == n for n, _ in out):
            raise SchedVizError(f"--scheduler {spec}: scheduler {name!r} is given twice")
        out.append((name, path))
    return out


def _race(args: argparse.Namespace) -> int:
    from .engine.runtime.race import RaceOptions, race

    named = _race_schedulers(args.scheduler)
    snapshot = load_paths(args.paths, freeze=True)
    schedulers = [(name, load_config(path)) for name, path in named]
    report = race(snapshot, schedulers, RaceOptions(all_nodes=args.all_nodes))
    if args.format == "json":
        json.dump(report.to_dict(), sys.stdout, indent=1 if args.pretty else None)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report.to_table())
    return 0


def _serve(args: argparse.Namespace) -> int:
    from .tools.server import serve

    return serve(args.host, args.port, demo=args.demo, migrate=not args.no_migrate)


def _plugin_module_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin-module",
        action="append",
        metavar="MODULE",
        help="import a module of custom plugins (pkg.module, or pkg.module:Class) before reading the "
        f"configuration (repeatable; also ${registry.ENV_VAR}, comma-separated)",
    )


def _load_plugins(args: argparse.Namespace) -> None:
    """Custom plugins for the commands that replay: $SCHEDVIZ_PLUGIN_MODULES, then --plugin-module."""
    if not hasattr(args, "plugin_module"):
        return
    registry.load_modules([*registry.modules_from_env(), *(args.plugin_module or [])])


def _cycle_timeout_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cycle-timeout",
        type=float,
        metavar="S",
        help="stop a scheduling cycle after S seconds (wall clock): it is recorded as an Error and the "
        "replay goes on (default: no limit)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedviz", description="Replay and explain kube-scheduler decisions.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("replay", help="replay the pending pods of a snapshot")
    r.add_argument("paths", nargs="+", help="snapshot files or directories (YAML/JSON, kind: List, multi-document)")
    _config_option(r)
    _all_nodes_option(r)
    r.add_argument(
        "--preemption",
        choices=("evict", "dry-run"),
        default="evict",
        help="evict: a successful preemption deletes its victims and the preemptor is retried after its "
        "backoff (default); dry-run: preemption is only recorded",
    )
    _cycle_timeout_option(r)
    r.add_argument(
        "--format",
        choices=("json", "jsonl", "table"),
        default="table",
        help="table (default); json: the trace document (docs/trace-format.md), written cycle by cycle; "
        "jsonl: its metadata on the first line, then one cycle per line",
    )
    r.add_argument("--top", type=int, default=3, help="nodes shown per pod in the table")
    r.add_argument("--pretty", action="store_true", help="indent JSON output (--format json)")
    _plugin_module_option(r)
    r.set_defaults(func=_replay)
    b = sub.add_parser(
        "bench",
        help="replay a synthetic cluster and print pods/second and peak memory",
        description="Replay a synthetic cluster, each size in a fresh process, and print pods per second "
        "and peak memory. The default cluster is sparse (two small running pods per node, built in "
        "memory). --pods-per-node K makes it dense and production-shaped (K running pods per node from "
        "Deployments: owner references, service-account volumes, default tolerations, requests and limits, "
        "half with a preferred pod anti-affinity, a quarter with a zone spread constraint), written to a "
        "temporary JSON dump and measured in three phases: load (reading the dump as `schedviz replay` "
        "does), index (building the replay up to its first cycle) and replay (the cycles).",
    )
    b.add_argument("--nodes", type=int, action="append", help="cluster size (repeatable); default 500, 1000, 5000")
    b.add_argument("--pods", type=int, default=1000, help="pending pods, i.e. cycles (default 1000)")
    b.add_argument(
        "--pods-per-node",
        type=int,
        metavar="K",
        help="the dense cluster: K running pods per node, measured as load, index and replay phases",
    )
    b.add_argument("--sampled", action="store_true", help="use the default node sampling instead of every node")
    b.add_argument(
        "--yaml",
        action="store_true",
        help="with --pods-per-node: also load the dump's YAML form (slow: pure-Python YAML), in a process of its own",
    )
    b.add_argument(
        "--dump",
        metavar="PATH",
        help="write the dense cluster (one --nodes, --pods-per-node, default 30, and --pods pending) to PATH "
        "and exit: JSON, or YAML when PATH ends in .yaml/.yml",
    )
    b.add_argument("--format", choices=("text", "json"), default="text", help="json: one JSON object per size and line")
    b.add_argument("--json", action="store_true", help="the same as --format json")
    b.set_defaults(func=_bench)
    bs = sub.add_parser("bench-stream", help="measure streaming: worker -> Redis channel layer -> websocket client")
    bs.add_argument("--nodes", type=int, default=5000)
    bs.add_argument("--pods", type=int, default=300)
    bs.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/schedviz_bench"))
    bs.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"))
    bs.add_argument("--json", action="store_true")
    bs.set_defaults(func=_bench_stream)
    ld = sub.add_parser(
        "load",
        help="load-test a running server: websocket clients watching one replay plus API requests",
        description="Many websocket clients watch one replay (checking every position: no gap, no "
        "duplicate, resuming mid-stream) while API requests run at a steady rate; reports API latency "
        "percentiles and the server's memory (--pid). Exit status 1 when a check fails.",
    )
    ld.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8000")
    ld.add_argument("--token", help="an API token (default: $SCHEDVIZ_TOKEN)")
    ld.add_argument("--clients", type=int, default=200, help="websocket clients (default 200)")
    ld.add_argument("--api-rps", type=float, default=50, help="API requests per second (default 50)")
    ld.add_argument("--duration", type=float, default=120, help="seconds (default 120)")
    ld.add_argument("--nodes", type=int, default=1000, help="nodes of the synthetic snapshot (default 1000)")
    ld.add_argument("--pods", type=int, default=100, help="its pending pods, i.e. cycles (default 100)")
    ld.add_argument("--replay", help="watch this existing replay instead of creating one")
    ld.add_argument("--pid", action="append", help="a server process whose memory to sample (repeatable)")
    ld.add_argument("--p95-ms", type=float, default=300, help="the API p95 latency to pass (default 300)")
    ld.add_argument(
        "--processes", type=int, help="client processes for the websockets (default: one per 50 clients, at most 4)"
    )
    ld.add_argument("--output", metavar="FILE", help="also write the results as JSON")
    ld.add_argument("--json", action="store_true")
    ld.set_defaults(func=_load)
    bst = sub.add_parser("bench-storage", help="stored size of a 1000x1000 replay; p95 of a 5000-node cycle page")
    bst.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/schedviz_bench"))
    bst.add_argument("--requests", type=int, default=200)
    bst.add_argument(
        "--pods-per-node",
        type=int,
        default=0,
        metavar="K",
        help="a real-size replay instead: the dense cluster of `schedviz bench --pods-per-node`, every node evaluated",
    )
    bst.add_argument("--nodes", type=int, default=5000, help="with --pods-per-node: nodes (default 5000)")
    bst.add_argument("--pods", type=int, default=1000, help="with --pods-per-node: pending pods, i.e. cycles (default 1000)")
    bst.set_defaults(func=_bench_storage)
    bu = sub.add_parser(
        "bench-upload", help="a dense cluster's compressed dump uploaded through the API and read on the worker"
    )
    bu.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/schedviz_bench"))
    bu.add_argument("--nodes", type=int, default=5000)
    bu.add_argument("--pods-per-node", type=int, default=30)
    bu.add_argument("--pending", type=int, default=1000)
    bu.add_argument("--codec", choices=["gzip", "zstd"], default="gzip")
    bu.add_argument("--dump", metavar="PATH", help="upload this compressed dump instead of writing one")
    bu.set_defaults(func=_bench_upload)
    bb = sub.add_parser(
        "bench-browser",
        help="headless Chromium: from a 5000-node cycle's last websocket message to its verdicts on screen",
    )
    bb.add_argument("--nodes", type=int, default=5000)
    bb.add_argument("--pods", type=int, default=30, help="pending pods (cycles) of the synthetic snapshot")
    bb.add_argument("--steps", type=int, default=15, help="cycles played back one Step at a time")
    bb.add_argument(
        "--pods-per-node",
        type=int,
        default=0,
        metavar="K",
        help="the dense cluster of `schedviz bench --pods-per-node` instead, uploaded gzip'd: also the long tasks "
        "while following, the upload until ready, and a cycle, Why here? and Cluster over time opened",
    )
    bb.add_argument("--chromium", default=os.environ.get("SCHEDVIZ_CHROMIUM", "/usr/bin/chromium"))
    bb.add_argument("--output", metavar="FILE", help="also write the figures and samples as JSON")
    bb.add_argument("--json", action="store_true")
    bb.set_defaults(func=_bench_browser)
    d = sub.add_parser("demo", help="replay the bundled sample cluster")
    d.set_defaults(func=_demo)
    ic = sub.add_parser("import-cluster", help="read a live cluster once and store it as a snapshot")
    ic.add_argument("--kubeconfig", required=True, help="kubeconfig file")
    ic.add_argument("--context", help="context to use (default: the kubeconfig's current context)")
    ic.add_argument("--namespace", action="append", help="only these namespaces' pods (repeatable)")
    ic.add_argument("--user", default="", help="owner of the snapshot (default: the demo user)")
    ic.add_argument("--name", default="", help="snapshot name")
    ic.add_argument("--output", help="write the objects to this file instead of storing a snapshot")
    ic.add_argument(
        "--page-size", type=int, default=500, metavar="N", help="objects per list request (limit/continue; default 500)"
    )
    ic.set_defaults(func=_import_cluster)
    sv = sub.add_parser("serve", help="start the web application (ASGI server)")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8000)
    sv.add_argument("--demo", action="store_true", help="create the demo user and load the sample cluster")
    sv.add_argument("--no-migrate", action="store_true", help="do not apply database migrations first")
    sv.set_defaults(func=_serve)
    rp = sub.add_parser(
        "report",
        help="CI report: replay a snapshot under a candidate configuration (against a baseline)",
        description="Replay the pending pods of a snapshot under a candidate KubeSchedulerConfiguration "
        "(and a baseline one), write JUnit XML, Markdown and JSON reports, and exit 1 when a --fail-on "
        "policy fails (2 on bad input or a server error).",
    )
    rp.add_argument("--snapshot", required=True, metavar="FILE", help="cluster snapshot (YAML/JSON)")
    rp.add_argument("--config", required=True, metavar="FILE", help="candidate KubeSchedulerConfiguration")
    rp.add_argument(
        "--baseline", metavar="FILE", help="baseline KubeSchedulerConfiguration to compare against"
    )
    rp.add_argument(
        "--fail-on",
        action="append",
        choices=("unschedulable", "changes"),
        help="exit 1 when a pending pod cannot be scheduled, or when placements differ from the baseline (repeatable)",
    )
    rp.add_argument(
        "--min-headroom",
        action="append",
        metavar="POD.yaml=N",
        help="fail unless N more copies of the pod (a file holding one Pod) fit once the pending pods are "
        "placed, under the candidate (repeatable; computed in this process, also with --server)",
    )
    rp.add_argument(
        "--junit", metavar="OUT", help="write JUnit XML (one test case per pending pod); - for stdout"
    )
    rp.add_argument("--markdown", metavar="OUT", help="write a Markdown pull-request comment; - for stdout")
    rp.add_argument("--json", metavar="OUT", help="write the report as JSON; - for stdout")
    mode = rp.add_mutually_exclusive_group(required=True)
    mode.add_argument("--local", action="store_true", help="replay in this process")
    mode.add_argument("--server", metavar="URL", help="ask a SchedViz server (POST URL/api/v1/reports/)")
    rp.add_argument("--token", metavar="T", help="API token for --server (default: $SCHEDVIZ_TOKEN)")
    rp.add_argument(
        "--timeout", type=float, default=600.0, metavar="S", help="seconds to wait for the server's report"
    )
    _cycle_timeout_option(rp)
    _plugin_module_option(rp)
    rp.set_defaults(func=_report)
    cap = sub.add_parser(
        "capacity",
        help="how many more copies of a pod the scheduler would place, where, and why not one more",
        description="Add copies of the pod (as a ReplicaSet creates them, one after another) to the "
        "snapshot's pending pods and replay them until one does not fit: how many fit, per node and per "
        "zone, and kube-scheduler's message and every node's verdict for the next copy. Preemption is a dry run.",
    )
    _plan_options(cap)
    cap.add_argument("--pod", action="append", required=True, metavar="POD.yaml", help="a file holding one Pod (repeatable: an application)")
    cap.add_argument("--max", type=int, metavar="N", help="stop after N copies of each pod (default 100000)")
    cap.add_argument(
        "--order",
        choices=("round-robin", "in-order"),
        default="round-robin",
        help="several pods: one copy of each per round until one does not fit (round-robin, the default), "
        "or all copies of the first, then of the second on top of them, ... (in-order)",
    )
    cap.set_defaults(func=_capacity)
    dr = sub.add_parser(
        "drain",
        help="cordon nodes, evict their pods as kubectl drain does, and replay the pods recreated",
        description="Cordon the nodes and evict their pods as `kubectl drain --ignore-daemonsets` would "
        "(DaemonSet and mirror pods stay; pods without a controller are deleted, not recreated), then replay "
        "the pods their controllers recreate: where each goes, which cannot be scheduled and why, and the "
        "requests before and after. Exit 1 with --fail-on unschedulable when a recreated pod stays pending.",
    )
    _plan_options(dr)
    dr.add_argument("--node", action="append", metavar="NAME", help="a node to drain (repeatable)")
    dr.add_argument("--selector", "-l", metavar="SELECTOR", help="drain the nodes this label selector matches")
    dr.add_argument(
        "--respect-pdb",
        action="store_true",
        help="evictions a PodDisruptionBudget refuses leave the pod in place (default: evict and report the budgets broken)",
    )
    dr.add_argument("--fail-on", action="append", choices=("unschedulable",), help="exit 1 when a recreated pod cannot be scheduled")
    dr.set_defaults(func=_drain)
    su = sub.add_parser(
        "scale-up",
        help="add nodes cloned from a template until the pending pods fit: how many, and which no node helps",
        description="Add nodes cloned from a template (a node of the snapshot, or a file holding one Node) one at "
        "a time and replay the pending pods, until they all fit, --max-nodes is reached, or a new node stays "
        "empty. Several --template are compared side by side.",
    )
    _plan_options(su)
    su.add_argument("--template", action="append", required=True, metavar="NODE_OR_FILE", help="a node name or a Node file (repeatable)")
    su.add_argument("--max-nodes", type=int, default=10, metavar="K", help="add at most K nodes (default 10)")
    su.set_defaults(func=_scale_up)
    e = sub.add_parser(
        "explain",
        help="why a pending pod landed where it did, why not elsewhere, and what would make it fit",
    )
    e.add_argument("paths", nargs="+", metavar="FILE", help="snapshot files or directories (YAML/JSON)")
    e.add_argument("--pod", required=True, metavar="NS/NAME", help="the pending pod to explain")
    _config_option(e)
    e.add_argument(
        "--node",
        action="append",
        metavar="N",
        help="compare with (or explain the rejection of) this node (repeatable)",
    )
    e.add_argument(
        "--all-nodes", action="store_true", help="replay the earlier cycles with every node filtered and scored"
    )
    e.add_argument(
        "--preemption",
        choices=("evict", "dry-run"),
        default="evict",
        help="how the earlier cycles' preemptions play out (as for replay)",
    )
    e.add_argument("--format", choices=("json", "text"), default="text")
    e.add_argument("--pretty", action="store_true", help="indent JSON output")
    _plugin_module_option(e)
    e.set_defaults(func=_explain)
    ra = sub.add_parser(
        "race",
        help="several schedulers deciding from the same stale snapshot: binding conflicts, kubelet rejections",
        description="Replay the pending pods of a snapshot through several scheduler processes at once, each "
        "with its own configuration and its own view of the cluster (the snapshot plus its own pods), "
        "interleaved round-robin on the replay clock; then apply their bindings as the API server does "
        "(a pod bound twice: Conflict) and admit the bound pods as each node's kubelet does (OutOfcpu, ...).",
    )
    ra.add_argument("paths", nargs="+", metavar="FILE", help="snapshot files or directories (YAML/JSON)")
    ra.add_argument(
        "--scheduler",
        action="append",
        required=True,
        metavar="NAME=CONFIG_FILE",
        help="a scheduler process and its KubeSchedulerConfiguration (repeatable; processes act in this "
        "order at the same instant)",
    )
    _all_nodes_option(ra)
    ra.add_argument("--format", choices=("json", "table"), default="table")
    ra.add_argument("--pretty", action="store_true", help="indent JSON output")
    _plugin_module_option(ra)
    ra.set_defaults(func=_race)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # The command line is the user's own program: extenders are called as kube-scheduler calls them
    # (the server, `schedviz serve`, installs its guarded transport when Django starts instead).
    previous = None if args.func is _serve else extender_transport.set_transport(extender_transport.DIRECT)
    try:
        _load_plugins(args)
        code = int(args.func(args))
        if argv is None and _RETAINED:
            _exit_without_freeing(code)
        return code
    except (InputError, ConfigError) as exc:
        print(f"schedviz: error: {exc}", file=sys.stderr)
        return 2
    except SchedVizError as exc:
        print(f"schedviz: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly, and keep the interpreter's last flush quiet too
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    finally:
        _RETAINED.clear()
        if previous is not None:
            extender_transport.set_transport(previous)


# What a one-shot command read (a snapshot and its replay: millions of objects for a dense cluster),
# kept alive past the command so that the process, run from the command line, ends without freeing
# it object by object (1.5 s for a 150,000-pod snapshot). Called in-process, it is freed as usual.
_RETAINED: list[object] = []


def _exit_without_freeing(code: int) -> None:
    """End the process now: what the interpreter's own exit would do, less freeing every object."""
    import atexit

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        raise  # the reader went away: main's handler
    except (OSError, ValueError):
        return  # the interpreter's exit reports it
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
