"""Credits: pricing, the append-only ledger (grant, reserve, spend, release, adjust), reconciliation."""
