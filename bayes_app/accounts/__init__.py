"""Accounts: users, password hashing, browser sessions and API tokens (no Reflex imports)."""
