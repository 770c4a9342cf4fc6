"""Admin page state: the user list."""

from __future__ import annotations

import reflex as rx
from sqlmodel import select

from bayes_app.db import session_scope
from bayes_app.models import User
from state.auth import AuthState


class AdminState(AuthState):
    users: list[dict[str, str]] = []

    @rx.event
    def load(self):
        if not self._load_user() or not self.is_admin:
            self.users = []
            return
        with session_scope() as db:
            self.users = [
                {"id": u.id, "email": u.email, "role": "admin" if u.is_admin else "user",
                 "created": u.created_at.strftime("%Y-%m-%d %H:%M")}
                for u in db.exec(select(User).order_by(User.created_at))
            ]
