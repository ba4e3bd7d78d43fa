"""manage.py rotate_cluster_credentials: re-encrypt stored cluster credentials with the first key."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from schedviz.live import crypto, services


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored cluster credential with the first key of SCHEDVIZ_ENCRYPTION_KEY "
        "(keep the old keys after it until this has run). --generate prints a new key."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--generate", action="store_true", help="print a new Fernet key and exit")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["generate"]:
            self.stdout.write(crypto.generate_key())
            return
        try:
            n = services.rotate_credentials()
        except crypto.EncryptionKeyError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"re-encrypted the credentials of {n} cluster(s) with the first key")
