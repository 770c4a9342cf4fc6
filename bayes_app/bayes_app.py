"""The Reflex app: pages plus the /api/v1 HTTP API on the same port."""

import logging

import reflex as rx

from bayes_app.api import build_api
from bayes_app.pages import register
from bayes_app.settings import get_settings

logging.basicConfig(level=get_settings().log_level,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")

app = rx.App(api_transformer=build_api())
register(app)
