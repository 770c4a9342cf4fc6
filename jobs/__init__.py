"""Dramatiq actors. `dramatiq jobs` imports this package: broker first, then every actor module."""

from jobs.broker import broker  # noqa: F401  (must come before the actors)
from jobs import library, maintenance, runs, system, zotero  # noqa: E402,F401
import bayes_app.maps  # noqa: E402,F401  (document removal marks map citations "source removed")
