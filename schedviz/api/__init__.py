"""The REST API's shared plumbing: the base viewsets (``viewsets``: the ownership rule, no NUL in
query parameters), the one error shape (``errors``), pagination, throttling, the OpenAPI schema's
generic answers (``schema``), the site's response middleware, and the schema and docs pages.

It imports no app: the endpoints are the apps' own (``<app>/views.py``, ``serializers.py``,
``urls.py``), mounted under ``/api/v1/`` by ``schedviz/urls.py``.
"""
