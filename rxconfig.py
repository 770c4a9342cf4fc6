"""Reflex configuration. Bayes' own settings live in bayes_app/settings.py."""

import reflex as rx

from bayes_app.settings import get_settings

# No cross-origin reads by default (same origin only); BAYES_CORS_ORIGINS lists exceptions.
# Reflex gives these to Starlette's CORS middleware on every app it builds.
_CORS = tuple(get_settings().cors_origins)

config = rx.Config(
    app_name="bayes_app",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="indigo", radius="medium"))],
    disable_plugins=[rx.plugins.sitemap.SitemapPlugin],
    cors_allowed_origins=_CORS,
    # The data-editor grid (extraction tables) imports `marked`, a peer dependency of
    # @glideapps/glide-data-grid that Reflex 0.10.1 does not install with it.
    frontend_packages=["marked@4.3.0"],
)
