"""Reflex configuration. Bayes' own settings live in bayes_app/settings.py."""

import reflex as rx

config = rx.Config(
    app_name="bayes_app",
    title="Bayes",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="indigo", radius="medium"))],
    disable_plugins=[rx.plugins.sitemap.SitemapPlugin],
)
