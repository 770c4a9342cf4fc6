"""Zotero sync: the HTTP policy around pyzotero, key encryption, and the sync engine."""
