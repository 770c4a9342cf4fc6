"""A plain HTML form that the browser itself submits (Reflex's form always prevents that).

Used where the response must come from an HTTP route, e.g. sign-in: only an HTTP response
can set the HttpOnly session cookie.
"""

from __future__ import annotations

import reflex as rx
from reflex_components_core.el.elements.forms import Form


class NativeForm(Form):
    """`<form action method>` without Reflex's submit handler."""

    @classmethod
    def create(cls, *children, **props) -> rx.Component:
        props["handle_submit_unique_name"] = "native"
        return super(Form, cls).create(*children, **props)  # skip Form.create's preventDefault


def native_form(action: str, *children: rx.Component, **props) -> rx.Component:
    """A form posted by the browser to `action` (method POST)."""
    return NativeForm.create(*children, action=action, method="post", **props)
