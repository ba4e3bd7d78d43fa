"""Tools behind the command line: benchmarks, load generation and the all-in-one server.

- ``bench_engine``: ``schedviz bench`` (replay speed on a synthetic cluster, each size in its own
  process; the dense cluster in load, index and replay phases) and the synthetic cluster the other
  benchmarks upload;
- ``dense_cluster``: the dense, production-shaped cluster (Deployment-made pods) as a kubectl dump
  (``schedviz bench --pods-per-node``, ``--dump``);
- ``trace_stream``: ``schedviz replay --format json|jsonl`` written cycle by cycle;
- ``bench_storage``, ``bench_stream``, ``bench_browser``: ``schedviz bench-storage``, ``bench-stream``,
  ``bench-browser`` (stored size and page latency; streaming through a worker, the channel layer and
  a websocket; a cycle on screen in headless Chromium);
- ``loadtest``: ``schedviz load`` (many API and websocket clients against a running server);
- ``server``: ``schedviz serve`` (uvicorn with replays in-process, optionally the demo data).

Nothing in the web application imports these.
"""
