"""A corpus of hostile uploads, built deterministically (the big ones would not fit in the repository).

``CORPUS`` lists (case id, file name, builder, what the answer's message must say). Each builder
returns the bytes to upload as the ``file`` of ``POST /api/v1/snapshots/``.
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
import zlib
from collections.abc import Callable

import yaml

MiB = 1024 * 1024
UPLOAD_LIMIT = 50 * MiB  # SCHEDVIZ_MAX_UPLOAD_BYTES as the test sets it for this case (the default is 1 GiB)


def alias_bomb() -> bytes:
    """The billion laughs: 9 levels of 10 aliases each, 10^9 strings once expanded."""
    lines = ['a0: &a0 "lol"']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return ("\n".join(lines) + "\n").encode()


def deep_json() -> bytes:
    return b"[" * 100_000 + b"]" * 100_000


def deep_yaml() -> bytes:
    return b"kind: List\nitems: " + b"{a: " * 100_000 + b"1" + b"}" * 100_000 + b"\n"


def manifest_over_the_limit() -> bytes:
    """A plausible manifest one byte over a 50 MiB upload limit."""
    node = yaml.safe_dump({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}).encode()
    doc = b"---\n" + node
    body = doc * (UPLOAD_LIMIT // len(doc) + 1)
    return body[: UPLOAD_LIMIT + 1]


def manifest_50mb_dense() -> bytes:
    """50 MB of YAML (under the byte limit): ~10 million one-line mappings."""
    line = b"- {a: 1}\n"
    return b"kind: List\nitems:\n" + line * (50_000_000 // len(line))


def zip_bomb() -> bytes:
    """A 1 MB zip whose member inflates to 1 GiB of zeros (declared in its central directory)."""
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        zf.open("bomb.yaml", "w", force_zip64=True) as f,
    ):
        chunk = bytes(8 * MiB)
        for _ in range(128):
            f.write(chunk)
    return buf.getvalue()


def zip_bomb_lying() -> bytes:
    """The same, declaring 1000 bytes: it must be caught while inflating, not from the directory."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("liar.yaml", b" " * (256 * MiB))
    out = bytearray(buf.getvalue())
    pos = out.find(b"PK\x01\x02")
    while pos >= 0:
        out[pos + 24 : pos + 28] = (1000).to_bytes(4, "little")
        pos = out.find(b"PK\x01\x02", pos + 4)
    return bytes(out)


def targz_bomb() -> bytes:
    header = tarfile.TarInfo("bomb.yaml")
    header.size = 1024 * MiB
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [co.compress(header.tobuf())]
    zeros = bytes(8 * MiB)
    parts += [co.compress(zeros) for _ in range(128)]
    parts.append(co.flush())
    return b"".join(parts)


def tar_traversal() -> bytes:
    """`../` and absolute paths, symbolic and hard links, a device: and one good manifest."""
    buf = io.BytesIO()
    good = yaml.safe_dump({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "good"}}).encode()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, kind, link in [
            ("../../etc/cron.d/evil.yaml", tarfile.REGTYPE, ""),
            ("/tmp/abs.yaml", tarfile.REGTYPE, ""),
            ("a/../../up.yaml", tarfile.REGTYPE, ""),
            ("shadow.yaml", tarfile.SYMTYPE, "/etc/shadow"),
            ("hard.yaml", tarfile.LNKTYPE, "../../etc/passwd"),
            ("tty.yaml", tarfile.CHRTYPE, ""),
        ]:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = link
            data = good if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("ok/good.yaml")
        info.size = len(good)
        tf.addfile(info, io.BytesIO(good))
    return buf.getvalue()


def invalid_utf8() -> bytes:
    return b"apiVersion: v1\nkind: Node\nmetadata:\n  name: \xc3\x28bad\n"


def duplicate_keys() -> bytes:
    return b"apiVersion: v1\nkind: Node\nkind: Pod\nmetadata: {name: a}\n"


def duplicate_objects() -> bytes:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "twice"}}
    return json.dumps([node, node]).encode()


def python_tags() -> bytes:
    return b"kind: !!python/object/apply:os.system ['touch /tmp/schedviz-hardening-pwned']\n"


def custom_tags() -> bytes:
    return b"apiVersion: v1\nkind: Node\nmetadata: !include /etc/passwd\n"


def million_tiny_objects() -> bytes:
    """10^6 + 1 small Kubernetes objects (~34 MB of JSON, read as a stream): over the object-count limit."""
    one = b'{"apiVersion":"v1","kind":"Secret"}'
    return b"[" + b",".join([one] * 1_000_001) + b"]"


def million_tiny_yaml_documents() -> bytes:
    return b"---\n{}\n" * 1_000_000


def not_kubernetes() -> bytes:
    compose = {"version": "3", "services": {"web": {"image": "nginx", "ports": ["80:80"]}}}
    return yaml.safe_dump(compose).encode()


def html_page() -> bytes:
    return b"<!doctype html><html><body><script>alert(1)</script></body></html>\n"


def binary_garbage() -> bytes:
    import random

    rng = random.Random(7)
    return bytes(rng.getrandbits(8) for _ in range(256 * 1024))


CORPUS: list[tuple[str, str, Callable[[], bytes], str]] = [
    ("alias-bomb", "lol.yaml", alias_bomb, "YAML aliases expand to more than"),
    ("deep-json", "deep.json", deep_json, "nesting deeper than 100 levels"),
    ("deep-yaml", "deep.yaml", deep_yaml, "nesting"),
    ("over-the-upload-limit", "big.yaml", manifest_over_the_limit, "the limit is 52428800 bytes"),
    ("50MB-dense-yaml", "dense.yaml", manifest_50mb_dense, "YAML nodes"),
    ("zip-bomb", "bomb.zip", zip_bomb, "decompress to more than"),
    ("zip-bomb-lying", "liar.zip", zip_bomb_lying, "liar.yaml"),
    ("tar.gz-bomb", "bomb.tar.gz", targz_bomb, "decompresses to more than"),
    ("tar-traversal-links", "evil.tgz", tar_traversal, "path contains '..'"),
    ("invalid-utf8", "bad.yaml", invalid_utf8, "not valid UTF-8"),
    ("duplicate-keys", "dup.yaml", duplicate_keys, "duplicate key 'kind'"),
    ("duplicate-objects", "dup.json", duplicate_objects, "duplicate Node twice"),
    ("python-tag", "tags.yaml", python_tags, "is not allowed"),
    ("custom-tag", "include.yaml", custom_tags, "is not allowed"),
    ("1e6-tiny-objects", "many.json", million_tiny_objects, "more than"),
    ("1e6-tiny-documents", "many.yaml", million_tiny_yaml_documents, ""),
    ("docker-compose", "compose.yaml", not_kubernetes, "kind is required"),
    ("html", "page.yaml", html_page, "expected a Kubernetes object"),
    ("binary-garbage", "blob.bin", binary_garbage, ""),
]
