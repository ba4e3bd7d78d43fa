"""The ``schedviz`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .engine import ConfigError, InputError, ReplayOptions, SchedVizError, load_config, load_paths
from .engine.runtime import registry
from .engine.runtime.replay import Replay
from .engine.trace import CycleRecord, ReplayTrace

SAMPLE = Path(__file__).parent / "samples" / "cluster.yaml"


def _replay(args: argparse.Namespace) -> int:
    snapshot = load_paths(args.paths)
    cfg_source: Any = snapshot.config
    if args.config:
        cfg_source = args.config
    config = load_config(cfg_source, implements=registry.implements_table())
    rp = Replay(snapshot, config, ReplayOptions(all_nodes=args.all_nodes))
    trace = rp.run()
    if args.format == "json":
        json.dump(trace.to_dict(), sys.stdout, indent=1 if args.pretty else None)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_table(trace, top=args.top))
    return 0


def render_table(trace: ReplayTrace, top: int = 3) -> str:
    """A readable report: per pod its result, node, best nodes with per-plugin scores, and the message."""
    lines: list[str] = []
    for c in trace.cycles:
        head = f"{c.seq:>4}  {c.pod:<40} {c.result:<14} {c.selected_node or '-'}"
        lines.append(head)
        if c.message:
            lines.append(f"      {c.message}")
        if c.error and c.result in ("NotHandled", "Gated", "Error"):
            lines.append(f"      {c.error}")
        lines.extend(_top_nodes(trace, c, top))
    counts: dict[str, int] = {}
    for c in trace.cycles:
        counts[c.result] = counts.get(c.result, 0) + 1
    lines.append("")
    lines.append("summary: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return "\n".join(lines) + "\n"


def _top_nodes(trace: ReplayTrace, c: CycleRecord, top: int) -> list[str]:
    if not c.scored or c.feasible is None or c.totals is None or c.normalized_scores is None:
        return []
    order = sorted(range(len(c.feasible)), key=lambda k: (-int(c.totals[k]), int(c.feasible[k])))  # type: ignore[index]
    out = []
    for k in order[:top]:
        parts = []
        for p, name in enumerate(c.score_plugins):
            w = int(c.normalized_scores[p, k]) * c.score_weights[p]
            if w:
                parts.append(f"{name}={w}")
        node = trace.node_names[int(c.feasible[k])]
        out.append(f"        {node:<24} total {int(c.totals[k]):>5}  " + " ".join(parts))
    return out


def _bench(args: argparse.Namespace) -> int:
    from .engine.bench import run_bench

    sizes = args.nodes or [500, 1000, 5000]
    results = [run_bench(n, args.pods, all_nodes=not args.sampled) for n in sizes]
    if args.json:
        for r in results:
            print(json.dumps(r))
    else:
        for r in results:
            print(
                f"{r['nodes']:>6} nodes x {r['pods']} pods: {r['podsPerSecond']:8.1f} pods/s, "
                f"peak memory {r['peakMemoryBytes'] / 2**20:8.1f} MiB ({r['mode']})"
            )
    return 0


def _demo(args: argparse.Namespace) -> int:
    ns = argparse.Namespace(paths=[str(SAMPLE)], config=None, all_nodes=False, format="table", top=3, pretty=False)
    return _replay(ns)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedviz", description="Replay and explain kube-scheduler decisions.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("replay", help="replay the pending pods of a snapshot")
    r.add_argument("paths", nargs="+", help="snapshot files or directories (YAML/JSON, kind: List, multi-document)")
    r.add_argument("--config", help="KubeSchedulerConfiguration file (YAML or JSON)")
    r.add_argument("--all-nodes", action="store_true", help="filter and score every node (percentageOfNodesToScore=100)")
    r.add_argument("--format", choices=("json", "table"), default="table")
    r.add_argument("--top", type=int, default=3, help="nodes shown per pod in the table")
    r.add_argument("--pretty", action="store_true", help="indent JSON output")
    r.set_defaults(func=_replay)
    b = sub.add_parser("bench", help="replay a synthetic cluster and print pods/second and peak memory")
    b.add_argument("--nodes", type=int, action="append", help="cluster size (repeatable); default 500, 1000, 5000")
    b.add_argument("--pods", type=int, default=1000)
    b.add_argument("--sampled", action="store_true", help="use the default node sampling instead of every node")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=_bench)
    d = sub.add_parser("demo", help="replay the bundled sample cluster")
    d.set_defaults(func=_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (InputError, ConfigError) as exc:
        print(f"schedviz: error: {exc}", file=sys.stderr)
        return 2
    except SchedVizError as exc:
        print(f"schedviz: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
