"""Credentials encrypted at rest, with key rotation (schedviz/live/crypto.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from schedviz.live import crypto


def test_credentials_are_encrypted_and_keys_rotate(
    monkeypatch: pytest.MonkeyPatch, encryption_key: str
) -> None:
    secret = b'{"users": [{"user": {"token": "very-secret"}}]}'
    token = crypto.encrypt(secret)
    assert b"very-secret" not in token and crypto.decrypt(token) == secret
    new = Fernet.generate_key().decode()
    monkeypatch.setenv(crypto.ENV, f"{new},{encryption_key}")  # the new key first, the old one kept
    assert crypto.decrypt(token) == secret
    rotated = crypto.rotate(token)
    monkeypatch.setenv(crypto.ENV, new)  # the old key dropped
    assert crypto.decrypt(rotated) == secret
    with pytest.raises(
        crypto.EncryptionKeyError, match="cannot be decrypted with the keys in SCHEDVIZ_ENCRYPTION_KEY"
    ):
        crypto.decrypt(token)
    monkeypatch.setenv(crypto.ENV, "not-a-key")
    with pytest.raises(crypto.EncryptionKeyError, match="key 1 is not a Fernet key"):
        crypto.encrypt(secret)


def test_without_a_key_production_refuses_and_development_keeps_one_in_the_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(crypto.ENV)
    monkeypatch.setenv("SCHEDVIZ_REQUIRE_SECRET_KEY", "1")
    with pytest.raises(crypto.EncryptionKeyError, match="SCHEDVIZ_ENCRYPTION_KEY is not set"):
        crypto.encrypt(b"x")
    monkeypatch.delenv("SCHEDVIZ_REQUIRE_SECRET_KEY")
    monkeypatch.setattr(crypto, "_data_dir", lambda: tmp_path)
    token = crypto.encrypt(b"x")
    key_file = tmp_path / crypto.KEY_FILE
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert crypto.decrypt(token) == b"x"
    assert Fernet(key_file.read_text().strip().encode()).decrypt(token) == b"x"
