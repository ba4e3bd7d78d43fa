"""Reading an upload of real size as a stream: a production cluster's dump in bounded memory.

``parse_upload`` (parsing.py) reads an upload whole, in the request; it is for small uploads. An upload
of real size (``kubectl get -o json`` of 5,000 nodes and 150,000 to 550,000 pods: 0.4 to 2 GB of JSON,
20 to 60 MB gzip'd) is read here instead, on the worker, from the stored upload's chunks:

- the container is recognised from its first bytes: gzip (concatenated members too), zstd (with the
  optional ``zstandard`` package), a tar inside either or plain, or plain text. Decompression is fed a
  little input at a time and counted: past ``Limits.max_decompressed_bytes`` in all, or past
  ``Limits.max_compression_ratio`` times the compressed bytes read (after the first 64 MiB), reading
  stops. A stream that ends before its end-of-stream marker is a *truncated* upload, named as such;
- a JSON file is read item by item: the elements of a top-level array, or of the ``items`` array of a
  top-level object (what ``kubectl get -o json`` prints), each decoded at C speed once the bytes that
  hold it have arrived (an item may not exceed ``Limits.max_object_bytes``), checked (duplicate keys,
  nesting, numbers) and handed to the same validation as an upload read whole (``parsing._Ingest``):
  the API server's validation, the engine's views, duplicates refused. The top-level object's other
  members (``apiVersion``, ``kind``, ``metadata``; or a scenario's or simulator export's arrays) are
  decoded whole, bounded the same way;
- YAML files, archive members other than JSON, and zip archives (which need random access) are read
  whole, bounded by ``Limits.max_file_bytes`` (YAML's node budget stops a large YAML file early: large
  clusters are uploaded as JSON);
- valid objects are not kept: each is written to the snapshot's compressed objects (the format
  ``models.pack`` writes), hashed into the content hash (``parsing.content_hash``, the same digest an
  upload read whole gets) and added to the snapshot's summary (``summary.SummaryBuilder``, the same
  summary ``summarize`` computes), so memory holds one item at a time plus the summary's rows.

A problem names the file, the item (``items[i]``), the object (kind, namespace and name, once its
metadata is read) and the byte offset in the decompressed text; problems are collected up to
``Limits.max_problems`` (150,000 duplicates stop at the 100th).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import queue
import re
import tarfile
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import msgspec

from schedviz.engine.config import load_config
from schedviz.engine.errors import ConfigError
from schedviz.engine.jsonstream import SURROGATE_ESCAPE, go_strings
from schedviz.engine.objects import COMPACT_AFTER_PODS, KubeObject, PodTemplate, PodTemplates

from .parsing import (
    _BUNDLE_KINDS,
    CONFIG_KIND,
    Limits,
    Problem,
    UploadError,
    _BadInput,
    _config_field,
    _display,
    _Fatal,
    _Ingest,
    _is_manifest,
    _json_constant,
    _json_float,
    _json_object,
    _stable,
    _too_deep,
    _unsafe_name,
    json_shape,
)
from .summary import SummaryBuilder

MiB = 1024 * 1024
_READ = MiB  # decompressed bytes read at a time
_FEED = 16 * 1024  # compressed bytes fed to a decompressor at a time (bounds a bomb's output per step)
_RATIO_FLOOR = 64 * MiB  # the compression ratio is checked once this much has been decompressed
_WS = re.compile(r"[ \t\n\r]*")
_BLANK = " \t\n\r"

_zstd: Any
try:  # optional: pip install 'schedviz[zstd]'
    import zstandard as _zstd
except ImportError:  # pragma: no cover - depends on the installation
    _zstd = None

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_available() -> bool:
    return _zstd is not None


# Runs of items (``_JsonStream._run``): where the items of a run end is found by the layout between
# them, and each is decoded by msgspec's strict decoder and checked to be, token for token, what the
# text says (``_JsonStream._item``); anything else (a repeated key, a float, an escape msgspec would
# write otherwise, an error) is read by the standard decoder, item by item, which decides and names
# the problem as before.
class _NotPlain(Exception):
    """A float in a run of items: read one by one (``_json_float`` decides)."""


def _no_float(text: str) -> Any:
    raise _NotPlain(text)


_decode_run = msgspec.json.Decoder(float_hook=_no_float).decode
_encode = msgspec.json.Encoder().encode
# the canonical form of the content hash: sorted keys, compact, UTF-8 (json.dumps(..., sort_keys=True,
# separators=(",", ":"), ensure_ascii=False) of what JSON decodes to, floats aside)
_encode_sorted = msgspec.json.Encoder(order="sorted").encode
_format = msgspec.json.format
_LEARN = 8  # items read one by one to learn, from the text between them, where items end


# --------------------------------------------------------------------------------------------------
# Progress and output


@dataclass
class Progress:
    """How far reading has got: compressed (stored) bytes read of the total, objects read."""

    bytes_read: int = 0
    bytes_total: int = 0
    objects: int = 0


@dataclass
class StreamedSnapshot:
    """What reading produced: the objects and summary as ``models.pack`` would have packed them."""

    objects_blob: bytes
    summary_blob: bytes
    summary_counts: dict[str, int]
    kinds: dict[str, int]
    config: dict[str, Any] | None
    ignored: dict[str, int]
    content_hash: str
    format: str
    documents: int
    name: str


class _Packer:
    """A JSON array written element by element through zlib into a temporary file (``models.pack``'s
    format: compact JSON, zlib level 6; deflate's output does not depend on how its input is cut).

    The elements are gathered into pieces of ``PIECE`` bytes, compressed and written on a thread of
    its own (zlib and the file let go of the interpreter while they work): the reading goes on
    meanwhile. At most ``QUEUED`` pieces wait for it."""

    PIECE = 256 * 1024
    QUEUED = 8

    def __init__(self) -> None:
        self.file: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by finish or close
        self.z = zlib.compressobj(6)
        self.parts: list[bytes] = [b"["]
        self.size = 1
        self.first = True
        self.error: Exception | None = None
        self.queue: queue.Queue[bytes | None] = queue.Queue(self.QUEUED)
        self.thread: threading.Thread | None = threading.Thread(
            target=self._compress, name="upload-packer", daemon=True
        )
        self.thread.start()

    def _compress(self) -> None:
        while True:
            data = self.queue.get()
            if data is None:
                return
            if self.error is None:
                try:
                    self.file.write(self.z.compress(data))
                except (OSError, zlib.error) as exc:  # raised again in the reading's thread
                    self.error = exc

    def _send(self) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(b"".join(self.parts))
        self.parts = []
        self.size = 0

    def _stop(self) -> None:
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join()
            self.thread = None

    def add(self, text: str) -> None:
        self.add_bytes(text.encode("utf-8"))

    def add_bytes(self, data: bytes) -> None:
        if not self.first:
            self.parts.append(b",")
        self.parts.append(data)
        self.first = False
        self.size += len(data) + 1
        if self.size >= self.PIECE:
            self._send()

    def finish(self) -> bytes:
        self.parts.append(b"]")
        self._send()
        self._stop()
        if self.error is not None:
            raise self.error
        self.file.write(self.z.flush())
        self.file.seek(0)
        data = self.file.read()
        self.file.close()
        return data

    def close(self) -> None:
        self._stop()
        self.file.close()


# --------------------------------------------------------------------------------------------------
# Containers


class _Counted:
    """The stored upload's chunks as a readable stream, counting the bytes read (for progress)."""

    def __init__(self, chunks: Iterable[bytes], progress: Progress, on_progress: Callable[[], None]) -> None:
        self.chunks = iter(chunks)
        self.buf = b""
        self.at = 0  # bytes of buf already read
        self.progress = progress
        self.on_progress = on_progress
        self.done = False

    def _fill(self, n: int) -> None:
        """Until ``n`` bytes are buffered past the cursor (all of them when n < 0), or the end."""
        while not self.done and (n < 0 or len(self.buf) - self.at < n):
            try:
                chunk = next(self.chunks)
            except StopIteration:
                self.done = True
                break
            self.buf = self.buf[self.at :] + chunk if self.at < len(self.buf) else chunk
            self.at = 0

    def read(self, n: int = -1) -> bytes:
        self._fill(n)
        end = len(self.buf) if n < 0 else min(len(self.buf), self.at + n)
        out = self.buf[self.at : end]
        self.at = end
        self.progress.bytes_read += len(out)
        self.on_progress()
        return out

    def peek(self, n: int) -> bytes:
        self._fill(n)
        return self.buf[self.at : self.at + n]


class _Decompressed:
    """A gzip or zstd stream's decompressed bytes, read ``read(n)`` at a time, bounded and checked."""

    def __init__(self, raw: _Counted, codec: str, name: str, limits: Limits) -> None:
        self.raw = raw
        self.codec = codec
        self.name = name
        self.limits = limits
        self.out = 0  # bytes produced
        self.fed = 0  # compressed bytes fed
        self.pending = b""
        self.ended = False
        self.d: Any = self._new()

    def _new(self) -> Any:
        if self.codec == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        assert _zstd is not None
        return _zstd.ZstdDecompressor().decompressobj()

    def _fail(self, message: str) -> _Fatal:
        return _Fatal(Problem(document=self.name, message=message))

    def _produce(self) -> bytes:
        """Some decompressed bytes (b"" at the end of the stream)."""
        while True:
            if self.codec == "gzip" and self.d.unconsumed_tail:
                try:
                    data = self.d.decompress(self.d.unconsumed_tail, _READ)
                except zlib.error as exc:
                    raise self._fail(f"not a valid gzip stream: {exc}") from None
                if data:
                    return bytes(data)
            if self.d.eof:
                rest = self.d.unused_data
                if rest.strip(b"\x00"):  # another member (concatenated gzip, several zstd frames)
                    self.d = self._new()
                    self.pending = rest + self.pending
                else:
                    self.pending = b""
                    tail = self.raw.read(_FEED)
                    while tail:
                        if tail.strip(b"\x00"):
                            self.d = self._new()
                            self.pending = tail
                            break
                        tail = self.raw.read(_FEED)
                    else:
                        self.ended = True
                        return b""
            feed = self.pending or self.raw.read(_FEED)
            self.pending = b""
            if not feed:
                raise self._fail(
                    f"truncated {self.codec} stream: the compressed data ends after {self.fed} bytes, "
                    f"before its end (after {self.out} bytes of text): the upload is cut short"
                )
            self.fed += len(feed)
            try:
                if self.codec == "gzip":
                    data = self.d.decompress(feed, _READ)
                else:
                    data = self.d.decompress(feed)
            except zlib.error as exc:
                raise self._fail(f"not a valid gzip stream: {exc}") from None
            except Exception as exc:  # zstandard.ZstdError
                if _zstd is not None and isinstance(exc, _zstd.ZstdError):
                    raise self._fail(f"not a valid zstd stream: {exc}") from None
                raise
            if data:
                return bytes(data)

    def read(self, n: int = -1) -> bytes:
        if self.ended:
            return b""
        data = self._produce()
        self.out += len(data)
        limits = self.limits
        if self.out > limits.max_decompressed_bytes:
            raise self._fail(
                f"decompresses to more than {limits.max_decompressed_bytes} bytes, the limit "
                "(SCHEDVIZ_MAX_DECOMPRESSED_BYTES)"
            )
        if self.out > _RATIO_FLOOR and self.out > limits.max_compression_ratio * max(1, self.fed):
            raise self._fail(
                f"decompresses more than {limits.max_compression_ratio} times its compressed size "
                "(refused: possible compression bomb; SCHEDVIZ_MAX_COMPRESSION_RATIO)"
            )
        return data


class _Plain:
    """Uncompressed bytes, bounded by the decompressed-size limit too (the same budget)."""

    def __init__(self, raw: _Counted, name: str, limits: Limits) -> None:
        self.raw = raw
        self.name = name
        self.limits = limits
        self.out = 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(_READ if n < 0 else n)
        self.out += len(data)
        if self.out > self.limits.max_decompressed_bytes:
            raise _Fatal(
                Problem(
                    document=self.name,
                    message=f"more than {self.limits.max_decompressed_bytes} bytes of text, the limit",
                )
            )
        return data


class _Budget:
    """Decompressed bytes counted across an archive's members, against the limits and the ratio to
    the archive's size."""

    def __init__(self, source: Any, archive: str, limits: Limits, compressed: int, spent: list[int]) -> None:
        self.source = source
        self.archive = archive
        self.limits = limits
        self.compressed = compressed
        self.spent = spent  # [bytes produced so far, all members]

    def read(self, n: int = -1) -> bytes:
        data = bytes(self.source.read(_READ if n < 0 else n))
        self.spent[0] += len(data)
        out, limits = self.spent[0], self.limits
        if out > limits.max_decompressed_bytes:
            raise _Fatal(
                Problem(
                    document=self.archive,
                    message=f"the archive's files decompress to more than {limits.max_decompressed_bytes} bytes, "
                    "the limit (SCHEDVIZ_MAX_DECOMPRESSED_BYTES)",
                )
            )
        if out > _RATIO_FLOOR and out > limits.max_compression_ratio * max(1, self.compressed):
            raise _Fatal(
                Problem(
                    document=self.archive,
                    message=f"the archive's files decompress to more than {limits.max_compression_ratio} times "
                    "its size (refused: possible compression bomb; SCHEDVIZ_MAX_COMPRESSION_RATIO)",
                )
            )
        return data


class _Reader:
    """A byte stream with a one-time look ahead."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.head = b""

    def peek(self, n: int) -> bytes:
        while len(self.head) < n:
            data = self.source.read(_READ)
            if not data:
                break
            self.head += data
        return self.head[:n]

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n < 0 or n >= len(self.head):
                out, self.head = self.head, b""
                return out
            out, self.head = self.head[:n], self.head[n:]
            return out
        return bytes(self.source.read(_READ if n < 0 else n))


def _chunks(stream: Any) -> Iterator[bytes]:
    while True:
        data = stream.read(_READ)
        if not data:
            return
        yield data


# --------------------------------------------------------------------------------------------------
# JSON, item by item


class _JsonStream:
    """One JSON file read item by item into ``ing`` (see the module's docstring)."""

    def __init__(self, chunks: Iterator[bytes], name: str, ing: _StreamIngest) -> None:
        self.chunks = chunks
        self.name = name
        self.ing = ing
        self.limits = ing.limits
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.base_bytes = 0  # bytes of the text before self.buf
        self.base_lines = 0  # newlines before self.buf
        self.base_column = 0  # characters after the last newline before self.buf
        self.base_chars = 0  # characters of the text before self.buf
        self.raw_bytes = 0
        # numbers with a fraction or an exponent (rare in Kubernetes objects) go through _json_float,
        # which refuses those a float cannot hold
        self.strict = json.JSONDecoder(
            object_pairs_hook=_json_object, parse_constant=_json_constant, parse_float=_json_float
        )
        self.started = False

    # ----- the buffer -----------------------------------------------------------------------------
    def _more(self) -> bool:
        """Append the next chunk's text; False at the end of the file."""
        if self.eof:
            return False
        try:
            data = next(self.chunks)
        except StopIteration:
            data = b""
        try:
            if data:
                text = self.decoder.decode(data)
            else:
                text = self.decoder.decode(b"", final=True)
                self.eof = True
        except UnicodeDecodeError as exc:
            at = self.raw_bytes + exc.start
            raise _Fatal(
                Problem(document=self.name, message=f"not valid UTF-8 text (byte {at}: {exc.reason})")
            ) from None
        self.raw_bytes += len(data)
        if not self.started:
            self.started = True
            if text.startswith("\ufeff"):
                text = text[1:]
                self.base_bytes += 3
        if self.pos:
            dropped = self.buf[: self.pos]
            self.base_bytes += len(dropped.encode("utf-8"))
            self.base_chars += len(dropped)
            newlines = dropped.count("\n")
            if newlines:
                self.base_lines += newlines
                self.base_column = len(dropped) - dropped.rfind("\n") - 1
            else:
                self.base_column += len(dropped)
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += text
        return bool(text) or not self.eof

    def _skip_ws(self) -> str:
        """The next character that is not whitespace ("" at the end of the file)."""
        pos = self.pos
        if pos < len(self.buf):
            c = self.buf[pos]
            if c not in _BLANK:
                return c
        while True:
            m = _WS.match(self.buf, self.pos)
            assert m is not None
            self.pos = m.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def byte_at(self, i: int) -> int:
        return self.base_bytes + len(self.buf[:i].encode("utf-8"))

    def where(self, i: int) -> str:
        line = self.base_lines + self.buf.count("\n", 0, i) + 1
        start = self.buf.rfind("\n", 0, i) + 1
        # on the line that began before the buffer, the characters before it count too
        column = i - start + 1 if start > 0 else self.base_column + i + 1
        return f"line {line} column {column} (byte {self.byte_at(i)})"

    def _syntax(self, message: str, i: int, item: str = "") -> _Fatal:
        where = f" in {item}" if item else ""
        return _Fatal(Problem(document=self.name, message=f"invalid JSON: {self.where(i)}: {message}{where}"))

    def _value(self, item: str, bound: int) -> tuple[Any, int, int]:
        """Decode the value at the cursor; (value, start, end) in the buffer. Reads more as needed."""
        start = self.pos
        scan = self.strict.scan_once  # type: ignore[attr-defined]
        while True:
            try:
                try:
                    value, end = scan(self.buf, start)
                except StopIteration as stop:
                    raise json.JSONDecodeError("Expecting value", self.buf, stop.value) from None
            except json.JSONDecodeError as exc:
                at_edge = exc.pos >= len(self.buf) - 64 or exc.msg.startswith("Unterminated string")
                if not self.eof and at_edge:
                    # the value goes on in the next chunk (or the error is at the edge: read more)
                    if len(self.buf) - start > bound:
                        raise _Fatal(
                            Problem(
                                document=self.name,
                                object=item,
                                message=f"larger than {bound} bytes, the limit for one object "
                                f"(SCHEDVIZ_MAX_OBJECT_BYTES), at byte {self.byte_at(start)}",
                            )
                        ) from None
                    before = self.pos
                    self._more()
                    start -= before - self.pos
                    continue
                if self.eof and (exc.pos >= len(self.buf) - 1 or exc.msg.startswith("Unterminated string")):
                    raise _Fatal(
                        Problem(
                            document=self.name,
                            object=item,
                            message=f"the text ends in the middle of this object (it starts at byte "
                            f"{self.byte_at(start)}; the file has {self.byte_at(len(self.buf))} bytes): "
                            "the upload is cut short",
                        )
                    ) from None
                raise self._syntax(exc.msg, exc.pos, item) from None
            except _BadInput as exc:
                raise self._syntax(exc.message, start, item) from None
            except RecursionError:
                raise self._syntax(_too_deep(self.limits.max_depth), start, item) from None
            except ValueError as exc:
                raise self._syntax(str(exc), start, item) from None
            if end >= len(self.buf) and not self.eof:  # a number may go on in the next chunk
                before = self.pos
                self._more()
                start -= before - self.pos
                continue
            if end - start > bound:
                raise _Fatal(
                    Problem(
                        document=self.name,
                        object=item,
                        message=f"larger than {bound} bytes, the limit for one object "
                        f"(SCHEDVIZ_MAX_OBJECT_BYTES), at byte {self.byte_at(start)}",
                    )
                )
            return value, start, end

    def _checked(self, value: Any, start: int, end: int, item: str) -> Any:
        """Nesting beyond the limit, as parse_json refuses it: measured on the item's text (exactly, with
        ``json_shape``, only when a quick count says the item might be too deep)."""
        text = self.buf[start:end]
        depth = self.limits.max_depth
        if text.count("{") + text.count("[") > depth and json_shape(text).depth > depth:
            raise self._syntax(_too_deep(depth), start, item)
        if SURROGATE_ESCAPE.search(text):  # a lone surrogate's escape reads as U+FFFD, as the API server reads it
            return go_strings(value)
        return value

    # ----- the document ---------------------------------------------------------------------------
    def read(self) -> None:
        first = self._skip_ws()
        if first == "":
            self.ing.problems.add(Problem(document=self.name, message="the file is empty"))
            return
        self.ing.documents += 1
        if first == "[":
            self.pos += 1
            self._array("", lambda i: f"[{i}]", self.ing.take_item)
        elif first == "{":
            self._object()
        else:
            value, start, end = self._value("", self.limits.max_object_bytes)
            self.ing.take_document(self._checked(value, start, end, ""), self.name)
        if self._skip_ws() != "":
            raise self._syntax("Extra data", self.pos)

    def _array(self, label: str, item_name: Callable[[int], str], take: Callable[[Any, str], None]) -> None:
        """The elements of the array whose "[" was just read, each handed to ``take``."""
        i = 0
        c = self._skip_ws()
        if c == "]":
            self.pos += 1
            return
        ing = self.ing
        marker: tuple[str, int] | None = None  # where items end (``_learn``)
        learn = _LEARN if ing.shared else 0
        alone_until = 0  # items that start before this character of the text are read one by one
        while True:
            if c == "":
                raise _Fatal(
                    Problem(
                        document=self.name,
                        message=f"the text ends after {item_name(i - 1) if i else 'the start of an array'} "
                        f"(byte {self.byte_at(self.pos)}): the upload is cut short",
                    )
                )
            if marker is not None and self.base_chars + self.pos >= alone_until:
                between = len(marker[0]) - marker[1] - 1  # from an item's end to the next one's "{"
                run = self._run(*marker)
                if isinstance(run, int):
                    if run < 0:
                        marker = None  # no more boundaries where they were: one by one from here
                    else:
                        alone_until = run
                    run = []
                for start, end in run:
                    got = self._item(start, end)
                    if got is None:
                        alone_until = self.base_chars + end
                        break
                    self.pos = end
                    ing.prepared = got
                    take(got[0], item_name(i))
                    ing.prepared = None
                    ing.progress.objects += 1
                    if not i & 255:
                        ing.tick()
                    i += 1
                    self.pos = end + between
                if run:
                    c = self._skip_ws()
                    continue
            item = item_name(i)
            value, start, end = self._value(item, self.limits.max_object_bytes)
            value = self._checked(value, start, end, item)
            self.pos = end
            take(value, item)
            ing.progress.objects += 1
            if not i & 255:
                ing.tick()
            i += 1
            before = self.base_chars
            c = self._skip_ws()
            if c == "," and learn and marker is None and self.base_chars == before:
                learn -= 1
                marker = self._learn(start, end)
            if c == ",":
                self.pos += 1
                c = self._skip_ws()
                continue
            if c == "]":
                self.pos += 1
                return
            if c == "":
                continue  # cut short: reported above
            raise self._syntax("Expecting ',' delimiter", self.pos, item)

    def _learn(self, start: int, end: int) -> tuple[str, int] | None:
        """The text that separates two items, learnt from the item just read (``buf[start:end]``, its
        comma at the cursor): the item's last line (its indentation and closing brace), the comma
        and the next item's brace; and the length of that last line. Only a separator that holds a
        raw newline is taken: JSON strings hold none, so it is the layout's (``kubectl -o json``
        indents items less than what they hold; a dump of one object a line puts them on lines of
        their own). A run cut at a wrong place would not decode as a run of items, and is read one
        by one."""
        buf = self.buf
        if buf[start] != "{" or buf[end - 1] != "}" or len(buf) - self.pos < 4096:
            return None
        line = buf.rfind("\n", start, end - 1)
        closing = "}" if line < 0 else buf[line:end]
        if closing != "}" and closing[1:-1].strip(" \t"):
            return None  # the closing brace shares its line with something else
        m = _WS.match(buf, self.pos + 1)
        assert m is not None
        nxt = m.end()
        if nxt >= len(buf) or buf[nxt] != "{":
            return None
        marker = closing + buf[end:nxt] + "{"
        if "\n" not in marker:
            return None
        return marker, len(closing)

    def _run(self, marker: str, closing: int) -> list[tuple[int, int]] | int:
        """Where the items from the cursor to the last ``marker`` in the buffer start and end; or the
        character of the text up to which items are read one by one (the end of the buffer, at the
        end of the text), or -1 when no boundary comes where one should have."""
        if len(self.buf) - self.pos < _READ and not self.eof:
            self._more()
        bound = self.limits.max_object_bytes
        while True:
            buf, pos = self.buf, self.pos
            at = buf.rfind(marker, pos)
            if at >= 0:
                break
            if self.eof:
                return self.base_chars + len(buf)
            if len(buf) - pos > bound or len(buf) - pos > 4 * _READ:
                return -1
            self._more()
        spans: list[tuple[int, int]] = []
        start = pos
        step = len(marker) - 1
        while True:
            k = buf.find(marker, start, at + len(marker))
            if k < 0:
                return spans
            end = k + closing
            if end - start > bound:  # read alone: it is refused for its size
                return spans or self.base_chars + end
            spans.append((start, end))
            start = k + step

    def _item(self, start: int, end: int) -> tuple[Any, bytes] | None:
        """The item ``buf[start:end]`` decoded by msgspec, and its compact encoding: when the text is,
        token for token, that encoding (no repeated key: each object has as many keys in the text as
        decoded; no float, and no escape or number written otherwise) and not nested near the limit;
        None otherwise (read by the standard decoder, which decides and names a problem)."""
        text = self.buf[start:end].encode("utf-8")
        try:
            value = _decode_run(text)
            packed = _encode(value)
            if _format(text, indent=-1) != packed:
                return None
        except (msgspec.MsgspecError, _NotPlain, RecursionError, ValueError):
            return None
        if packed.count(b"{") + packed.count(b"[") > self.limits.max_depth:
            return None  # measured exactly by _checked
        return value, packed

    def _object(self) -> None:
        """A top-level object: ``items`` streamed, its other members decoded whole."""
        self.pos += 1
        head: dict[str, Any] = {}
        streamed: list[str] = []
        c = self._skip_ws()
        if c == "}":
            self.pos += 1
            self.ing.take_document(head, self.name)
            return
        while True:
            if c != '"':
                if c == "":
                    raise _Fatal(
                        Problem(
                            document=self.name,
                            message=f"the text ends inside the top-level object (byte {self.byte_at(self.pos)}): "
                            "the upload is cut short",
                        )
                    )
                raise self._syntax("Expecting property name enclosed in double quotes", self.pos)
            key, _, end = self._value("", self.limits.max_object_bytes)
            self.pos = end
            if key in head or key in streamed:
                raise self._syntax(f"duplicate key {key!r}", self.pos)
            if self._skip_ws() != ":":
                raise self._syntax("Expecting ':' delimiter", self.pos)
            self.pos += 1
            c = self._skip_ws()
            if key == "items" and c == "[":
                self.pos += 1
                streamed.append(key)
                self.ing.items_before = dict(head)
                self._array(key, lambda i: f"items[{i}]", self.ing.take_item)
            else:
                value, start, end = self._value(key, self.limits.max_object_bytes)
                head[key] = self._checked(value, start, end, key)
                self.pos = end
            c = self._skip_ws()
            if c == ",":
                self.pos += 1
                c = self._skip_ws()
                continue
            if c == "}":
                self.pos += 1
                break
            if c == "":
                raise _Fatal(
                    Problem(
                        document=self.name,
                        message=f"the text ends inside the top-level object (byte {self.byte_at(self.pos)}): "
                        "the upload is cut short",
                    )
                )
            raise self._syntax("Expecting ',' delimiter", self.pos)
        self.ing.finish_object(head, streamed, self.name)


# --------------------------------------------------------------------------------------------------
# Validation and output


class _StreamIngest(_Ingest):
    """``_Ingest`` that writes each valid object out instead of keeping it."""

    def __init__(
        self, limits: Limits, progress: Progress, on_progress: Callable[[], None], shared: bool = True
    ) -> None:
        super().__init__(limits)
        self.shared = shared
        self.templates = self._templates() if shared else None
        self.templated = 0  # pods given a template by self.templates
        self.json_item = False  # the item being taken was decoded from JSON (``PodTemplates`` json_only)
        # the item being taken, as ``_JsonStream._item`` decoded it, and its compact encoding
        self.prepared: tuple[Any, bytes] | None = None
        self.progress = progress
        self.on_progress = on_progress
        self.packer = _Packer()
        self.digest = hashlib.sha256(b'{"config":null,"objects":[')
        self.first = True
        self.summary = SummaryBuilder()
        self.items_before: dict[str, Any] = {}
        self.label = ""

    def tick(self) -> None:
        self.on_progress()

    def keep(self, obj: dict[str, Any], view: KubeObject) -> None:
        prepared = self.prepared
        if prepared is not None and prepared[0] is obj:
            # decoded by msgspec from JSON without floats: its encodings are json.dumps's (ASCII but
            # DEL written as is, which json.dumps escapes by default, as it escapes non-ASCII)
            packed = prepared[1]
            if packed.isascii() and b"\x7f" not in packed:
                self.packer.add_bytes(packed)
            else:
                self.packer.add(json.dumps(obj, separators=(",", ":")))
            canonical = _encode_sorted(_stable(obj))
        else:
            self.packer.add(json.dumps(obj, separators=(",", ":")))
            canonical = json.dumps(
                _stable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
            ).encode("utf-8")
        self.digest.update(canonical if self.first else b"," + canonical)
        self.first = False
        self.summary.add(obj, view)

    TEMPLATES = 10_000

    @classmethod
    def _templates(cls) -> PodTemplates:
        """Templates for this reading: at most ``TEMPLATES`` (each holds its first pod's spec; pods
        of others are read on their own), which memory holds with the summary's rows."""
        templates = PodTemplates()
        templates.LIMIT = cls.TEMPLATES
        return templates

    def template_of(self, obj: dict[str, Any]) -> PodTemplate | None:
        assert self.templates is not None
        if self.templated >= COMPACT_AFTER_PODS:
            # past that many pods, PodTemplates makes pods hold one copy of what their template has
            # in common, for a snapshot kept whole; the objects read here are written out and let go
            self.templates = self._templates()
            self.templated = 0
        template = self.templates.template_of(obj, json_only=self.json_item)
        if template is not None:
            self.templated += 1
        return template

    def take_item(self, value: Any, where: str) -> None:
        self.json_item = True
        try:
            self._take(value, self.label, where)
        finally:
            self.json_item = False

    def take_document(self, doc: Any, label: str) -> None:
        self.documents -= 1  # add_document counts it again
        self.add_document(doc, label, "")

    def finish_object(self, head: dict[str, Any], streamed: list[str], label: str) -> None:
        """The top-level object's members once read; its ``items`` (if streamed) were taken already."""
        if not streamed:
            self.take_document(head, label)
            return
        kind = head.get("kind")
        if isinstance(kind, str) and kind.endswith("List"):
            return
        if "kind" not in head and "apiVersion" not in head:
            # a scenario or simulator export: its items were taken; the rest as parsing reads them
            others = sorted(k for k in head if k in _BUNDLE_KINDS)
            if others:  # read whole, they come before items: streamed, items came first
                self.problems.add(
                    Problem(
                        document=label,
                        field="items",
                        message=f"a scenario with items and {', '.join(others)} cannot be read as a stream "
                        "in its order: upload it uncompressed under 8 MiB, or as a kubectl List",
                    )
                )
                return
            if len(head) > 0:
                self.documents -= 1
                self.add_document({**head, "items": []}, label, "")
            return
        self.problems.add(
            Problem(
                document=label,
                field="kind",
                message=f"a top-level object with items must be a List (kind ending with List), got kind {kind!r}",
            )
        )


def _json_member(name: str) -> bool:
    return name.lower().endswith(".json")


def parse_stream(
    chunks: Iterable[bytes],
    filename: str,
    limits: Limits | None = None,
    *,
    total: int = 0,
    on_progress: Callable[[Progress], None] | None = None,
    shared: bool = True,
) -> StreamedSnapshot:
    """Read, validate, hash and summarise an upload from its stored chunks; raises ``UploadError``.

    ``on_progress`` is called often (after every chunk and every object); it should rate-limit itself.
    ``shared=False`` decodes, validates and views every item on its own (no runs of items decoded at
    once, no pod templates): the reference the shared reading is checked against.
    """
    limits = limits or Limits()
    name = filename or "upload"
    progress = Progress(bytes_total=total)
    report = (lambda: on_progress(progress)) if on_progress is not None else (lambda: None)
    ing = _StreamIngest(limits, progress, report, shared)
    try:
        try:
            fmt = _read_container(_Counted(chunks, progress, report), name, limits, ing)
            return _finish(ing, fmt)
        except _Fatal as fatal:
            raise UploadError([*ing.problems.items, fatal.problem]) from None
    finally:
        ing.packer.close()


def _read_container(raw: _Counted, name: str, limits: Limits, ing: _StreamIngest) -> str:
    head = raw.peek(4)
    lower = name.lower()
    if head[:2] == GZIP_MAGIC or head[:4] == ZSTD_MAGIC:
        codec = "gzip" if head[:2] == GZIP_MAGIC else "zstd"
        if codec == "zstd" and _zstd is None:
            raise _Fatal(
                Problem(
                    document=name,
                    message="zstd compression needs the zstandard package on the server "
                    "(pip install 'schedviz[zstd]'); use gzip",
                )
            )
        stream = _Reader(_Decompressed(raw, codec, name, limits))
        inner = re.sub(r"\.(gz|zst|zstd)$", "", name, flags=re.IGNORECASE)
        if stream.peek(262)[257:262] == b"ustar" or lower.endswith((".tar.gz", ".tgz", ".tar.zst")):
            _read_tar(stream, name, limits, ing)
            return f"tar.{'gz' if codec == 'gzip' else 'zst'}"
        _read_file(stream, inner, limits, ing)
        return codec if codec == "gzip" else "zstd"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        _read_zip(raw, name, limits, ing)
        return "zip"
    stream = _Reader(_Plain(raw, name, limits))
    if stream.peek(262)[257:262] == b"ustar" or lower.endswith(".tar"):
        _read_tar(stream, name, limits, ing)
        return "tar"
    if head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00":
        raise _Fatal(Problem(document=name, message="unsupported compression (bzip2 or xz): use gzip or zstd"))
    return _read_file(stream, name, limits, ing)


def _read_file(stream: _Reader, name: str, limits: Limits, ing: _StreamIngest) -> str:
    """One manifest file; returns its format (json or yaml)."""
    ing.files.append(name)
    first = stream.peek(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if first in (b"{", b"["):
        ing.label = name
        _JsonStream(_chunks(stream), name, ing).read()
        ing.text_format = "json"
        return "json"
    data = _read_whole(stream, name, limits)
    ing.files.pop()
    ing.add_file(name, data)
    return ing.text_format


def _read_whole(stream: Any, name: str, limits: Limits) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        data = stream.read(_READ)
        if not data:
            return b"".join(parts)
        size += len(data)
        if size > limits.max_file_bytes:
            raise _Fatal(
                Problem(
                    document=name,
                    message=f"more than {limits.max_file_bytes} bytes, the limit for a file read whole "
                    "(YAML, or an archive member): upload large clusters as JSON (kubectl get ... -o json)",
                )
            )
        parts.append(data)


def _read_tar(stream: _Reader, archive: str, limits: Limits, ing: _StreamIngest) -> None:
    count = 0
    found = 0
    seen: set[str] = set()
    last = ""
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tf:  # type: ignore[call-overload]
            for m in tf:
                count += 1
                if count > limits.max_archive_members:
                    raise _Fatal(
                        Problem(
                            document=archive,
                            message=f"the archive has more than {limits.max_archive_members} members, the limit",
                        )
                    )
                why = _unsafe_name(m.name)
                if why is None:
                    if m.issym() or m.islnk():
                        why = f"{'symbolic' if m.issym() else 'hard'} link (to {m.linkname!r})"
                    elif not (m.isreg() or m.isdir()):
                        why = "not a regular file"
                if why is not None:
                    ing.problems.add(Problem(document=_display(m.name), message=f"archive member refused: {why}"))
                    continue
                if m.isdir() or not _is_manifest(m.name):
                    continue
                member = _display(m.name)
                if member in seen:
                    ing.problems.add(Problem(document=member, message="appears more than once in the archive"))
                    continue
                if member < last:
                    ing.problems.add(
                        Problem(
                            document=member,
                            message="archive members must be in name order to be read as a stream "
                            f"(after {last}); repack the archive sorted",
                        )
                    )
                    continue
                seen.add(member)
                last = member
                if not _json_member(member) and m.size > limits.max_file_bytes:
                    raise _Fatal(
                        Problem(
                            document=member,
                            message=f"decompresses to more than {limits.max_file_bytes} bytes, the limit "
                            "for a file read whole (SCHEDVIZ_MAX_FILE_BYTES): upload large clusters as JSON",
                        )
                    )
                f = tf.extractfile(m)
                if f is None:
                    continue
                found += 1
                _read_file(_Reader(f), member, limits, ing)
    except _Fatal:
        raise
    except (tarfile.TarError, EOFError, OSError, zlib.error, ValueError) as exc:
        raise _Fatal(Problem(document=archive, message=f"not a valid tar archive: {exc}")) from None
    if not found and not ing.problems:
        ing.problems.add(Problem(document=archive, message="the archive contains no .yaml, .yml or .json file"))


def _read_zip(raw: _Counted, archive: str, limits: Limits, ing: _StreamIngest) -> None:
    with tempfile.TemporaryFile() as spool:
        size = 0
        while True:
            data = raw.read(_READ)
            if not data:
                break
            size += len(data)
            spool.write(data)
        spool.seek(0)
        try:
            zf = zipfile.ZipFile(spool)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
            raise _Fatal(Problem(document=archive, message=f"not a valid zip archive: {exc}")) from None
        with zf:
            infos = zf.infolist()
            if len(infos) > limits.max_archive_members:
                raise _Fatal(
                    Problem(
                        document=archive,
                        message=f"the archive has more than {limits.max_archive_members} members, the limit",
                    )
                )
            declared = sum(i.file_size for i in infos if _is_manifest(i.filename))
            if declared > limits.max_decompressed_bytes:
                raise _Fatal(
                    Problem(
                        document=archive,
                        message=f"the archive's files decompress to more than {limits.max_decompressed_bytes} "
                        "bytes, the limit (SCHEDVIZ_MAX_DECOMPRESSED_BYTES)",
                    )
                )
            spent = [0]
            wanted = []
            for info in sorted(infos, key=lambda i: i.filename):
                why = _unsafe_name(info.filename) if info.filename else "empty member name"
                if why is None and info.flag_bits & 0x1:
                    why = "encrypted"
                if why is not None:
                    ing.problems.add(
                        Problem(document=_display(info.filename), message=f"archive member refused: {why}")
                    )
                    continue
                if info.filename.endswith("/") or not _is_manifest(info.filename):
                    continue
                wanted.append(info)
            if not wanted and not ing.problems:
                ing.problems.add(
                    Problem(document=archive, message="the archive contains no .yaml, .yml or .json file")
                )
            for info in wanted:
                try:
                    with zf.open(info) as f:
                        member = _Budget(f, archive, limits, size, spent)
                        _read_file(_Reader(member), _display(info.filename), limits, ing)
                except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError, RuntimeError) as exc:
                    ing.problems.add(
                        Problem(document=_display(info.filename), message=f"unreadable archive member: {exc}")
                    )


def _finish(ing: _StreamIngest, fmt: str) -> StreamedSnapshot:
    if ing.documents == 0 and not ing.problems:
        where = ing.files[0] if len(ing.files) == 1 else ""
        ing.problems.add(Problem(document=where, message="no Kubernetes objects found (the upload is empty)"))
    config: dict[str, Any] | None = None
    if len(ing.configs) > 1:
        places = ", ".join(where for _, where in ing.configs)
        ing.problems.add(
            Problem(document=ing.configs[1][1], message=f"more than one KubeSchedulerConfiguration ({places})")
        )
    elif ing.configs:
        config, where = ing.configs[0]
        try:
            load_config(json.loads(json.dumps(config)))
        except ConfigError as exc:
            for msg in exc.problems:
                ing.problems.add(Problem(document=where, object=CONFIG_KIND, field=_config_field(msg), message=msg))
    if ing.problems:
        raise UploadError(list(ing.problems.items))
    objects_blob = ing.packer.finish()
    if config is None:
        ing.digest.update(b"]}")
        digest = ing.digest.hexdigest()
    else:  # a configuration among the manifests: its JSON comes first in the canonical form
        digest = _rehash_with_config(objects_blob, config)
    summary_blob, counts, kinds = ing.summary.finish()
    return StreamedSnapshot(
        objects_blob=objects_blob,
        summary_blob=summary_blob,
        summary_counts=counts,
        kinds=kinds,
        config=config,
        ignored=dict(sorted(ing.ignored.items())),
        content_hash=digest,
        format=fmt if fmt not in ("json", "yaml") else ing.text_format,
        documents=ing.documents,
        name=ing.name,
    )


def _rehash_with_config(objects_blob: bytes, config: dict[str, Any]) -> str:
    """``parsing.content_hash`` of the packed objects and the configuration, reading the objects back
    one at a time from the packed array."""
    h = hashlib.sha256()
    h.update(b'{"config":')
    h.update(
        json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    )
    h.update(b',"objects":[')
    d = zlib.decompressobj()
    decoder = json.JSONDecoder()
    buf = ""
    pos = 0
    opened = False
    first = True
    text_decoder = codecs.getincrementaldecoder("utf-8")()
    for i in range(0, len(objects_blob), _READ):
        buf = buf[pos:] + text_decoder.decode(d.decompress(objects_blob[i : i + _READ]))
        pos = 0
        while True:
            if not opened and pos < len(buf) and buf[pos] == "[":
                opened = True
                pos += 1
            while pos < len(buf) and buf[pos] in ",]":
                pos += 1
            if pos >= len(buf):
                break
            try:
                obj, end = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError:
                break
            canonical = json.dumps(
                _stable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
            ).encode("utf-8")
            h.update(canonical if first else b"," + canonical)
            first = False
            pos = end
    h.update(b"]}")
    return h.hexdigest()

