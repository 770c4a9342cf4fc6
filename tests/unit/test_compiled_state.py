"""What the pages' compiled state holds: nothing from the server's settings. Each state's
initial values are compiled into the public JavaScript bundle and sent to every tab, so a var
computed from the settings would publish them (the model's address) and make the bundle differ
per setup, which `make run` then rebuilds (procs/web.py). Such values are plain vars set on
load, for whom they are meant."""

from __future__ import annotations

import importlib
import pkgutil

import reflex as rx

import state
from state.admin import AdminState


def _initial_state() -> dict:
    from reflex.compiler.utils import compile_state

    for mod in pkgutil.iter_modules(state.__path__):
        importlib.import_module(f"state.{mod.name}")
    return compile_state(rx.State)


def test_the_compiled_state_does_not_depend_on_the_settings(configure):
    configure(OPENAI_BASE_URL="", OPENAI_API_KEY="", BAYES_MODEL_DEFAULT="offline", BAYES_ZOTERO_LOCAL="0")
    offline = _initial_state()
    configure(OPENAI_BASE_URL="http://10.1.2.3:8080/v1", OPENAI_API_KEY="sk-x", BAYES_MODEL_DEFAULT="m1")
    configure(BAYES_ZOTERO_LOCAL="1")
    with_model = _initial_state()
    assert with_model == offline
    assert "10.1.2.3" not in repr(with_model)
    assert AdminState.get_fields()["model_setup"].default == ""


def test_logout_and_a_user_switch_reset_the_vars_set_on_load():
    from state.onboarding import GuideState
    from state.session_guard import user_states

    reset = user_states()
    for cls, name in ((AdminState, "model_setup"), (GuideState, "offline_mode")):
        assert cls in reset, (cls.__name__, name)
        assert name in cls.get_fields(), (cls.__name__, name)


def test_the_model_setup_in_words_never_shows_the_key(configure):
    from bayes_app.usecases import system

    configure(OPENAI_BASE_URL="http://10.1.2.3:8080/v1", OPENAI_API_KEY="sk-secret", BAYES_MODEL_DEFAULT="m1")
    line = system.model_setup()
    assert "http://10.1.2.3:8080/v1" in line
    assert "m1" in line
    assert "sk-secret" not in line
