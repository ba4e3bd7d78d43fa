"""Creating a PostgreSQL database for benchmark runs when it does not exist yet."""

from __future__ import annotations

from urllib.parse import urlparse, urlunparse


def ensure_database(url: str) -> None:
    parsed = urlparse(url)
    if not parsed.scheme.startswith("postgres"):
        return
    name = parsed.path.lstrip("/")
    import psycopg
    from psycopg import sql

    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
