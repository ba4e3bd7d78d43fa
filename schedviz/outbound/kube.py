"""A watched cluster's API client, made to connect only where the server may go for a user.

The official client builds a urllib3 pool manager that resolves and connects on its own and follows
redirects. For a cluster added from an uploaded kubeconfig, :func:`guard` replaces it by one whose
connections open through :func:`schedviz.outbound.connect.open_connection` (the host resolved once,
each address vetted against ``SCHEDVIZ_CLUSTER_HOSTS``, the connection made to a vetted address;
TLS still verifies the server's name) and that follows no redirect. Failures are urllib3's own
exception types, worded refused / unreachable / timed out.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

from .addresses import AllowList
from .connect import Refused, describe, open_connection

SETTING = "SCHEDVIZ_CLUSTER_HOSTS"


def allow_list(environ: Any = None) -> AllowList:
    env = os.environ if environ is None else environ
    return AllowList.parse(str(env.get(SETTING, "")), SETTING)


def _timeout(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _guarded_new_conn(conn: Any, allow: AllowList) -> socket.socket:
    try:
        return open_connection(conn._dns_host, conn.port, _timeout(conn.timeout), allow)
    except TimeoutError as exc:
        raise ConnectTimeoutError(conn, "timed out") from exc
    except Refused as exc:
        raise NewConnectionError(conn, str(exc)) from exc
    except OSError as exc:
        raise NewConnectionError(conn, describe(exc)) from exc


def _classes(allow: AllowList) -> dict[str, type]:
    class GuardedHTTPConnection(HTTPConnection):
        def _new_conn(self) -> socket.socket:
            return _guarded_new_conn(self, allow)

    class GuardedHTTPSConnection(HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            return _guarded_new_conn(self, allow)

    class GuardedHTTPConnectionPool(HTTPConnectionPool):
        ConnectionCls = GuardedHTTPConnection

    class GuardedHTTPSConnectionPool(HTTPSConnectionPool):
        ConnectionCls = GuardedHTTPSConnection

    return {"http": GuardedHTTPConnectionPool, "https": GuardedHTTPSConnectionPool}


class GuardedPoolManager(urllib3.PoolManager):
    """A PoolManager whose pools connect through the guard and which never follows a redirect."""

    def __init__(self, allow: AllowList, **pool_kw: Any) -> None:
        super().__init__(**pool_kw)
        self.pool_classes_by_scheme = _classes(allow)

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> Any:  # type: ignore[override]
        return super().urlopen(method, url, redirect=False, **kw)


def guard(api_client: Any, allow: AllowList | None = None) -> Any:
    """Install the guarded pool manager into a kubernetes ``ApiClient``; returns it. A client set
    to go through a proxy is refused (the proxy would make the connections)."""
    rest = api_client.rest_client
    old = rest.pool_manager
    if isinstance(old, urllib3.ProxyManager) or type(old).__name__ == "SOCKSProxyManager":
        raise Refused("refused: a proxy (proxy-url) is not used for clusters added from an uploaded kubeconfig")
    kw = dict(old.connection_pool_kw)
    rest.pool_manager = GuardedPoolManager(allow if allow is not None else allow_list(), **kw)
    old.clear()
    return api_client
