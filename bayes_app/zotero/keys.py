"""Zotero API keys at rest: Fernet (AES-128-CBC + HMAC) with a key derived from the app secret."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken

from bayes_app.settings import get_settings


def _fernet(secret: str | None = None) -> Fernet:
    secret = secret if secret is not None else get_settings().secret()
    raw = hashlib.sha256(b"bayes:zotero-api-key:" + secret.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(raw))


def encrypt_key(api_key: str, secret: str | None = None) -> str:
    return _fernet(secret).encrypt(api_key.encode()).decode()


def decrypt_key(token: str, secret: str | None = None) -> str:
    """The plain API key; raises ValueError when the app secret changed since it was stored."""
    try:
        return _fernet(secret).decrypt(token.encode()).decode()
    except InvalidToken:
        raise ValueError(
            "The stored Zotero API key cannot be decrypted (was BAYES_SECRET_KEY changed?). Connect the library again."
        ) from None


def mask(api_key: str) -> str:
    """What may be shown of a key: its last 4 characters."""
    return "…" + api_key[-4:] if len(api_key) >= 8 else "…"
