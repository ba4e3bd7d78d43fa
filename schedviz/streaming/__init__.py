"""Live streaming of replays over websockets (docs/streaming.md)."""
