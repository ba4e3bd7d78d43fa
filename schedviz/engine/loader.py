"""Reading cluster snapshots: what ``kubectl get ... -o yaml|json`` prints.

Accepted: a ``kind: List`` (YAML or JSON), multi-document YAML, a single object, a JSON array, a
conformance-style scenario (``{"nodes": [...], "pods": [...]}`` or ``{"items": [...]}``), or a
directory of such files. Errors name the file, the object and the field.

Every object is checked against the API server's validation as it is loaded (``validation.py``): an
object kube-apiserver would have refused is not replayed. The problems of a snapshot are collected
(at most ``MAX_PROBLEMS``) and raised together as one ``InvalidSnapshot``.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import jsonstream
from .cluster import ClusterState, ObjectStore
from .errors import InputError
from .objects import KubeObject, Node, Pod, PodTemplate, PodTemplates
from .podsiblings import Sibling, SiblingReader
from .validation import InvalidSnapshot, ObjectProblem, ProblemCollector, Validator, object_ident

# Kinds the engine keeps; anything else is listed as ignored.
KEPT_KINDS = frozenset(
    {
        "Namespace",
        "Service",
        "ReplicaSet",
        "StatefulSet",
        "ReplicationController",
        "Deployment",
        "PriorityClass",
        "PodDisruptionBudget",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "CSIStorageCapacity",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceClass",
        "ResourceSlice",
        "PodGroup",
        "VolumeAttachment",
    }
)
SUFFIXES = (".yaml", ".yml", ".json")
# Problems collected from one snapshot before loading stops (the web upload's default bound too).
MAX_PROBLEMS = 100


try:  # libyaml's parser when PyYAML has it: several times faster on a dense dump's YAML form
    _SafeBase: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _SafeBase = yaml.SafeLoader


class _StrictLoader(_SafeBase):  # type: ignore[valid-type,misc]
    """The safe loader (libyaml's parser, PyYAML's safe constructors) refusing duplicate keys."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise InputError(f"duplicate key {key!r} at line {key_node.start_mark.line + 1}")
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


@dataclass
class Snapshot:
    """The objects of a snapshot, split the way the scheduler sees them."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    objects: list[KubeObject] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)
    config: dict[str, Any] | None = None
    name: str = ""
    # the pods by key, and the pods it was made from (``pod``)
    _by_key: dict[str, Pod] = field(default_factory=dict, init=False, repr=False, compare=False)
    _indexed: list[Pod] | None = field(default=None, init=False, repr=False, compare=False)

    def pod(self, key: str) -> Pod | None:
        """The pod named ``key`` (namespace/name; the first of that key), found through an index
        made on the first question, and made again when the pods are not the ones it was made from
        (compared by identity, a pass at C speed): a web process asks about one pod of a
        150,000-pod snapshot it keeps at every question."""
        if self._indexed != self.pods:
            index: dict[str, Pod] = {}
            for p in self.pods:
                index.setdefault(p.key, p)
            self._by_key = index
            self._indexed = list(self.pods)
        return self._by_key.get(key)

    @property
    def pending(self) -> list[Pod]:
        return [p for p in self.pods if not p.node_name and not p.terminal]

    @property
    def running(self) -> list[Pod]:
        return [p for p in self.pods if p.node_name and not p.terminal]

    def store(self) -> ObjectStore:
        return ObjectStore(self.objects)

    def cluster(self) -> ClusterState:
        """The scheduler cache: nodes, plus every non-terminal pod already bound to a known node."""
        c = ClusterState(self.nodes, self.store())
        index = c.index
        c.add_pods((p, i) for p in self.running if (i := index.get(p.node_name)) is not None)
        return c


_TOO_DEEP = "arrays and objects nested too deeply to read (hundreds of levels; a Kubernetes object has a few dozen)"


@contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """The cyclic garbage collector off while a snapshot is read: decoding and viewing 150,000 pods
    allocates millions of containers and none of them is garbage, yet every collection would walk
    them all (it halves the reading time of a dense dump). The collector's state is restored.

    ``freeze``: then move everything allocated so far out of the collector's sight (``gc.freeze``),
    so the replay that follows does not walk the snapshot's millions of objects either, first as
    young objects and then at every full collection. Frozen objects are still freed when nothing
    refers to them; ``gc.unfreeze()`` hands them back (a long-lived process does it when the replay
    is done)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()


def parse_documents(text: str, source: str) -> list[Any]:
    """Documents of a YAML or JSON text."""
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        try:
            return [jsonstream.loads(text)]
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", source=source
            ) from None
        except RecursionError:  # the decoder recurses once per level: no Kubernetes object nests so deep
            raise InputError(_TOO_DEEP, source=source) from None
    try:
        return [d for d in yaml.load_all(text, Loader=_StrictLoader) if d is not None]
    except RecursionError:
        raise InputError(_TOO_DEEP, source=source) from None
    except InputError as exc:
        raise exc.with_source(source) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        if "maximum nesting depth" in problem:  # libyaml stops at 1000 levels
            raise InputError(_TOO_DEEP, source=source) from None
        raise InputError(f"invalid YAML{where}: {problem}", source=source) from None


def _flatten(doc: Any, source: str, where: str) -> Iterator[tuple[dict[str, Any], str]]:
    if isinstance(doc, list):
        for i, d in enumerate(doc):
            yield from _flatten(d, source, f"{where}[{i}]")
        return
    if not isinstance(doc, dict):
        raise InputError(f"expected a Kubernetes object, got {type(doc).__name__}", source=source, obj=where)
    kind = doc.get("kind")
    if kind is None and ("nodes" in doc or "pods" in doc or "items" in doc):
        # a conformance-style scenario
        for key in ("nodes", "pods", "items"):
            items = doc.get(key) or []
            if not isinstance(items, list):
                raise InputError("expected a list", source=source, field=key)
            for i, d in enumerate(items):
                yield from _flatten(d, source, f"{key}[{i}]")
        return
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise InputError("expected a list", source=source, obj=where, field="items")
        for i, d in enumerate(items):
            yield from _flatten(d, source, f"{where}.items[{i}]" if where else f"items[{i}]")
        return
    yield doc, where


def files_of(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in SUFFIXES))
        elif path.exists():
            out.append(path)
        else:
            raise InputError("no such file or directory", source=str(path))
    return out


def load_texts(texts: Iterable[tuple[str, str]], *, freeze: bool = False) -> Snapshot:
    """Build a snapshot from (source name, text) pairs (``freeze``: see ``gc_paused``)."""
    with gc_paused(freeze):
        return load_documents(
            (source, doc) for source, text in texts for doc in parse_documents(text, source)
        )


def load_objects(
    objects: Iterable[dict[str, Any]],
    config: dict[str, Any] | None = None,
    name: str = "",
    *,
    freeze: bool = False,
) -> Snapshot:
    """Build a snapshot from already parsed objects (as stored by the web application;
    ``freeze``: see ``gc_paused``)."""
    with gc_paused(freeze):
        snap = load_documents(("snapshot", o) for o in objects)
    if config is not None:
        snap.config = config
    snap.name = name or snap.name
    return snap


def load_documents(docs: Iterable[tuple[str, Any]], *, share: bool = True) -> Snapshot:
    """Build a snapshot from (source name, parsed document) pairs.

    Raises ``validation.InvalidSnapshot`` (an InputError) listing every problem found, up to
    ``MAX_PROBLEMS``: objects the API server would refuse, and fields the engine cannot read.

    Pods of one template share what can be shared (``objects.PodTemplates``): equal affinity,
    tolerations, spread constraints and node selectors become one object, and their resource
    requests are computed once. ``share=False`` reads every pod on its own: the reference the
    shared reading is checked against (the same snapshot, errors and replays)."""
    snap = Snapshot()
    pod_index = 0
    validator = Validator(share_sections=share)
    templates = PodTemplates() if share else None
    problems = ProblemCollector(MAX_PROBLEMS)
    items = iter(docs)
    while True:
        try:
            source, doc = next(items)
        except StopIteration:
            break
        except InvalidSnapshot:
            raise
        except InputError as exc:  # a file that cannot be read: what follows is not read either
            problems.add(exc)
            break
        located = ""
        if isinstance(doc, _Located):  # an item of a streamed file, labelled
            located, doc = doc.where, doc.obj
        elif isinstance(doc, dict) and doc.get("kind") == "KubeSchedulerConfiguration":
            snap.config = doc
            continue
        sibling: Sibling | None = None
        if type(doc) is Sibling:  # a pod read through its template's first pod (``podsiblings``)
            sibling, doc = doc, doc.obj
        if not located and isinstance(doc, dict) and doc.get("kind") is None and isinstance(doc.get("config"), dict):
            snap.config = doc["config"]
            snap.name = str(doc.get("name") or snap.name)
        try:
            for obj, where in _flatten(doc, source, located):
                kind = obj.get("kind")
                label = where or "document"
                template: PodTemplate | None = None
                if kind == "Pod" and templates is not None:
                    if sibling is None:
                        template = templates.template_of(obj, json_only=bool(located))
                    elif sibling.is_first:
                        template = sibling.first.template = templates.template_of(obj, json_only=True)
                    else:
                        template = sibling.first.template
                        if template is not None:
                            templates.adopt(obj, volumes_shared=True)
                errors = validator.validate(obj) if template is None else validator.validate_pod(obj, template)
                if errors:
                    ident = object_ident(obj) or (f"{kind} at {label}" if where else str(kind))
                    for error in errors:
                        problems.add(ObjectProblem(error, source=source, obj=ident))
                    continue
                try:
                    if kind == "Node":
                        snap.nodes.append(Node(obj))
                    elif kind == "Pod":
                        snap.pods.append(Pod(obj, pod_index, templates, template))
                        pod_index += 1
                    elif kind == "KubeSchedulerConfiguration":
                        snap.config = obj
                    elif isinstance(kind, str) and kind in KEPT_KINDS:
                        snap.objects.append(KubeObject(obj))
                    elif isinstance(kind, str):
                        snap.ignored[kind] = snap.ignored.get(kind, 0) + 1
                    else:
                        raise InputError("kind is required", obj=label, field="kind")
                except InputError as exc:
                    where_ = exc.obj or label
                    problems.add(InputError(exc.problem, source=source, obj=where_, field=exc.field))
        except InvalidSnapshot:
            raise
        except InputError as exc:  # the document's structure (not an object, items not a list, ...)
            problems.add(exc.with_source(source))
    problems.raise_if_any()
    _check_unique(snap)
    resolve_priorities(snap)
    return snap


def _check_unique(snap: Snapshot) -> None:
    seen: set[str] = set()
    for n in snap.nodes:
        if n.name in seen:
            raise InputError("duplicate node name", obj=n.ident, field="metadata.name")
        seen.add(n.name)
    seen = set()
    for p in snap.pods:
        if p.key in seen:
            raise InputError("duplicate pod", obj=p.ident, field="metadata.name")
        seen.add(p.key)


def resolve_priorities(snap: Snapshot) -> None:
    """What the Priority admission plugin writes into spec.priority when a pod was created."""
    classes = {o.name: o.raw for o in snap.objects if o.kind == "PriorityClass"}
    default = next((c for c in classes.values() if c.get("globalDefault")), None)
    for p in snap.pods:
        if p.priority is not None:
            continue
        pc: dict[str, Any] | None = None
        if p.priority_class_name:
            pc = classes.get(p.priority_class_name)
            if pc is None and p.priority_class_name == "system-node-critical":
                p.priority = 2000001000
                continue
            if pc is None and p.priority_class_name == "system-cluster-critical":
                p.priority = 2000000000
                continue
        elif default is not None:
            pc = default
        if pc is not None:
            v = pc.get("value", 0)
            p.priority = int(v) if isinstance(v, int) and not isinstance(v, bool) else 0
            if "preemptionPolicy" in pc and not p.raw.get("spec", {}).get("preemptionPolicy"):
                p.preemption_policy = str(pc["preemptionPolicy"])


class _Located:
    """An object of a file read as a stream (``jsonstream``), with the label ``_flatten`` gives it."""

    __slots__ = ("obj", "where")

    def __init__(self, where: str, obj: Any) -> None:
        self.where = where
        self.obj = obj


# A JSON file at least this large is read item by item (``jsonstream``): its text is never held whole.
STREAM_BYTES = 64 << 20


def _streams(f: Path) -> bool:
    try:
        if f.stat().st_size < STREAM_BYTES:
            return False
        with f.open("rb") as fh:
            head = fh.read(4096).lstrip()
    except OSError:
        return False
    return head[:1] in (b"{", b"[")


def _documents_of(files: list[Path], stream: bool = True) -> Iterator[tuple[str, Any]]:
    """Each file's documents, read one file at a time: a file's text is dropped once decoded, and
    a large JSON file is read item by item, its pods through their templates' first pods
    (``podsiblings``)."""
    reader = SiblingReader().read
    for f in files:
        source = str(f)
        if stream and _streams(f):
            try:
                for where, obj in jsonstream.items(f, source, reader):
                    yield source, (_Located(where, obj) if where else obj)
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"not valid UTF-8 text (byte {exc.start}: {exc.reason})", source=source
                ) from None
            continue
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text (byte {exc.start}: {exc.reason})", source=source) from None
        docs = parse_documents(text, source)
        del text
        for doc in docs:
            yield source, doc


def load_paths(paths: Iterable[str | Path], *, freeze: bool = False) -> Snapshot:
    """Build a snapshot from files and directories (``freeze``: see ``gc_paused``)."""
    paths = list(paths)
    files = files_of(paths)
    with gc_paused(freeze):
        try:
            snap = load_documents(_documents_of(files))
        except jsonstream.NotStreamable:  # a shape read whole (jsonstream's doc): from the start
            snap = load_documents(_documents_of(files, stream=False))
    if not snap.name:
        snap.name = ", ".join(str(p) for p in paths)
    return snap
