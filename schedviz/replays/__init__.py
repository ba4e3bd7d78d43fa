"""Replays: a snapshot, a scheduler configuration and options, run in the background."""
