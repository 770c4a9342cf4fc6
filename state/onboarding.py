"""The first-run guide on the home page: add papers → ask → build a map, each ticked off."""

from __future__ import annotations

import reflex as rx

from bayes_app.usecases import accounts
from bayes_app.usecases import runs as app_runs
from state.auth import AuthState
from state.offloop import off_loop


class GuideState(AuthState):
    guide_loaded: bool = False
    papers: int = 0
    indexed: int = 0
    asked: bool = False
    mapped: bool = False
    demo_error: str = ""
    # no model is configured: answers and maps quote the papers' own sentences (read on load:
    # a computed var's value would be compiled into the bundle, which then differs per setup)
    offline_mode: bool = False

    @rx.var
    def show_guide(self) -> bool:
        return self.guide_loaded and not (self.papers > 0 and self.asked and self.mapped)

    @rx.var
    def steps_done(self) -> int:
        return int(self.papers > 0) + int(self.asked) + int(self.mapped)

    def _refresh_guide(self) -> None:
        p = accounts.first_run(self.user_id)
        self.papers, self.indexed, self.asked, self.mapped = p.papers, p.indexed, p.asked, p.mapped
        self.offline_mode = app_runs.offline()
        self.guide_loaded = True

    @rx.event
    @off_loop
    def load_guide(self):
        if not self._load_user():
            return
        self.demo_error = ""
        self._refresh_guide()

    @rx.event
    @off_loop
    def use_demo_papers(self):
        """Add the bundled open-access papers to this user's library and index them."""
        from bayes_app.usecases import library as app_lib

        accepted, refused = self._as_user(app_lib.add_demo_papers, error_var="demo_error")
        if refused:
            return refused
        assert accepted is not None
        self._refresh_guide()
        return rx.toast.success(f"Added {len(accepted)} demo papers; they are being indexed.")
