"""What the server reaches on a user's behalf, and how: the one guarded way out.

Django-free. Everything the web application, the Celery worker and the live-cluster worker connect
to because a user named it (a scheduler extender's URL, a watched cluster's API server) goes through
:func:`connect.open_connection`: the host is resolved once, every address it resolves to is vetted
(loopback, link-local, private, unique-local and other non-public ranges are refused unless an
operator's allow-list names them) and the connection is made to a vetted address; no redirect is
followed; failures are worded refused / unreachable / timed out, without the socket detail that
would make a port scanner of the server.

- ``addresses``: which addresses are public, and the operator's allow-lists;
- ``connect``: resolving, vetting and connecting; the words failures are reported in;
- ``extenders``: ``SCHEDVIZ_EXTENDER_URLS``, the checks of uploaded scheduler configurations, and the
  engine's extender transport for the server;
- ``kube``: the guarded connection pool installed into a watched cluster's API client.

The command line is the user's own program on the user's machine: it keeps kube-scheduler's
behaviour (extenders called as configured) and does not use this package.
"""
