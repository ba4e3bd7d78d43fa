"""The websockets' shared plumbing (docs/streaming.md): token and session auth, the consumers'
database threads, HTTP-first scheduling, channel-layer wake-ups and the playback controls. The
consumers themselves are the apps' (``replays/consumers.py``, ``live/consumers.py``)."""
