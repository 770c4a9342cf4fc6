"""Living maps actor: the delayed batch of a user's new papers becomes update proposals."""

from __future__ import annotations

import dramatiq


@dramatiq.actor(queue_name="default", max_retries=3, min_backoff=5_000, max_backoff=60_000, time_limit=10 * 60 * 1000)
def propose_map_updates(owner_id: str, started_at: float) -> None:
    """Start one update run per watching map the owner's new papers are relevant to (or wait
    while the owner's library is still indexing; see usecases.living.propose_updates)."""
    from bayes_app.usecases import living

    living.propose_updates(owner_id, started_at)
