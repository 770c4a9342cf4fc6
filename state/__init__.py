"""Reflex State classes (thin: they call into bayes_app and hold what the page shows)."""
