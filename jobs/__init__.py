"""Dramatiq actors. `dramatiq jobs` imports this package: broker first, then every actor module."""

from jobs.broker import broker  # noqa: F401  (must come before the actors)
from jobs import library, maintenance, runs, system, zotero  # noqa: E402,F401
from bayes_app import registry  # noqa: E402

registry.register()  # run kinds and the document-removal hook
