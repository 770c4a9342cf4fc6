"""The `index` process: owns the embedded Qdrant engine and serves part of Qdrant's REST API.

An embedded index directory (qdrant-edge) can be opened by one process only, so this
process owns it, one `EdgeShard` per collection under ``--path``, and every other process
talks to it with the official ``qdrant-client`` (``QdrantClient(url=...)``). Requests and
responses use Qdrant's JSON shapes and envelopes, so the same client code also works
against a real Qdrant server (``QDRANT_URL``).

    python -m bayes_app.search.index_server --path DIR --host 127.0.0.1 --port 6333

Layout under DIR: ``.lock`` (flock, holds the owner's pid) and
``collections/<hex>/{meta.json,shard/}``; a directory without ``meta.json`` is an
unfinished create or a deleted collection and is removed at start.

Durability: an update is appended to the engine's write-ahead log before ``update()``
returns, and that survives a crash of this process (kill -9), so a 200 OK is never
lost. A flush (segments to disk, 100-400 ms) is therefore kept off the request path: a
dirty shard is flushed once writes pause for a second, at least every
``--flush-interval`` seconds while they go on, and on shutdown.

qdrant-edge-py 0.9.0 holds the GIL for the whole of every engine call (measured), so
engine calls are serialised process-wide whatever the threading, and ``optimize()``
(HNSW build and merges: ~5 s per 10k 384-d points, minutes at 100k) stalls the whole
server (a request arriving meanwhile waits). It therefore runs only after
``--optimize-idle`` seconds (default 10 min) without any API request; until then new
points are searched by a plain scan, which at 100k points costs 3-11 ms.

Modules: `errors` (Qdrant-shaped errors), `convert` (REST JSON <-> qdrant-edge), `store` (the
directory, shards, lock, flushes, optimisation), `handlers` (one per REST operation), `app`
(routes, envelopes, the process entry point; `__main__` runs it).
"""
