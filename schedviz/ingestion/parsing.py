"""Reading an uploaded cluster snapshot: formats, validation and defences against hostile input.

``parse_upload(data, filename, limits)`` accepts what people export from a cluster:

- what ``kubectl get ... -o yaml|json`` prints: a ``kind: List`` (or any ``*List``), multi-document
  YAML, a single object, a JSON array of objects;
- the export JSON of kubernetes-sigs/kube-scheduler-simulator (``ResourcesForSnap``/``ResourcesForLoad``:
  ``pods``, ``nodes``, ``pvs``, ``pvcs``, ``storageClasses``, ``priorityClasses``, ``namespaces``,
  ``schedulerConfig``; its items carry no ``kind``, which is set from the key);
- the conformance scenario shape ``{"name", "config", "nodes", "pods"}`` / ``{"name", "config", "items"}``;
- a ``.tar.gz``/``.tgz``/``.tar``/``.zip`` of such files (members ``*.yaml``, ``*.yml``, ``*.json``;
  other members are skipped), or one such file compressed with gzip.

Everything is validated before anything is returned: every object is checked against the API
server's validation (``schedviz.engine.validation``: what kube-apiserver would refuse, in its wording)
and goes through the engine's own views (``Node``, ``Pod``, ``KubeObject``), and a
KubeSchedulerConfiguration through ``load_config``; problems are collected (up to
``Limits.max_problems``) and raised together as ``UploadError``, each naming the document, the object,
the field and what is wrong.

Hostile input is refused early and cheaply: a raw size limit; archives bounded by member count and by
decompressed size (declared sizes checked first, bytes actually produced counted while reading);
unsafe archive members (absolute paths, ``..``, links, devices) refused; YAML is read straight from
the parser's event stream, so nesting depth, alias use and alias expansion are measured before any
large structure exists, and only the plain YAML types are accepted (no tags beyond ``!!str``,
``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!map``, ``!!seq``); a JSON text's nesting depth, its
values and the Kubernetes objects of its top-level array or ``*List`` are counted on its bytes before
it is built; duplicate keys, invalid UTF-8, NaN/Infinity and non-Kubernetes documents are reported.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import json
import math
import os
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

from schedviz.engine.config import load_config
from schedviz.engine.errors import ConfigError, InputError
from schedviz.engine.jsonstream import SURROGATE_ESCAPE, go_strings
from schedviz.engine.loader import KEPT_KINDS, Snapshot, load_objects
from schedviz.engine.objects import KubeObject, Node, Pod, PodTemplate, PodTemplates
from schedviz.engine.validation import Validator, object_ident

MiB = 1024 * 1024
CONFIG_KIND = "KubeSchedulerConfiguration"
CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
_CHUNK = MiB


# --------------------------------------------------------------------------------------------------
# Public types


@dataclass(frozen=True)
class Limits:
    """Bounds on what an upload may cost. ``from_env`` reads each from ``SCHEDVIZ_<NAME>``.

    Sized for a production cluster at Kubernetes' own limits and beyond: 5,000 nodes running 110 pods
    each (550,000 pods) as ``kubectl get -o json`` prints them is 1.5 to 2 GB of JSON, 40 to 60 MB
    gzip'd. Uploads are read in one of two ways (``services.py`` decides):

    - *whole, in the request* (``parse_upload``): small uploads (up to ``inline_upload_bytes``, not
      zstd, and not a gzip stream declaring more than ``inline_decompressed_bytes``);
    - *as a stream, on the worker* (``streaming.parse_stream``): the others, stored as received first.

    The limits:

    - ``max_upload_bytes``: the upload as received (1 GiB: a 5,000 x 30 dump uploads uncompressed,
      larger ones gzip'd or zstd'd).
    - ``max_decompressed_bytes``: the text of a streamed upload once decompressed (4 GiB).
      ``max_compression_ratio``: a streamed upload whose text grows beyond this many times the
      compressed bytes read (once past 64 MiB) is refused as a bomb (500: a real dump gzip'd is 15 to
      50 times smaller, zstd -19 of a very repetitive one up to about 260).
    - ``max_file_bytes``: a file read whole: an upload read in the request once decompressed, an
      archive's members together (declared sizes checked first, bytes actually produced counted), a
      YAML file or a non-JSON archive member of a streamed upload (200 MiB).
    - ``max_object_bytes``: one item of a streamed JSON file (an element of its top-level array or of
      its ``items``), or one other member of its top-level object (16 MiB; etcd stores at most 1.5 MiB
      an object).
    - ``max_objects``: Kubernetes objects (of any kind) in an upload (1,000,000: 550,000 pods with
      their nodes, ReplicaSets, Services and the rest); a JSON file read whole whose top-level array
      or ``*List`` is over it is refused before it is built (``json_objects``).
      ``max_depth``: nesting of mappings and lists.
    - ``max_archive_members``: entries in an archive.
    - ``max_yaml_aliases``: aliases in one YAML document; ``max_alias_expansion``: nodes aliases may add
      to an upload beyond the nodes its text holds (so aliases at most about double a document).
    - ``max_yaml_nodes``: YAML parser events in an upload (a scalar or an alias is one, a mapping, a
      sequence or a document two: its start and its end). YAML is read at a few hundred thousand to a
      million events a second; this bounds the time (under 5 s of CPU). 1.5M events is about 13 MiB
      of ordinary ``kubectl -o yaml`` output; larger clusters are uploaded as JSON, which is read at C
      speed.
    - ``max_json_values``: values (objects, arrays, scalars) in one JSON file read whole, counted at C
      speed before it is parsed; bounds memory (a dense JSON file can take 25 times its size). 5M
      values is more than 50 MiB of ordinary ``kubectl -o json`` output holds. A streamed JSON file
      holds one item at a time.
    - ``max_problems``: problems collected before reading stops.
    - ``inline_upload_bytes``, ``inline_decompressed_bytes``: which uploads are read in the request.
    """

    max_upload_bytes: int = 1024 * MiB
    max_decompressed_bytes: int = 4096 * MiB
    max_compression_ratio: int = 500
    max_file_bytes: int = 200 * MiB
    max_object_bytes: int = 16 * MiB
    max_objects: int = 1_000_000
    max_depth: int = 100
    max_archive_members: int = 1000
    max_yaml_aliases: int = 10_000
    max_alias_expansion: int = 100_000
    max_yaml_nodes: int = 1_500_000
    max_json_values: int = 5_000_000
    max_problems: int = 100
    inline_upload_bytes: int = 8 * MiB
    inline_decompressed_bytes: int = 32 * MiB

    ENV: ClassVar[dict[str, str]] = {
        "max_upload_bytes": "SCHEDVIZ_MAX_UPLOAD_BYTES",
        "max_decompressed_bytes": "SCHEDVIZ_MAX_DECOMPRESSED_BYTES",
        "max_compression_ratio": "SCHEDVIZ_MAX_COMPRESSION_RATIO",
        "max_file_bytes": "SCHEDVIZ_MAX_FILE_BYTES",
        "max_object_bytes": "SCHEDVIZ_MAX_OBJECT_BYTES",
        "max_objects": "SCHEDVIZ_MAX_OBJECTS",
        "max_depth": "SCHEDVIZ_MAX_DEPTH",
        "max_archive_members": "SCHEDVIZ_MAX_ARCHIVE_MEMBERS",
        "max_yaml_aliases": "SCHEDVIZ_MAX_YAML_ALIASES",
        "max_alias_expansion": "SCHEDVIZ_MAX_ALIAS_EXPANSION",
        "max_yaml_nodes": "SCHEDVIZ_MAX_YAML_NODES",
        "max_json_values": "SCHEDVIZ_MAX_JSON_VALUES",
        "max_problems": "SCHEDVIZ_MAX_PROBLEMS",
        "inline_upload_bytes": "SCHEDVIZ_INLINE_UPLOAD_BYTES",
        "inline_decompressed_bytes": "SCHEDVIZ_INLINE_DECOMPRESSED_BYTES",
    }

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Defaults overridden by ``SCHEDVIZ_MAX_UPLOAD_BYTES`` etc.; raises ValueError on a bad value."""
        env = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for f in fields(cls):
            var = cls.ENV[f.name]
            raw = env.get(var)
            if raw is None or not raw.strip():
                continue
            try:
                value = int(raw.strip())
            except ValueError:
                raise ValueError(
                    f"environment variable {var} must be a positive integer, got {raw!r}"
                ) from None
            if value <= 0:
                raise ValueError(f"environment variable {var} must be a positive integer, got {raw!r}")
            values[f.name] = value
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One thing wrong with an upload, and where: file (and document), object, field."""

    document: str = ""
    object: str = ""
    field: str = ""
    message: str

    def to_dict(self) -> dict[str, str]:
        return {
            "document": self.document,
            "object": self.object,
            "field": self.field,
            "message": self.message,
        }

    def __str__(self) -> str:
        where = [w for w in (self.document, self.object) if w]
        if self.field:
            where.append(f"field {self.field}")
        return ": ".join([*where, self.message])


class UploadError(Exception):
    """The upload was refused; ``problems`` lists every problem found (capped by ``Limits.max_problems``)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("invalid upload: " + "; ".join(str(p) for p in problems))

    @classmethod
    def from_messages(cls, document: str, messages: Iterable[str]) -> UploadError:
        """An error from plain messages (e.g. a ConfigError's problems) about one document."""
        return cls([Problem(document=document, message=str(m)) for m in messages])

    def as_dicts(self) -> list[dict[str, str]]:
        return [p.to_dict() for p in self.problems]

    def to_dict(self) -> dict[str, Any]:
        return {"message": str(self), "problems": self.as_dicts()}


@dataclass
class ParsedSnapshot:
    """A validated snapshot: the Kubernetes objects the engine keeps, in input order, and its configuration.

    ``objects`` holds Nodes, Pods and the kinds the engine reads (``schedviz.engine.loader.KEPT_KINDS``)
    exactly as given (kube-scheduler-simulator items get their ``apiVersion``/``kind`` filled in);
    other kinds are only counted in ``ignored``. ``content_hash`` is the SHA-256 of the canonical JSON
    of ``{"objects", "config"}``: the same cluster as YAML or JSON, or uploaded twice, hashes the same.
    Archive members are read in name order.
    """

    objects: list[dict[str, Any]]
    config: dict[str, Any] | None
    ignored: dict[str, int]
    content_hash: str
    format: str
    documents: int
    name: str = ""
    files: list[str] = field(default_factory=list)

    def kinds(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for o in self.objects:
            k = str(o.get("kind"))
            out[k] = out.get(k, 0) + 1
        return out

    def engine_snapshot(self) -> Snapshot:
        """The engine's view of these objects (``schedviz.engine.loader.load_objects``)."""
        return load_objects(self.objects, self.config, self.name)


# Fields a live cluster rewrites every few seconds without any change that matters to scheduling;
# they are left out of the content hash so that re-reading an unchanged cluster is the same snapshot.
_VOLATILE_METADATA = ("resourceVersion", "managedFields", "selfLink")
_VOLATILE_CONDITION = ("lastHeartbeatTime", "lastProbeTime")


def _stable(obj: Any) -> Any:
    if not isinstance(obj, dict):
        return obj
    out = dict(obj)
    md = out.get("metadata")
    if isinstance(md, dict) and any(k in md for k in _VOLATILE_METADATA):
        out["metadata"] = {k: v for k, v in md.items() if k not in _VOLATILE_METADATA}
    status = out.get("status")
    if isinstance(status, dict) and isinstance(status.get("conditions"), list):
        conds = [
            {k: v for k, v in c.items() if k not in _VOLATILE_CONDITION} if isinstance(c, dict) else c
            for c in status["conditions"]
        ]
        out["status"] = {**status, "conditions": conds}
    return out


def content_hash(objects: list[dict[str, Any]], config: dict[str, Any] | None) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8) of the objects and configuration,
    without the bookkeeping fields a live cluster changes constantly (resourceVersion, managedFields,
    condition heartbeat times)."""
    canonical = json.dumps(
        {"objects": [_stable(o) for o in objects], "config": config},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_upload(data: bytes, filename: str, limits: Limits | None = None) -> ParsedSnapshot:
    """Read, validate and hash an upload; raises ``UploadError`` listing what is wrong."""
    limits = limits or Limits()
    name = filename or "upload"
    ing = _Ingest(limits)
    try:
        if len(data) > limits.max_upload_bytes:
            raise _Fatal(
                Problem(
                    document=name,
                    message=f"the upload is {len(data)} bytes; the limit is {limits.max_upload_bytes} bytes",
                )
            )
        container, members = _unpack(data, name, limits, ing)
        for member, raw in members:
            ing.add_file(member, raw)
        if container == "text" and members:
            container = ing.text_format
        return ing.finish(container)
    except _Fatal as fatal:
        raise UploadError([*ing.problems.items, fatal.problem]) from None


def parse_objects(
    docs: Iterable[Any], source: str = "cluster", limits: Limits | None = None
) -> ParsedSnapshot:
    """Validate and hash already parsed documents (e.g. what ``live.read_cluster`` returns)."""
    ing = _Ingest(limits or Limits())
    try:
        for i, doc in enumerate(docs):
            ing.add_document(doc, source, f"[{i}]")
        return ing.finish("live")
    except _Fatal as fatal:
        raise UploadError([*ing.problems.items, fatal.problem]) from None


# --------------------------------------------------------------------------------------------------
# Problem collection


class _Fatal(Exception):
    """A problem that ends reading at once (a limit was exceeded)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


class _Problems:
    """Problems found so far; reaching the cap stops reading (garbage-dense uploads end quickly)."""

    def __init__(self, cap: int) -> None:
        self.items: list[Problem] = []
        self.cap = cap

    def add(self, problem: Problem) -> None:
        if len(self.items) >= self.cap:
            raise _Fatal(Problem(message=f"more than {self.cap} problems: stopped reading"))
        self.items.append(problem)

    def __bool__(self) -> bool:
        return bool(self.items)


# --------------------------------------------------------------------------------------------------
# Containers: archives, gzip, plain text


def _unpack(data: bytes, name: str, limits: Limits, ing: _Ingest) -> tuple[str, list[tuple[str, bytes]]]:
    """The container format and the manifest files in it, as (name, bytes), members in name order."""
    lower = name.lower()
    if data[:2] == b"\x1f\x8b":
        raw = _gunzip(data, name, limits)
        if _looks_like_tar(raw) or lower.endswith((".tar.gz", ".tgz")):
            return "tar.gz", _tar_members(raw, name, limits, ing)
        inner = name[:-3] if lower.endswith(".gz") else name
        return "gzip", [(inner, raw)]
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip", _zip_members(data, name, limits, ing)
    if _looks_like_tar(data) or lower.endswith(".tar"):
        return "tar", _tar_members(data, name, limits, ing)
    if data[:3] == b"BZh" or data[:6] == b"\xfd7zXZ\x00" or data[:4] == b"\x28\xb5\x2f\xfd":
        raise _Fatal(
            Problem(
                document=name,
                message="unsupported compression (bzip2 or xz): use gzip, zstd, .tar.gz or .zip",
            )
        )
    if lower.endswith(_ARCHIVE_SUFFIXES):
        raise _Fatal(
            Problem(document=name, message="the file is named like an archive but is not a valid one")
        )
    return "text", [(name, data)]


def _looks_like_tar(data: bytes) -> bool:
    return len(data) >= 512 and data[257:262] == b"ustar"


def _gunzip(data: bytes, name: str, limits: Limits) -> bytes:
    """Decompress a gzip stream, counting the bytes it produces against the decompressed-size limit."""
    chunks: list[bytes] = []
    total = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            while True:
                chunk = gz.read(_CHUNK)
                if not chunk:
                    break
                total += len(chunk)
                if total > limits.max_file_bytes:
                    raise _Fatal(
                        Problem(
                            document=name,
                            message=f"decompresses to more than {limits.max_file_bytes} bytes, the limit",
                        )
                    )
                chunks.append(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise _Fatal(Problem(document=name, message=f"not a valid gzip stream: {exc}")) from None
    return b"".join(chunks)


def _unsafe_name(member: str) -> str | None:
    """Why an archive member name is refused, or None."""
    if "\x00" in member:
        return "its name contains a NUL byte"
    norm = member.replace("\\", "/")
    if norm.startswith("/") or re.match(r"^[A-Za-z]:", norm):
        return "absolute path"
    if ".." in norm.split("/"):
        return "path contains '..'"
    return None


def _is_manifest(member: str) -> bool:
    norm = member.replace("\\", "/")
    parts = norm.split("/")
    base = parts[-1]
    if base.startswith("._") or "__MACOSX" in parts:  # macOS resource forks
        return False
    return base.lower().endswith(MANIFEST_SUFFIXES)


def _display(member: str) -> str:
    norm = member.replace("\\", "/")
    while norm.startswith("./"):
        norm = norm[2:]
    return norm


def _too_big(archive: str, limits: Limits) -> _Fatal:
    return _Fatal(
        Problem(
            document=archive,
            message=f"the archive's files decompress to more than {limits.max_file_bytes} bytes, the limit",
        )
    )


def _too_many(archive: str, limits: Limits) -> _Fatal:
    return _Fatal(
        Problem(
            document=archive,
            message=f"the archive has more than {limits.max_archive_members} members, the limit",
        )
    )


def _finish_members(found: list[tuple[str, bytes]], archive: str, ing: _Ingest) -> list[tuple[str, bytes]]:
    seen: set[str] = set()
    out = []
    for member, raw in sorted(found, key=lambda m: m[0]):
        if member in seen:
            ing.problems.add(Problem(document=member, message="appears more than once in the archive"))
            continue
        seen.add(member)
        out.append((member, raw))
    if not out and not ing.problems:
        ing.problems.add(
            Problem(document=archive, message="the archive contains no .yaml, .yml or .json file")
        )
    return out


def _tar_members(raw: bytes, archive: str, limits: Limits, ing: _Ingest) -> list[tuple[str, bytes]]:
    found: list[tuple[str, bytes]] = []
    total = 0
    count = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tf:
            while True:
                m = tf.next()
                if m is None:
                    break
                count += 1
                if count > limits.max_archive_members:
                    raise _too_many(archive, limits)
                member = m.name
                why = _unsafe_name(member)
                if why is None:
                    if m.issym():
                        why = f"symbolic link (to {m.linkname!r})"
                    elif m.islnk():
                        why = f"hard link (to {m.linkname!r})"
                    elif m.ischr() or m.isblk():
                        why = "device file"
                    elif m.isfifo():
                        why = "named pipe"
                    elif not (m.isreg() or m.isdir()):
                        why = "not a regular file"
                if why is not None:
                    ing.problems.add(
                        Problem(document=_display(member), message=f"archive member refused: {why}")
                    )
                    continue
                if m.isdir() or not _is_manifest(member):
                    continue
                if m.size < 0 or total + m.size > limits.max_file_bytes:
                    raise _too_big(archive, limits)
                f = tf.extractfile(m)
                data = f.read(m.size + 1) if f is not None else b""
                if len(data) != m.size:
                    raise _Fatal(Problem(document=_display(member), message="truncated archive member"))
                total += len(data)
                found.append((_display(member), data))
    except (tarfile.TarError, EOFError, OSError, zlib.error, ValueError) as exc:
        raise _Fatal(Problem(document=archive, message=f"not a valid tar archive: {exc}")) from None
    return _finish_members(found, archive, ing)


def _zip_entry_count(data: bytes) -> int | None:
    """Entries declared by the zip's end-of-central-directory record, read before zipfile parses them all."""
    pos = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 65535))
    if pos < 0 or pos + 22 > len(data):
        return None
    return int.from_bytes(data[pos + 10 : pos + 12], "little")


def _zip_members(data: bytes, archive: str, limits: Limits, ing: _Ingest) -> list[tuple[str, bytes]]:
    declared_entries = _zip_entry_count(data)
    if declared_entries is not None and (
        declared_entries > limits.max_archive_members or declared_entries == 0xFFFF
    ):
        raise _too_many(archive, limits)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        OSError,
        EOFError,
        ValueError,
        NotImplementedError,
    ) as exc:
        raise _Fatal(Problem(document=archive, message=f"not a valid zip archive: {exc}")) from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_archive_members:
            raise _too_many(archive, limits)
        wanted: list[zipfile.ZipInfo] = []
        declared = 0
        for info in infos:
            member = info.filename
            is_dir = member.endswith("/")  # ZipInfo.is_dir() fails on an empty name
            why = _unsafe_name(member) if member else "empty member name"
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if why is None:
                if kind == stat.S_IFLNK:
                    why = "symbolic link"
                elif kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                    why = "device or special file"
                elif info.flag_bits & 0x1 and not is_dir:
                    why = "encrypted"
            if why is not None:
                ing.problems.add(Problem(document=_display(member), message=f"archive member refused: {why}"))
                continue
            if is_dir or not _is_manifest(member):
                continue
            declared += info.file_size
            if declared > limits.max_file_bytes:
                raise _too_big(archive, limits)
            wanted.append(info)
        found: list[tuple[str, bytes]] = []
        total = 0
        for info in wanted:
            chunks: list[bytes] = []
            got = 0
            try:
                with zf.open(info) as f:
                    while True:
                        chunk = f.read(_CHUNK)
                        if not chunk:
                            break
                        got += len(chunk)
                        total += len(chunk)
                        if total > limits.max_file_bytes:
                            raise _too_big(archive, limits)
                        if got > info.file_size:
                            raise _Fatal(
                                Problem(
                                    document=_display(info.filename),
                                    message="decompresses to more bytes than the archive declares",
                                )
                            )
                        chunks.append(chunk)
            except (
                zipfile.BadZipFile,
                OSError,
                EOFError,
                zlib.error,
                ValueError,
                NotImplementedError,
                RuntimeError,
            ) as exc:
                ing.problems.add(
                    Problem(document=_display(info.filename), message=f"unreadable archive member: {exc}")
                )
                continue
            found.append((_display(info.filename), b"".join(chunks)))
    return _finish_members(found, archive, ing)


# --------------------------------------------------------------------------------------------------
# Text: decoding, JSON, YAML


def _decode(raw: bytes) -> str:
    """UTF-8 text (a UTF-8 byte-order mark is dropped; UTF-16 with a byte-order mark, as PowerShell
    redirection writes it, is accepted). Raises UnicodeDecodeError."""
    if raw.startswith(codecs.BOM_UTF8):
        return raw[len(codecs.BOM_UTF8) :].decode("utf-8")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16")
    return raw.decode("utf-8")


class _TooManyNodes(Exception):
    """The upload's YAML node budget is spent."""


class _TooManyObjects(Exception):
    """A JSON text holds more Kubernetes objects than ``Limits.max_objects``, counted before it is built."""


class _BadInput(Exception):
    """A refused construct in a document, with its 1-based position when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def render(self) -> str:
        if self.line is not None:
            return f"line {self.line} column {self.column}: {self.message}"
        return self.message


def _value_error(exc: Exception) -> str:
    text = str(exc)
    if "integer string conversion" in text:  # CPython's int max-digits guard
        return "a number with more than 4300 digits"
    return text


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _BadInput(f"duplicate key {k!r}")
            seen.add(k)
    return out


def _json_constant(name: str) -> Any:
    raise _BadInput(f"{name} is not valid JSON")


def _json_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise _BadInput(f"number {text[:40]} is out of range")
    return v


def _too_deep(limit: int) -> str:
    return f"nesting deeper than {limit} levels"


def _too_many_objects(limit: int) -> str:
    return f"more than {limit} objects, the limit"


# A JSON string (the unrolled form of "(?:[^"\\]|\\.)*", linear and fast in Python's re). Strings are
# taken out of the text as str, not bytes: bytes.join would take a buffer record (80 bytes) for each of
# the pieces left between them.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")
_BRACKET_STEP = np.zeros(256, dtype=np.int32)
_BRACKET_STEP[[ord("["), ord("{")]] = 1
_BRACKET_STEP[[ord("]"), ord("}")]] = -1
_OPEN_ARRAY, _OPEN_OBJECT = b"[{"
_LEVEL_SLICE = _CHUNK * 4  # codes per cumulative sum: keeps the sums small
# Numbers a float may not hold (they would silently become infinity): a positive exponent of three or
# more digits, or 309+ digits in a row; found by substring search once digits all read "9".
_DIGITS_AS_NINES = bytes.maketrans(b"0123456789E", b"9999999999e")
_HUGE_MARKS = (b"e999", b"e+999", b"9" * 309)

# The strings of a JSON text as _JSON_STRING finds them, except that three kinds of member leave one
# byte behind, a marker (a byte valid JSON never has outside strings):
# - "kind" with a string value ending with "List" leaves the "L" of it ("ist" is taken next);
# - "kind" with a string value holding a \u escape (it may spell "List") leaves the escape's backslash
#   (the rest of the value is taken next);
# - "items" with an array value leaves the "m" of its key ("s" is taken next).
# The key "kind" is recognised however it is spelt (each letter as itself or as a \u escape); other
# spellings of "items" are not (those arrays are not counted). Other strings go with the string value
# a key has and the bytes up to the next string or bracket (fewer, longer matches).
_STRING_REST = r'[^"\\]*(?:\\.[^"\\]*)*'
_COLON = r"[ \t\n\r]*:[ \t\n\r]*"  # with JSON's whitespace around it
_LIST_VALUE = "".join((r"(?=(?>", _STRING_REST, r')(?<=List)")', _STRING_REST, r'(?=List")'))
_ESCAPED_VALUE = r'(?>[^"\\]*(?:\\[^u][^"\\]*)*)(?=\\u)'
_KIND_MEMBER = "".join(  # after the first letter of "kind"
    (r'(?:i|\\u0069)(?:n|\\u006[eE])(?:d|\\u0064)"', _COLON, '"(?:', _LIST_VALUE, "|", _ESCAPED_VALUE, ")")
)
_OTHER_STRING = "".join((_STRING_REST, '"(?:', _COLON, '"', _STRING_REST, r'")?[^"\[\]{}]*'))
_MARKED_STRING = re.compile(
    "|".join(
        (
            '"(?:k' + _KIND_MEMBER,
            r"\\u006[bB]" + _KIND_MEMBER,
            'ite(?=ms"' + _COLON + r"\[)",
            _OTHER_STRING + ")",
            'ist"',
            's"',
            "u[0-9a-fA-F]{4}" + _STRING_REST + '"',
        )
    )
)
_LIST_KIND, _ITEMS_KEY = b"Lm"
_TOP_LEVEL_ARRAY = re.compile(r"[ \t\n\r]*\[")
_NOT_MARKED_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{}L\\m")
_Codes = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class JsonShape:
    """What a JSON text holds, measured on its bytes at C speed (strings blanked out)."""

    depth: int  # deepest nesting of arrays and objects
    values: int  # about how many values (containers and scalars)
    huge_numbers: bool  # a number that may not fit a float
    # at most how many Kubernetes objects json_objects can find: the objects in a top-level array,
    # or two levels down in a top-level object, less one
    candidates: int


def _levels(codes: _Codes) -> Iterator[tuple[_Codes, npt.NDArray[np.int32], npt.NDArray[np.int64]]]:
    """Brackets (and markers) in slices: each slice, the step of each code (+1 opens, -1 closes, 0 for a
    marker) and the nesting level after it."""
    depth = 0
    for start in range(0, len(codes), _LEVEL_SLICE):
        chunk = codes[start : start + _LEVEL_SLICE]
        steps = _BRACKET_STEP[chunk]
        levels = np.cumsum(steps, dtype=np.int64) + depth
        depth = int(levels[-1])
        yield chunk, steps, levels


def _element_level(codes: _Codes) -> int:
    """The nesting level inside an object that is an element of the top-level array (2), or of an array
    in the top-level object (3); 0 when the text is neither an array nor an object."""
    first = int(codes[0]) if len(codes) else 0
    return 2 if first == _OPEN_ARRAY else 3 if first == _OPEN_OBJECT else 0


def json_shape(text: str) -> JsonShape:
    """Depth, value count and huge numbers of a JSON text, without building it. Exact for valid JSON."""
    bare = _JSON_STRING.sub("", text).encode("utf-8")
    structure = bare.translate(None, _NOT_STRUCTURE)
    codes = np.frombuffer(structure.translate(None, b","), dtype=np.uint8)
    level = _element_level(codes)
    deepest = elements = 0
    for chunk, _, levels in _levels(codes):
        deepest = max(deepest, int(levels.max()))
        if level:
            elements += int(np.count_nonzero((chunk == _OPEN_OBJECT) & (levels == level)))
    opens = structure.count(b"[") + structure.count(b"{")
    nines = bare.translate(_DIGITS_AS_NINES)
    huge = any(mark in nines for mark in _HUGE_MARKS)
    return JsonShape(deepest, structure.count(b",") + opens + 1, huge, max(0, elements - 1))


def json_depth(text: str) -> int:
    """How deeply a valid JSON text nests arrays and objects."""
    return json_shape(text).depth


def json_objects(text: str) -> int:
    """How many Kubernetes objects a valid JSON text certainly holds, counted on its bytes without
    building it: the objects of a top-level array, or of the ``items`` array of a top-level object
    whose ``kind`` ends with ``List`` (what ``kubectl get -o json`` prints), as reading the upload
    counts them. Never more than reading finds (unless reading refuses the text anyway): lists inside
    those (flattened when read) and any object whose ``kind`` may end with ``List`` (perhaps an empty
    list) are left out, so is one object for a KubeSchedulerConfiguration (not counted when read)."""
    bare = _MARKED_STRING.sub("", text).encode("utf-8")
    codes = np.frombuffer(bare.translate(None, _NOT_MARKED_STRUCTURE), dtype=np.uint8)
    del bare
    level = _element_level(codes)
    if not level:
        return 0
    elements = maybe_lists = 0
    is_list = False  # the top-level object's kind ends with "List"
    inside = False  # the last slice ended inside the top-level object's items array
    opens_next = False  # the last slice ended with its items key: the next one opens the array
    for chunk, steps, levels in _levels(codes):
        marks = np.flatnonzero(steps == 0)
        kinds = marks[(levels[marks] == level) & (chunk[marks] != _ITEMS_KEY)]  # the kind of an element
        objects = np.flatnonzero((chunk == _OPEN_OBJECT) & (levels == level))
        if level == 2:
            elements += len(objects)
            maybe_lists += len(kinds)
            continue
        top = marks[levels[marks] == 1]
        is_list = is_list or bool(np.any(chunk[top] == _LIST_KIND))
        starts = top[chunk[top] == _ITEMS_KEY] + 1
        if inside or opens_next:
            starts = np.concatenate((np.zeros(1, dtype=starts.dtype), starts))
        opens_next = bool(len(starts)) and int(starts[-1]) == len(chunk)
        if opens_next:
            starts = starts[:-1]
        closes = np.flatnonzero(levels == 1)  # where each array of the top-level object ends
        at = np.searchsorted(closes, starts)
        ends = np.append(closes, len(chunk))[at]
        inside = bool(len(starts)) and int(at[-1]) == len(closes)
        elements += int(np.sum(np.searchsorted(objects, ends) - np.searchsorted(objects, starts)))
        maybe_lists += int(np.sum(np.searchsorted(kinds, ends) - np.searchsorted(kinds, starts)))
    if level == 3 and not is_list:
        return 0
    return max(0, elements - maybe_lists - 1)


def _more_objects_than(limit: int, text: str, shape: JsonShape) -> bool:
    """Whether a JSON text certainly holds more than ``limit`` Kubernetes objects (``json_objects``)."""
    if shape.candidates <= limit:
        return False
    if _TOP_LEVEL_ARRAY.match(text):
        # quicker, for an array: an element that may be a list has a kind with a \u escape or ending
        # with List", found by substring search
        maybe_lists = text.count('List"') + text.count("\\u")
        if shape.candidates - maybe_lists > limit:
            return True
    return json_objects(text) > limit


def parse_json(text: str, limits: Limits) -> Any:
    """One JSON document, strictly: duplicate keys, NaN/Infinity, out-of-range numbers, deep nesting
    and too many values or Kubernetes objects are refused (the last three measured before anything is
    built)."""
    shape = json_shape(text)
    if shape.depth > limits.max_depth:
        raise _BadInput(_too_deep(limits.max_depth))
    if shape.values > limits.max_json_values:
        raise _TooManyNodes()
    if _more_objects_than(limits.max_objects, text, shape):
        raise _TooManyObjects()
    try:
        value = json.loads(
            text,
            object_pairs_hook=_json_object,
            parse_constant=_json_constant,
            parse_float=_json_float if shape.huge_numbers else None,
        )
        # a lone surrogate's escape reads as U+FFFD, as the API server reads it
        return go_strings(value) if SURROGATE_ESCAPE.search(text) else value
    except RecursionError:
        raise _BadInput(_too_deep(limits.max_depth)) from None
    except json.JSONDecodeError as exc:
        raise _BadInput(exc.msg, exc.lineno, exc.colno) from None
    except ValueError as exc:  # e.g. an integer with too many digits
        raise _BadInput(_value_error(exc)) from None


# YAML: the resolution of plain scalars is PyYAML's YAML 1.1 one (as Kubernetes' YAML reader), except
# that timestamps and '=' stay strings, as sigs.k8s.io/yaml leaves them.
_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _MERGE = (
    _TAG + t for t in ("str", "int", "float", "bool", "null", "merge")
)
_SCALAR_TAGS = frozenset({_STR, _INT, _FLOAT, _BOOL, _NULL})
_MAP_TAGS = frozenset({_TAG + "map", "!"})
_SEQ_TAGS = frozenset({_TAG + "seq", "!"})
_RESOLVERS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    first: [(tag, rx) for tag, rx in entries if tag in (_INT, _FLOAT, _BOOL, _NULL, _MERGE)]
    for first, entries in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_CONSTRUCTOR = SafeConstructor()
_MERGE_KEY = object()
_CACHE_MAX = 20_000

try:  # libyaml's parser when available: the events are the same, ten times faster
    _Parser: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Parser = yaml.SafeLoader


class _Frame:
    __slots__ = ("anchor", "height", "key", "key_event", "merges", "seen", "size", "value")

    def __init__(self, value: dict[str, Any] | list[Any], anchor: str | None) -> None:
        self.value = value
        self.anchor = anchor
        self.size = 1  # nodes in this subtree, aliases expanded
        self.height = 1
        self.key: Any = None  # the pending mapping key, when ``seen``
        self.key_event: Any = None
        self.merges: list[dict[str, Any]] = []
        self.seen = False


def _key_string(key: Any) -> str:
    """A scalar mapping key as JSON needs it (sigs.k8s.io/yaml renders non-string keys the same way)."""
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    return str(key)


class _YamlReader:
    """Builds documents from the parser's events, enforcing the limits as it goes."""

    def __init__(self, limits: Limits, budget: list[int], nodes: list[int]) -> None:
        self.limits = limits
        self.nodes = nodes  # [YAML nodes still allowed in this upload]
        # [nodes aliases may still add in this upload]: max_alias_expansion plus one per literal node,
        # so that aliases can at most about double what the text itself holds
        self.budget = budget
        self.cache: dict[str, Any] = {}

    @staticmethod
    def _at(event: Any) -> tuple[int, int]:
        mark = event.start_mark
        return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)

    def _fail(self, event: Any, message: str) -> _BadInput:
        line, col = self._at(event)
        return _BadInput(message, line, col)

    def _scalar(self, event: Any) -> Any:
        tag, value = event.tag, event.value
        if tag is None or tag == "!":
            if tag is None and event.implicit[0]:
                cached = self.cache.get(value, self)
                if cached is not self:
                    return cached
                resolved = _STR
                for t, rx in _RESOLVERS.get(value[:1], ()):
                    if rx.match(value):
                        resolved = t
                        break
                result = value if resolved == _STR else self._construct(event, resolved, value)
                if len(self.cache) < _CACHE_MAX:
                    self.cache[value] = result
                return result
            return value
        if tag not in _SCALAR_TAGS:
            raise self._fail(event, f"YAML tag {tag!r} is not allowed (only plain YAML types are accepted)")
        return value if tag == _STR else self._construct(event, tag, value)

    def _construct(self, event: Any, tag: str, value: str) -> Any:
        if tag == _MERGE:
            return _MERGE_KEY
        node = ScalarNode(tag, value, event.start_mark, event.end_mark)
        try:
            if tag == _NULL:
                return None
            if tag == _BOOL:
                return _CONSTRUCTOR.construct_yaml_bool(node)
            if tag == _INT:
                return _CONSTRUCTOR.construct_yaml_int(node)
            result = _CONSTRUCTOR.construct_yaml_float(node)
        except (ValueError, KeyError, OverflowError) as exc:
            raise self._fail(
                event, f"invalid {tag[len(_TAG) :]} {value[:40]!r}: {_value_error(exc)}"
            ) from None
        if not math.isfinite(result):
            raise self._fail(
                event, f"number {value[:40]!r} is not finite (NaN and infinities are not accepted)"
            )
        return result

    def _add(self, stack: list[_Frame], event: Any, value: Any, size: int, height: int) -> Any:
        """Attach a finished node to its parent; returns the value when it is a document root."""
        if not stack:
            return "<<" if value is _MERGE_KEY else value
        parent = stack[-1]
        parent.size += size
        if height + 1 > parent.height:
            parent.height = height + 1
        if len(stack) + height > self.limits.max_depth:
            raise self._fail(event, _too_deep(self.limits.max_depth))
        container = parent.value
        if isinstance(container, list):
            container.append("<<" if value is _MERGE_KEY else value)
            return None
        if not parent.seen:
            if height:
                raise self._fail(event, "mapping keys must be scalars")
            parent.key = value
            parent.key_event = event
            parent.seen = True
            return None
        if value is _MERGE_KEY:
            value = "<<"
        key = parent.key
        parent.seen = False
        parent.key = None
        if key is _MERGE_KEY:
            sources = value if isinstance(value, list) else [value]
            if not all(isinstance(s, dict) for s in sources):
                raise self._fail(event, "a merge key ('<<') needs a mapping or a list of mappings")
            parent.merges.extend(sources)
            return None
        skey = _key_string(key)
        if skey in container:
            raise self._fail(parent.key_event, f"duplicate key {skey!r}")
        container[skey] = value
        return None

    def documents(self, text: str) -> tuple[list[Any], bool]:
        """The non-empty documents of ``text``, and whether any used an alias."""
        limits = self.limits
        docs: list[Any] = []
        stack: list[_Frame] = []
        anchors: dict[str, tuple[Any, int, int]] = {}  # anchor -> (value, size, height)
        open_anchors: set[str] = set()
        aliases = 0
        used_aliases = False
        root: Any = None
        budget = self.budget
        nodes = self.nodes
        E = yaml.events
        events: Iterable[Any] = yaml.parse(text, Loader=_Parser)
        for event in events:
            t = type(event)
            nodes[0] -= 1
            if nodes[0] < 0 and t is not E.StreamEndEvent:
                raise _TooManyNodes()
            if t is E.ScalarEvent:
                budget[0] += 1
                value = self._scalar(event)
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1, 0)
                r = self._add(stack, event, value, 1, 0)
                if not stack:
                    root = r
            elif t is E.MappingStartEvent or t is E.SequenceStartEvent:
                budget[0] += 1
                is_map = t is E.MappingStartEvent
                if event.tag is not None and event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
                    raise self._fail(
                        event, f"YAML tag {event.tag!r} is not allowed (only plain YAML types are accepted)"
                    )
                if len(stack) + 1 > limits.max_depth:
                    raise self._fail(event, _too_deep(limits.max_depth))
                container: dict[str, Any] | list[Any] = {} if is_map else []
                stack.append(_Frame(container, event.anchor))
                if event.anchor is not None:
                    open_anchors.add(event.anchor)
            elif t is E.MappingEndEvent or t is E.SequenceEndEvent:
                frame = stack.pop()
                value = frame.value
                if frame.merges and isinstance(value, dict):
                    merged: dict[str, Any] = {}
                    for src in reversed(frame.merges):  # earlier sources win, explicit keys win over all
                        merged.update(src)
                    merged.update(value)
                    value = merged
                    frame.value = value
                if frame.anchor is not None:
                    anchors[frame.anchor] = (value, frame.size, frame.height)
                    open_anchors.discard(frame.anchor)
                r = self._add(stack, event, value, frame.size, frame.height)
                if not stack:
                    root = r
            elif t is E.AliasEvent:
                name = event.anchor
                if name in open_anchors:
                    raise self._fail(event, f"recursive YAML alias *{name}")
                if name not in anchors:
                    raise self._fail(event, f"undefined YAML alias *{name}")
                aliases += 1
                used_aliases = True
                if aliases > limits.max_yaml_aliases:
                    raise self._fail(
                        event,
                        f"more than {limits.max_yaml_aliases} YAML aliases in one document "
                        "(refused: alias-heavy YAML can expand exponentially)",
                    )
                value, size, height = anchors[name]
                budget[0] -= size
                if budget[0] < 0:
                    raise self._fail(
                        event,
                        f"YAML aliases expand to more than {limits.max_alias_expansion} nodes beyond "
                        "the upload's own (refused: possible alias bomb)",
                    )
                r = self._add(stack, event, value, size, height)
                if not stack:
                    root = r
            elif t is E.DocumentStartEvent:
                anchors.clear()
                open_anchors.clear()
                aliases = 0
                root = None
            elif t is E.DocumentEndEvent:
                if root is not None:
                    docs.append(root)
                root = None
        return docs, used_aliases


# --------------------------------------------------------------------------------------------------
# Documents to objects

# kube-scheduler-simulator export keys (ResourcesForSnap / ResourcesForLoad) and the scenario keys.
_BUNDLE_KINDS: dict[str, tuple[str, str]] = {
    "namespaces": ("Namespace", "v1"),
    "priorityClasses": ("PriorityClass", "scheduling.k8s.io/v1"),
    "storageClasses": ("StorageClass", "storage.k8s.io/v1"),
    "pvs": ("PersistentVolume", "v1"),
    "pvcs": ("PersistentVolumeClaim", "v1"),
    "nodes": ("Node", "v1"),
    "pods": ("Pod", "v1"),
}
_SIMULATOR_KEYS = frozenset(
    {"namespaces", "priorityClasses", "storageClasses", "pvs", "pvcs", "schedulerConfig"}
)
_SCENARIO_KEYS = frozenset({"nodes", "pods", "items", "config", "name"})
_BUNDLE_KEYS = _SIMULATOR_KEYS | _SCENARIO_KEYS
_BUNDLE_MARKERS = frozenset({*_BUNDLE_KINDS, "items", "schedulerConfig"})


def _is_bundle(doc: dict[str, Any]) -> bool:
    """A simulator export or a scenario: no kind, and at least one of their list keys."""
    return "kind" not in doc and "apiVersion" not in doc and any(k in _BUNDLE_MARKERS for k in doc)


def _path(where: str, child: str) -> str:
    return f"{where}.{child}" if where and not child.startswith("[") else f"{where}{child}"


def _config_field(message: str) -> str:
    """The field path a ConfigError message starts with (upstream's ``<path>: <detail>``), if any."""
    m = re.match(r"^([A-Za-z][A-Za-z0-9_.\[\]/-]*): ", message)
    if m and m.group(1) not in ("json", "yaml"):
        return m.group(1)
    return ""


class _Ingest:
    """Accumulates documents from every file, validating each object as it comes."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.problems = _Problems(limits.max_problems)
        self.objects: list[dict[str, Any]] = []
        self.configs: list[tuple[dict[str, Any], str]] = []
        self.ignored: dict[str, int] = {}
        self.seen: dict[tuple[str, str], str] = {}
        self.count = 0
        self.documents = 0
        self.pods = 0
        self.files: list[str] = []
        self.name = ""
        self.text_format = "yaml"
        self.budget = [limits.max_alias_expansion]
        self.yaml_nodes = [limits.max_yaml_nodes]
        self.validator = Validator()  # what the API server would refuse (engine/validation.py)
        # pods that share a template are validated and viewed once (the streamed reading's; None:
        # every pod on its own)
        self.templates: PodTemplates | None = None

    # ----- files ----------------------------------------------------------------------------------
    def add_file(self, name: str, raw: bytes) -> None:
        self.files.append(name)
        try:
            text = _decode(raw)
        except UnicodeDecodeError as exc:
            self.problems.add(
                Problem(document=name, message=f"not valid UTF-8 text (byte {exc.start}: {exc.reason})")
            )
            return
        is_json = text.lstrip()[:1] in ("{", "[")
        try:
            if is_json:
                docs = [parse_json(text, self.limits)]
            else:
                docs, aliased = _YamlReader(self.limits, self.budget, self.yaml_nodes).documents(text)
                if aliased:  # aliases share structures: give every object its own copy
                    docs = json.loads(json.dumps(docs))
            self.text_format = "json" if is_json else "yaml"
        except _TooManyNodes:
            if is_json:
                message = f"more than {self.limits.max_json_values} JSON values in one file, the limit"
            else:
                message = (
                    f"more than {self.limits.max_yaml_nodes} YAML nodes in the upload, the limit: "
                    "upload large clusters as JSON (kubectl get ... -o json)"
                )
            raise _Fatal(Problem(document=name, message=message)) from None
        except _TooManyObjects:
            raise _Fatal(Problem(document=name, message=_too_many_objects(self.limits.max_objects))) from None
        except _BadInput as exc:
            self.problems.add(
                Problem(document=name, message=f"invalid {'JSON' if is_json else 'YAML'}: {exc.render()}")
            )
            return
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
            problem = exc.problem or exc.context or "invalid YAML"
            self.problems.add(Problem(document=name, message=f"invalid YAML: {where}{problem}"))
            return
        except yaml.YAMLError as exc:
            self.problems.add(Problem(document=name, message=f"invalid YAML: {exc}"))
            return
        except RecursionError:
            self.problems.add(Problem(document=name, message=_too_deep(self.limits.max_depth)))
            return
        multi = len(docs) > 1
        for i, doc in enumerate(docs):
            label = f"{name} (document {i + 1})" if multi else name
            self.add_document(doc, label, "")

    # ----- documents ------------------------------------------------------------------------------
    def add_document(self, doc: Any, label: str, where: str) -> None:
        self.documents += 1
        if isinstance(doc, dict) and _is_bundle(doc):
            self._bundle(doc, label)
            if len(self.files) <= 1:
                self.text_format = (
                    "kube-scheduler-simulator" if any(k in _SIMULATOR_KEYS for k in doc) else "scenario"
                )
            return
        self._take(doc, label, where)

    def _take(self, doc: Any, label: str, where: str) -> None:
        if isinstance(doc, list):
            for i, d in enumerate(doc):
                self._take(d, label, _path(where, f"[{i}]"))
            return
        if not isinstance(doc, dict):
            self.problems.add(
                Problem(
                    document=label,
                    object=where,
                    message=f"expected a Kubernetes object (a mapping with apiVersion and kind), got {_json_kind(doc)}",
                )
            )
            return
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and ("items" in doc or kind == "List"):
            items = doc.get("items")
            if items is None:
                return
            if not isinstance(items, list):
                self.problems.add(
                    Problem(document=label, object=where or kind, field="items", message="expected a list")
                )
                return
            for i, d in enumerate(items):
                self._take(d, label, _path(where, f"items[{i}]"))
            return
        self._object(doc, label, where)

    def _bundle(self, doc: dict[str, Any], label: str) -> None:
        for key in doc:
            if key not in _BUNDLE_KEYS:
                self.problems.add(
                    Problem(
                        document=label,
                        field=str(key),
                        message="unknown key in a kube-scheduler-simulator export or scenario; expected "
                        + ", ".join(sorted(_BUNDLE_KEYS)),
                    )
                )
        if isinstance(doc.get("name"), str) and not self.name:
            self.name = doc["name"]
        for key in ("config", "schedulerConfig"):
            cfg = doc.get(key)
            if cfg is None:
                continue
            if not isinstance(cfg, dict):
                self.problems.add(
                    Problem(
                        document=label,
                        field=key,
                        message=f"expected a KubeSchedulerConfiguration, got {_json_kind(cfg)}",
                    )
                )
                continue
            if not cfg.get("kind") and not cfg.get("apiVersion"):
                cfg = {"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND, **cfg}
            self.configs.append((cfg, f"{label}: {key}"))
        for key in (*_BUNDLE_KINDS, "items"):
            items = doc.get(key)
            if items is None:
                continue
            if not isinstance(items, list):
                self.problems.add(
                    Problem(document=label, field=key, message=f"expected a list, got {_json_kind(items)}")
                )
                continue
            expect = _BUNDLE_KINDS.get(key)
            for i, item in enumerate(items):
                where = f"{key}[{i}]"
                if expect is not None and isinstance(item, dict):
                    kind, api_version = expect
                    given = item.get("kind")
                    if given is None or given == "":
                        item = {"apiVersion": item.get("apiVersion") or api_version, "kind": kind, **item}
                        item["apiVersion"] = item["apiVersion"] or api_version
                    elif given != kind:
                        self.problems.add(
                            Problem(
                                document=label,
                                object=where,
                                field="kind",
                                message=f"a {given!r} under {key!r}, which holds {kind} objects",
                            )
                        )
                        continue
                    elif not item.get("apiVersion"):
                        item = {"apiVersion": api_version, **item}
                self._take(item, label, where)

    def _object(self, obj: dict[str, Any], label: str, where: str) -> None:
        kind = obj.get("kind")
        md = obj.get("metadata")
        name = md.get("name") if isinstance(md, dict) else None
        shown = where or (f"{kind} {name}" if isinstance(kind, str) and isinstance(name, str) else "")
        if not isinstance(kind, str) or not kind:
            hint = f" named {name!r}" if isinstance(name, str) else ""
            self.problems.add(
                Problem(
                    document=label,
                    object=shown or "document",
                    field="kind",
                    message=f"not a Kubernetes object{hint}: kind is required",
                )
            )
            return
        api_version = obj.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            self.problems.add(
                Problem(
                    document=label,
                    object=f"{kind} {name}" if isinstance(name, str) else (shown or kind),
                    field="apiVersion",
                    message="not a Kubernetes object: apiVersion is required",
                )
            )
            return
        if kind == CONFIG_KIND:
            self.configs.append((obj, label))
            return
        self.count += 1
        if self.count > self.limits.max_objects:
            raise _Fatal(Problem(document=label, message=_too_many_objects(self.limits.max_objects)))
        if kind not in KEPT_KINDS and kind not in ("Node", "Pod"):
            self.ignored[kind] = self.ignored.get(kind, 0) + 1
            return
        template = self.template_of(obj) if kind == "Pod" and self.templates is not None else None
        errors = self.validator.validate(obj) if template is None else self.validator.validate_pod(obj, template)
        if errors:
            who = object_ident(obj) or (f"{kind} at {where}" if where else kind)
            for error in errors:
                self.problems.add(Problem(document=label, object=who, field=error.field, message=str(error)))
            return
        try:
            view: KubeObject
            if kind == "Node":
                view = Node(obj)
            elif kind == "Pod":
                view = Pod(obj, self.pods, self.templates, template)
                self.pods += 1
            else:
                view = KubeObject(obj)
        except InputError as exc:
            who = exc.obj if exc.obj and exc.obj != kind else (f"{kind} at {where}" if where else kind)
            self.problems.add(Problem(document=label, object=who, field=exc.field, message=exc.problem))
            return
        ident = (kind, view.key)
        first = self.seen.get(ident)
        if first is not None:
            self.problems.add(
                Problem(
                    document=label,
                    object=view.ident,
                    field="metadata.name",
                    message=f"duplicate {kind} {view.key} (first in {first})",
                )
            )
            return
        self.seen[ident] = label
        self.keep(obj, view)

    def template_of(self, obj: dict[str, Any]) -> PodTemplate | None:
        """The pod's template among ``templates`` (``PodTemplates.template_of``; None: on its own)."""
        assert self.templates is not None
        return self.templates.template_of(obj)

    def keep(self, obj: dict[str, Any], view: KubeObject) -> None:
        """A valid, new object: kept in memory here (the streamed reading writes it out instead)."""
        self.objects.append(obj)

    # ----- the end --------------------------------------------------------------------------------
    def finish(self, fmt: str) -> ParsedSnapshot:
        if self.documents == 0 and not self.problems:
            where = self.files[0] if len(self.files) == 1 else ""
            self.problems.add(
                Problem(document=where, message="no Kubernetes objects found (the upload is empty)")
            )
        config: dict[str, Any] | None = None
        if len(self.configs) > 1:
            places = ", ".join(where for _, where in self.configs)
            self.problems.add(
                Problem(
                    document=self.configs[1][1],
                    message=f"more than one KubeSchedulerConfiguration ({places})",
                )
            )
        elif self.configs:
            config, where = self.configs[0]
            try:
                load_config(json.loads(json.dumps(config)))
            except ConfigError as exc:
                for msg in exc.problems:
                    self.problems.add(
                        Problem(document=where, object=CONFIG_KIND, field=_config_field(msg), message=msg)
                    )
        if self.problems:
            raise UploadError(list(self.problems.items))
        try:
            digest = content_hash(self.objects, config)
        except (ValueError, TypeError) as exc:  # pragma: no cover - parsing only yields JSON values
            raise UploadError([Problem(message=f"cannot serialise the objects: {exc}")]) from None
        return ParsedSnapshot(
            objects=self.objects,
            config=config,
            ignored=dict(sorted(self.ignored.items())),
            content_hash=digest,
            format=fmt,
            documents=self.documents,
            name=self.name,
            files=self.files,
        )


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
