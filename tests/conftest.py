from __future__ import annotations

import os

os.environ.setdefault("SCHEDVIZ_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "var", "test"))
