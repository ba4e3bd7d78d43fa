"""A large JSON dump read item by item: what ``kubectl get -o json`` prints, in bounded memory.

A production cluster's dump is hundreds of megabytes (a 65,000-node one, gigabytes). Read whole, its
text and its decoded list are held at once; read here, the text is held a chunk at a time and each
item of the top-level array, or of the ``items`` array of the top-level object, is decoded (at C
speed: many items at once by msgspec's strict decoder, the rest by the standard one) and handed on as
soon as its bytes have arrived.

``items(path)`` yields ``(label, item)`` pairs, labelled as ``loader._flatten`` labels them
(``items[i]``, or ``[i]`` for a top-level array), then the top-level object itself with its
``items`` emptied (``("", envelope)``) so that its other members (a List's kind, a scenario's
configuration) are read as before. A file whose shape this reader does not stream (a top-level object
with ``nodes`` or ``pods`` beside ``items``, whose order matters; a kind that is not a List) raises
``NotStreamable`` and is read whole. Syntax errors name the line and column, as ``json.loads`` does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import msgspec

from .errors import InputError

# Strict JSON (RFC 8259) at about twice the standard decoder's speed, with the same values: objects
# as dicts (the last of a repeated key wins), integers of any size as ints, the same floats. What it
# refuses (NaN, Infinity, numbers beyond a double's range, lone surrogates, invalid JSON) is handed to
# the standard decoder, which reads it or reports the error as before.
_strict_decode = msgspec.json.Decoder().decode

# The text of each item of an array, for a batch reader (``items``).
_decode_texts = msgspec.json.Decoder(list[msgspec.Raw]).decode
BatchReader = Callable[[list[msgspec.Raw]], list[Any]]

CHUNK_CHARS = 8 << 20
# An item is a Kubernetes object: no real one comes near this. A longer one is reported where it
# stops being valid JSON instead of being read further.
MAX_ITEM_CHARS = 64 << 20
_WHITESPACE = " \t\n\r"


# A \u escape of a UTF-16 surrogate. The API server's decoder (sigs.k8s.io/json, as encoding/json)
# replaces one that is not half of a pair by U+FFFD; Python's keeps it as a lone surrogate, a string
# no UTF-8 text can hold (encoding it fails).
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_ESCAPE_BYTES = re.compile(SURROGATE_ESCAPE.pattern.encode())
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def go_strings(value: Any) -> Any:
    """``value`` (decoded JSON) with each lone surrogate of its strings, keys included, replaced by
    U+FFFD, as the API server decodes ``\\ud800`` (valid pairs were combined by the decoder already).
    Call it when ``SURROGATE_ESCAPE`` finds one in the text."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {go_strings(k): go_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [go_strings(v) for v in value]
    return value


def loads(text: str | bytes) -> Any:
    """``json.loads(text)`` (a text, or its UTF-8 bytes): the same value, or the same error (lone
    surrogates as the API server reads them: ``go_strings``)."""
    try:
        return _strict_decode(text)
    except (msgspec.DecodeError, RecursionError):
        value = json.loads(text)
        escape = _SURROGATE_ESCAPE_BYTES if isinstance(text, bytes) else SURROGATE_ESCAPE
        return go_strings(value) if escape.search(text) else value  # type: ignore[arg-type]


class NotStreamable(Exception):
    """The file's shape needs it read whole (see the module's doc)."""


class _Text:
    """The file's text, a chunk at a time; positions in ``buf`` and where ``buf`` starts."""

    def __init__(self, f: TextIO, source: str) -> None:
        self.f = f
        self.source = source
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.lines_before = 0  # newlines before buf
        self.col_before = 0  # characters after the last newline before buf
        self.shifts = 0  # how many times buf was replaced (positions in it moved)

    def more(self) -> bool:
        """Drop what was read, append a chunk; False at the end of the file."""
        if self.eof:
            return False
        gone = self.buf[: self.pos]
        nl = gone.count("\n")
        if nl:
            self.lines_before += nl
            self.col_before = len(gone) - gone.rfind("\n") - 1
        else:
            self.col_before += len(gone)
        chunk = self.f.read(CHUNK_CHARS)
        if not chunk:
            self.eof = True
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        self.shifts += 1
        return bool(chunk)

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end)."""
        while True:
            buf = self.buf
            n = len(buf)
            p = self.pos
            while p < n and buf[p] in _WHITESPACE:
                p += 1
            self.pos = p
            if p < n:
                return buf[p]
            if not self.more():
                return ""

    def error(self, msg: str, at: int | None = None) -> InputError:
        p = self.pos if at is None else at
        before = self.buf.count("\n", 0, p)
        line = self.lines_before + before + 1
        if before:
            col = p - self.buf.rfind("\n", 0, p)
        else:
            col = self.col_before + p + 1
        return InputError(f"invalid JSON at line {line} column {col}: {msg}", source=self.source)

    def expect(self, ch: str, msg: str) -> None:
        if self.peek() != ch:
            raise self.error(msg)
        self.pos += 1

    def value(self, decoder: json.JSONDecoder) -> Any:
        """The JSON value starting at the next non-whitespace character."""
        if not self.peek():
            raise self.error("Expecting value")
        while True:
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                # incomplete (its bytes have not all arrived) or invalid: read on while it may be
                # the first, up to the bound of an object
                if not self.eof and len(self.buf) - self.pos < MAX_ITEM_CHARS:
                    self.more()  # then decoded again: an error's position is in the buffer it saw
                    continue
                raise self.error(exc.msg, exc.pos) from None
            except RecursionError:
                raise InputError(
                    "arrays and objects nested too deeply to read (hundreds of levels; a Kubernetes "
                    "object has a few dozen)",
                    source=self.source,
                ) from None
            # a number at the end of the chunk may go on in the next one
            if end >= len(self.buf) and not self.eof:
                self.more()
                continue
            if SURROGATE_ESCAPE.search(self.buf, self.pos, end):
                value = go_strings(value)
            self.pos = end
            return value


def items(path: Path, source: str, reader: BatchReader | None = None) -> Iterator[tuple[str, Any]]:
    """``reader``: decodes the items of a batch from their text (``podsiblings``); it raises
    ``msgspec.DecodeError`` for text the strict decoder refuses."""
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8") as f:
        text = _Text(f, source)
        first = text.peek()
        if first == "[":
            text.pos += 1
            yield from _array(text, decoder, "", reader)
        elif first == "{":
            text.pos += 1
            envelope: dict[str, Any] = {}
            streamed = False
            if text.peek() == "}":
                text.pos += 1
            else:
                while True:
                    if text.peek() != '"':
                        raise text.error("Expecting property name enclosed in double quotes")
                    key = text.value(decoder)
                    text.expect(":", "Expecting ':' delimiter")
                    if key == "items" and not streamed and key not in envelope and text.peek() == "[":
                        text.pos += 1
                        yield from _array(text, decoder, "items", reader)
                        streamed = True
                        envelope["items"] = []
                    else:
                        envelope[key] = text.value(decoder)  # the last of a repeated key wins, as json.loads
                    sep = text.peek()
                    if sep == ",":
                        text.pos += 1
                        continue
                    if sep == "}":
                        text.pos += 1
                        break
                    raise text.error("Expecting ',' delimiter")
            kind = envelope.get("kind")
            if streamed and (
                (kind is None and ("nodes" in envelope or "pods" in envelope))
                or (kind is not None and not (isinstance(kind, str) and kind.endswith("List")))
            ):
                raise NotStreamable(source)
            yield "", envelope
        else:
            raise text.error("Expecting value")
        if text.peek():
            raise text.error("Extra data")


def _array(
    text: _Text, decoder: json.JSONDecoder, name: str, reader: BatchReader | None
) -> Iterator[tuple[str, Any]]:
    """The array's items. The first two are decoded alone; if the text between them shows where
    items end (``_boundary``), later ones are decoded many at a time, as one array: one decoder call
    per chunk shares its object keys between the items, as a whole read does (the decoder forgets
    them after each call), instead of holding a copy of every key in every item."""
    if text.peek() == "]":
        text.pos += 1
        return
    i = 0
    marker: str | None = None
    closing = 0
    learn = 3  # items to learn the boundary from (one whose text stayed in one buffer)
    while True:
        if marker is not None:
            got = _batch(text, decoder, marker, closing, reader)
            if got is None:
                marker = None  # no boundary where one was expected: item by item from here
            else:
                for item in got:
                    yield f"{name}[{i}]", item
                    i += 1
                if got:
                    text.expect(",", "Expecting ',' delimiter")
                    continue
        text.peek()
        start, shifts = text.pos, text.shifts
        value = text.value(decoder)
        end = text.pos
        yield f"{name}[{i}]", value
        i += 1
        sep = text.peek()
        if sep == ",":
            if marker is None and learn > 0 and text.shifts == shifts:
                learn -= 1
                marker, closing = _boundary(text, start, end)
                if marker is not None:
                    learn = 0
            text.pos += 1
            continue
        if sep == "]":
            text.pos += 1
            return
        raise text.error("Expecting ',' delimiter")


def _boundary(text: _Text, start: int, end: int) -> tuple[str | None, int]:
    """The text that separates two items, learnt from the first item (``buf[start:end]``, followed
    by its comma at ``text.pos``): its last line's indentation and closing brace, the separator, the
    next item's brace. It is only trusted when it holds a raw newline: JSON strings hold none, so a
    newline followed by an indentation and a brace is a line of the layout, and at the items'
    indentation only items close (a nested object is indented deeper). ``None`` when the layout
    does not show it (everything on one line)."""
    buf = text.buf
    if buf[start] != "{" or buf[end - 1] != "}":
        return None, 0
    line_start = buf.rfind("\n", start, end - 1)
    closing = "}" if line_start < 0 else buf[line_start : end]
    if closing != "}" and closing[1:-1].strip(" \t"):
        return None, 0  # the closing brace shares its line with something else
    _lookahead(text)
    buf = text.buf
    after = text.pos + 1
    more = 0
    while after + more < len(buf) and buf[after + more] in _WHITESPACE:
        more += 1
    if after + more >= len(buf) or buf[after + more] != "{":
        return None, 0
    marker = closing + buf[text.pos : after + more] + "{"
    if "\n" not in marker:
        return None, 0
    return marker, len(closing)


def _lookahead(text: _Text) -> None:
    """At least a line's worth of text after the position (the separator and the next brace)."""
    while len(text.buf) - text.pos < 4096 and not text.eof:
        text.more()


def _batch(
    text: _Text, decoder: json.JSONDecoder, marker: str, closing: int, reader: BatchReader | None
) -> list[Any] | None:
    """The items up to the last boundary in the buffer, decoded as one array (``[]`` when the
    buffer holds none yet and the file has no more), or by ``reader`` from their text; ``None``
    when boundaries stop coming."""
    while True:
        text.peek()
        buf = text.buf
        at = buf.rfind(marker, text.pos)
        if at >= 0:
            stop = at + closing
            batch = "[" + buf[text.pos : stop] + "]"
            try:
                if reader is None:
                    items = _strict_decode(batch)
                else:
                    items = reader(_decode_texts(batch))
            except (msgspec.DecodeError, RecursionError):
                # what strict JSON refuses, the standard decoder may read (NaN, a huge number, a lone
                # surrogate): it decides, as for the items read alone
                try:
                    items, end = decoder.raw_decode(batch)
                except (json.JSONDecodeError, RecursionError):
                    return None  # decoded again item by item: the error is reported where it is
                if end != len(batch):
                    return None
                if SURROGATE_ESCAPE.search(batch):
                    items = go_strings(items)
            if not isinstance(items, list):
                return None
            text.pos = stop
            return items
        if text.eof:
            return []
        if len(buf) - text.pos > 2 * CHUNK_CHARS + MAX_ITEM_CHARS:
            return None
        text.more()
