"""Sharing with other accounts: map members (`maps.members`, roles viewer/editor) and read-only
collection members (`sharing.collections`), the people lookup by e-mail, and the admin overview.
See docs/sharing.md."""
