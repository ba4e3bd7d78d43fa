"""One stored scheduling cycle, plain Python (no Django): what replays and live clusters store, page
and stream.

- ``codec``: a cycle record as a compact blob (numpy arrays over nodes plus a JSON header) and back;
- ``pages``: one cycle, page by page over nodes, as the REST API answers it;
- ``messages``: one cycle's websocket messages in order, with stable positions (docs/streaming.md).

A replay's cycles (``schedviz.replays``) and a live cluster's (``schedviz.live``) share all three.
"""
