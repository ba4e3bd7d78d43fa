"""Credentials at rest: Fernet (AES-128-CBC + HMAC-SHA256, from ``cryptography``) with rotation.

The keys come from ``SCHEDVIZ_ENCRYPTION_KEY``: one or more Fernet keys separated by commas, the
first one encrypting, every one decrypting (``MultiFernet``). Rotation: put a new key first and
keep the old ones after it, restart, run ``manage.py rotate_cluster_credentials`` (re-encrypts
every stored credential with the first key), then drop the old keys. ``manage.py
rotate_cluster_credentials --generate`` prints a new key.

Without the variable (the embedded development default) a key is generated once into
``<SCHEDVIZ_DATA_DIR>/encryption.key`` (mode 0600) and a warning says so; with
``SCHEDVIZ_REQUIRE_SECRET_KEY`` set (production) the variable is required.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from schedviz.engine.errors import SchedVizError
from schedviz.lib.env import env_bool

log = logging.getLogger(__name__)

ENV = "SCHEDVIZ_ENCRYPTION_KEY"
KEY_FILE = "encryption.key"
_lock = threading.Lock()
_warned = False


class EncryptionKeyError(SchedVizError):
    """No usable key, a malformed key, or a credential the configured keys cannot decrypt."""


def generate_key() -> str:
    return Fernet.generate_key().decode()


def _data_dir() -> Path:
    try:
        from django.conf import settings

        return Path(settings.DATA_DIR)
    except Exception:
        return Path(os.environ.get("SCHEDVIZ_DATA_DIR", "var"))


def _parse(raw: str, where: str) -> list[bytes]:
    keys = [k.strip() for k in raw.replace("\n", ",").split(",") if k.strip()]
    out = []
    for i, k in enumerate(keys):
        try:
            Fernet(k.encode())
        except (ValueError, TypeError):
            raise EncryptionKeyError(
                f"{where}: key {i + 1} is not a Fernet key (32 url-safe base64-encoded bytes; "
                "`manage.py rotate_cluster_credentials --generate` prints one)"
            ) from None
        out.append(k.encode())
    return out


def keys() -> list[bytes]:
    """The configured keys, the encrypting one first."""
    global _warned
    raw = os.environ.get(ENV, "")
    if raw.strip():
        return _parse(raw, ENV)
    if env_bool("SCHEDVIZ_REQUIRE_SECRET_KEY", False):
        raise EncryptionKeyError(
            f"{ENV} is not set: cluster credentials cannot be stored or read "
            "(set it to a Fernet key; `manage.py rotate_cluster_credentials --generate` prints one)"
        )
    path = _data_dir() / KEY_FILE
    with _lock:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(generate_key() + "\n")
        if not _warned:
            log.warning(
                "%s is not set: using the development key in %s (set the variable in production)", ENV, path
            )
            _warned = True
    return _parse(path.read_text(), str(path))


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(k) for k in keys()])


def encrypt(data: bytes) -> bytes:
    return _fernet().encrypt(data)


def decrypt(token: bytes) -> bytes:
    try:
        return _fernet().decrypt(bytes(token))
    except InvalidToken:
        raise EncryptionKeyError(
            f"the stored credentials cannot be decrypted with the keys in {ENV} "
            "(was the key changed without keeping the old one after it?)"
        ) from None


def rotate(token: bytes) -> bytes:
    """The credential re-encrypted with the first key."""
    try:
        return _fernet().rotate(bytes(token))
    except InvalidToken:
        raise EncryptionKeyError(f"a stored credential cannot be decrypted with the keys in {ENV}") from None
