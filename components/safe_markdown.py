"""Markdown for answers that may quote untrusted text (documents, the model): no raw HTML, and
links and images come out as plain text — no `<a>` to follow, no `<img>` for the browser to
fetch with the user's cookie. Quoted source text is also escaped where it is quoted
(bayes_app.llm.markup); this is the second line for text a model echoes on its own."""

from __future__ import annotations

import reflex as rx
from reflex.vars.base import Var


def _link_as_text(*children, **props) -> rx.Component:
    return rx.el.span(*children, class_name="md-link-text", **props)


def _image_as_text(*children, **props) -> rx.Component:
    alt: Var[str] = Var(_js_expr="(props.alt ?? '')", _var_type=str)
    return rx.el.span("[image: ", alt, "]", class_name="md-image-text", **props)


SAFE_MAP = {"a": _link_as_text, "img": _image_as_text}


def safe_markdown(text, **props) -> rx.Component:
    """`rx.markdown` without raw HTML, links or images."""
    return rx.markdown(text, use_raw=False, component_map=SAFE_MAP, **props)
