"""The Reflex app: pages plus the /api/v1 HTTP API on the same port."""

import logging

import reflex as rx

from bayes_app.accounts.passwords import configure_hashing
from bayes_app.api import build_api
from bayes_app.api.security import SecurityMiddleware
from bayes_app.pages import register
from bayes_app.settings import get_settings

logging.basicConfig(level=get_settings().log_level,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")

configure_hashing(get_settings().password_hash_concurrency)


def _secure(asgi_app):
    settings = get_settings()
    return SecurityMiddleware(asgi_app, settings.cors_origins, settings.trusted_proxies)


app = rx.App(api_transformer=[build_api(), _secure])
register(app)
