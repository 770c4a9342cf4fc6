"""The Reflex app: pages plus the /api/v1 HTTP API on the same port."""

import logging

import reflex as rx

from bayes_app.accounts.passwords import configure_hashing
from bayes_app.api import build_api
from bayes_app.api.security import SecurityMiddleware
from bayes_app.api.upload_guard import PageUploadGuard
from bayes_app.pages import register
from bayes_app.settings import get_settings

logging.basicConfig(level=get_settings().log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

configure_hashing(get_settings().password_hash_concurrency)


def _secure(asgi_app):
    from reflex import constants
    from reflex.config import get_config

    settings = get_settings()
    upload_path = get_config().prepend_backend_path(str(constants.Endpoint.UPLOAD))
    return SecurityMiddleware(PageUploadGuard(asgi_app, upload_path), settings.cors_origins, settings.trusted_proxies)


app = rx.App(api_transformer=[build_api(), _secure], stylesheets=["/bayes.css"])
register(app)
