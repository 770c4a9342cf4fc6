"""A plain HTML form that the browser itself submits (Reflex's form always prevents that).

Used where the response must come from an HTTP route, e.g. sign-in: only an HTTP response
can set the HttpOnly session cookie.
"""

from __future__ import annotations

import json

import reflex as rx
from reflex.event import EventSpec
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


def keep_fields_on_error(form_id: str, error_id: str, messages: dict[str, str], done: str) -> EventSpec:
    """Script for a native form's `on_mount`: post it as JSON instead, so an error is shown
    beside the fields as typed (a native post reloads the page and empties the password
    fields); on success go to `done`. Without script, or when the fetch itself fails, the form
    still posts natively. Messages are fixed texts per error code, set as text (never HTML)."""
    js = (
        """(() => {
  const form = document.getElementById(%(form)s); const box = document.getElementById(%(box)s);
  if (!form || !box || form.dataset.json === "1") return;
  form.dataset.json = "1";
  const messages = %(messages)s;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let r;
    try {
      r = await fetch(form.action, { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "application/json" },
        body: JSON.stringify(Object.fromEntries(new FormData(form))) });
    } catch (e) { form.submit(); return; }
    if (r.ok) { location.assign(%(done)s); return; }
    let code = "";
    try { code = ((await r.json()).error || {}).code || ""; } catch (e) { /* not JSON */ }
    const retry = parseInt(r.headers.get("Retry-After") || "", 10);
    const text = (messages[code] || "Something went wrong; please try again.")
      .replace("{minutes}", String(Math.max(1, Math.round((retry || 900) / 60))));
    box.querySelector("[data-message]").textContent = text;
    box.style.display = "flex";
    const old = document.getElementById("form-error"); if (old) old.style.display = "none";
    box.setAttribute("data-code", code || String(r.status));
  });
})()"""  # noqa: UP031 - the script is full of braces
        % {
            "form": json.dumps(form_id),
            "box": json.dumps(error_id),
            "messages": json.dumps(messages),
            "done": json.dumps(done),
        }
    )
    return rx.call_script(js)
