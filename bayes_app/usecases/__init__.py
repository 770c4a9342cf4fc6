"""The application layer: the use cases both front doors call.

`state/` (the Reflex pages) and `api/` (HTTP) are adapters over these modules, one per
feature; they never import each other. A use case owns its transaction and the order
"write, then enqueue" / "cancel, then settle"; the job queue is injected
(`bayes_app.usecases.queue`), so nothing here imports the broker. See docs/architecture.md.
"""
