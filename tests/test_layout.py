"""The package layout the README's map describes (its *Layout* table): each package imports only what
the map says it may, no package imports one that imports it back, and the plain packages import no
Django.

Imports are read from the source (every ``import``, also those inside functions), a package being
``schedviz.<first component>``; the project's root modules (``settings``, ``urls``, ``celery``, ...)
count as packages of their own.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "schedviz"
PLAIN = ("engine", "lib", "outbound", "cycles", "planning", "reports", "kube")
APPS = ("accounts", "ingestion", "replays", "live", "plans")
KNOWN_CYCLES: list[set[str]] = []


def packages() -> list[str]:
    return sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file())


def root_modules() -> list[str]:
    return sorted(p.stem for p in SRC.glob("*.py") if p.stem != "__init__")


def _package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "schedviz" or len(parts) < 2:
        return None
    return parts[1]


def import_graph() -> dict[str, set[str]]:
    """package or root module -> the packages and root modules it imports."""
    graph: dict[str, set[str]] = {name: set() for name in packages() + root_modules()}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        if "migrations" in rel.parts or "explorer" in rel.parts:
            continue
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        module = ".".join(parts)
        source = _package(module)
        if source is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = parts if is_package else parts[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                if target == "schedviz":  # from schedviz import x: the module or package x
                    targets = [f"schedviz.{a.name}" for a in node.names]
                else:
                    targets = [target]
            for target in targets:
                dest = _package(target)
                if dest is not None and dest != source:
                    graph[source].add(dest)
    return graph


def documented() -> dict[str, set[str] | None]:
    """package -> what the README's Layout table says it may import (None: anything)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    out: dict[str, set[str] | None] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3:
            continue
        name = re.fullmatch(r"`(\w+)/`", cells[0])
        if name:
            out[name.group(1)] = set(re.findall(r"`(\w+)`", cells[2]))
        elif cells[0] == "root modules":
            out.update(dict.fromkeys(root_modules()))
    return out


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_readme_maps_every_package() -> None:
    mapped = documented()
    assert set(mapped) == set(packages()) | set(root_modules())


def test_the_readme_lists_the_packages_bottom_up() -> None:
    seen: set[str] = set(root_modules())
    for name, allowed in documented().items():
        if allowed is not None:
            assert allowed <= seen, f"{name} may import {sorted(allowed - seen)}, listed below it"
        seen.add(name)


def test_every_package_imports_only_what_the_readme_allows() -> None:
    graph, mapped = import_graph(), documented()
    extra = {
        name: sorted(graph[name] - allowed)
        for name, allowed in mapped.items()
        if allowed is not None and graph[name] - allowed
    }
    assert extra == {}, "imports the README's Layout table does not list"


def test_no_package_imports_one_that_imports_it_back() -> None:
    assert [c for c in cycles(import_graph()) if c not in KNOWN_CYCLES] == []


def test_the_shared_plumbing_imports_no_app() -> None:
    graph = import_graph()
    assert not graph["api"] & {*APPS, "streaming"}
    assert not graph["streaming"] & {"ingestion", "replays", "live"}  # accounts: its token auth


def test_the_plain_packages_import_no_django() -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        f"for name in {PLAIN!r}:\n"
        "    pkg = importlib.import_module('schedviz.' + name)\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "print(sorted(m for m in ('django', 'rest_framework', 'channels') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
