"""What the admin page's state may hold before an admin loads it: nothing from the server's
settings. A computed var's value is compiled into the public JavaScript bundle's initial state
and sent to every tab, so the model's address must be a plain var set for an admin on load."""

from __future__ import annotations

from state.admin import AdminState


def test_the_model_setup_is_not_compiled_into_the_bundle(configure):
    configure(OPENAI_BASE_URL="http://10.1.2.3:8080/v1", OPENAI_API_KEY="sk-x")
    assert "model_setup" not in AdminState.computed_vars
    assert AdminState.get_fields()["model_setup"].default == ""


def test_the_model_setup_in_words_never_shows_the_key(configure):
    from bayes_app.usecases import system

    configure(OPENAI_BASE_URL="http://10.1.2.3:8080/v1", OPENAI_API_KEY="sk-secret", BAYES_MODEL_DEFAULT="m1")
    line = system.model_setup()
    assert "http://10.1.2.3:8080/v1" in line and "m1" in line and "sk-secret" not in line
