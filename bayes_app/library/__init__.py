"""Library domain: PDF text, chunking and quote location (no Reflex, DB or queue imports)."""
