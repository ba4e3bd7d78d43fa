"""The engine's imports point down: each module imports only modules of its own layer or of the layers
below it, and nothing outside the engine but the standard library and third-party packages (never
Django, never the rest of SchedViz).

Every import counts: at module level, inside functions and under ``TYPE_CHECKING``. The layers, from
the bottom up:

- vocabulary: errors, Kubernetes quantities, field errors/durations/name formats (apimachinery),
  feature gates, YAML bounds, content keys, streamed JSON;
- model: the objects of a snapshot and the cluster state built from them, with the helpers that read
  them (labels, resources, taints, node selectors), the replay's budget, and CEL as Kubernetes
  evaluates and limits it (device selectors: the API server's validation and the DynamicResources
  plugin both use it);
- framework: the plugin contract (statuses, cycle state, extension point protocols, the stage a trace
  records, the extender interface, what a diagnosis says);
- records: the trace format and the helpers plugins write their args declarations with;
- registry: plugin names -> classes (runtime/registry.py: it imports in-tree plugin modules by name,
  on first use, never with an import statement);
- config: a KubeSchedulerConfiguration read against the registry;
- snapshots: loading and validating snapshot objects;
- plugins: the in-tree plugins;
- runtime: the framework executor, the queue, extenders, the replay and the race analysis;
- explain: why here, why not there;
- the package's own ``__init__`` (the public API).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "schedviz" / "engine"
PACKAGE = "schedviz.engine"

# bottom up; a module belongs to the first layer one of whose prefixes names it or a package holding it
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("vocabulary", ("errors", "quantity", "yamlbounds", "apimachinery", "features", "contentkey", "jsonstream")),
    ("model", ("budget", "labels", "resources", "objects", "cluster", "taints", "nodeselectors", "cel")),
    ("framework", ("framework",)),
    ("records", ("trace", "plugin_args")),
    ("registry", ("runtime.registry",)),
    ("config", ("config",)),
    ("snapshots", ("validation", "podsiblings", "loader")),
    ("plugins", ("plugins",)),
    ("runtime", ("runtime",)),
    ("explain", ("explain",)),
    ("api", ("",)),  # schedviz/engine/__init__.py
]
FORBIDDEN_OUTSIDE = ("django", "rest_framework", "channels", "celery", "schedviz")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def layer_of(module: str) -> int:
    """The layer index of an engine module ("" is the package itself)."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if prefix == "" and module == "":
                return i
            inside = bool(prefix) and (module == prefix or module.startswith(prefix + "."))
            if inside and (best is None or len(prefix) > best[0]):
                best = (len(prefix), i)
    if best is None:
        raise AssertionError(f"schedviz.engine.{module} belongs to no layer: add it to LAYERS")
    return best[1]


def _is_package(module: str) -> bool:
    return MODULES.get(module, Path()).name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute dotted name an ImportFrom names (before its imported names)."""
    if node.level == 0:
        return node.module or ""
    base = f"{PACKAGE}.{module}" if module else PACKAGE
    parts = base.split(".")
    if not _is_package(module):
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def imports_of(module: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``module`` (function-level and TYPE_CHECKING
    ones included); ``from pkg import sub`` names the submodule when there is one."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                inner = sub[len(PACKAGE) + 1 :] if sub.startswith(PACKAGE + ".") else None
                out.append((node.lineno, sub if inner is not None and inner in MODULES else target))
    return out


def _engine_name(name: str) -> str | None:
    if name == PACKAGE:
        return ""
    if name.startswith(PACKAGE + "."):
        return name[len(PACKAGE) + 1 :]
    return None


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    mine = layer_of(module)
    wrong = []
    for line, name in imports_of(module):
        inner = _engine_name(name)
        if inner is None:
            top = name.split(".")[0]
            if top in FORBIDDEN_OUTSIDE:
                wrong.append(f"line {line}: imports {name} (the engine imports no Django and no SchedViz app)")
            continue
        if inner == module:
            continue
        theirs = layer_of(inner)
        if theirs > mine:
            wrong.append(
                f"line {line}: imports {name} ({LAYERS[theirs][0]}), above {LAYERS[mine][0]}"
            )
    assert not wrong, f"schedviz.engine.{module or '__init__'}:\n" + "\n".join(wrong)


def test_plugins_do_not_import_the_runtime() -> None:
    """What a plugin needs from the runtime comes through the framework handle."""
    for module in MODULES:
        if layer_of(module) != layer_of("plugins"):
            continue
        for line, name in imports_of(module):
            inner = _engine_name(name)
            assert inner is None or not (inner == "runtime" or inner.startswith("runtime.")), (
                f"schedviz.engine.{module} line {line} imports {name}"
            )


def test_the_layer_test_sees_imports() -> None:
    """The resolution the other tests rely on: relative, submodule and function-level imports."""
    names = {name for _, name in imports_of("runtime.framework")}
    assert f"{PACKAGE}.runtime.registry" in names
    assert f"{PACKAGE}.framework" in names
    assert layer_of("runtime.registry") < layer_of("config") < layer_of("plugins") < layer_of("runtime")
