"""Keys for decoded JSON/YAML content: equal content, equal key.

The caches that let the pods of one template share their validation, their resource requests and
what plugins derive from their spec (``validation.Validator``, ``resources.PodResourcesCache``) are
keyed by content. The key is the content's ``marshal`` serialization at format version 2 (no
back-references, so it depends on the content alone): a few times cheaper than ``repr``, and as
exact about types (1, 1.0, "1" and True all differ). Content ``marshal`` cannot write (a YAML
timestamp decoded as a ``datetime``) falls back to its ``repr``; a ``str`` key never equals a
``bytes`` one. Equal dicts written in another key order get different keys: a cache miss, never a
wrong hit.
"""

from __future__ import annotations

import marshal
from typing import Any

_VERSION = 2


def content_key(value: Any) -> bytes | str:
    try:
        return marshal.dumps(value, _VERSION)
    except ValueError:
        return repr(value)
