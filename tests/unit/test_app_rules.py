"""Rules the application layer applies once for both front doors (the HTTP API and the
pages): the open-redirect guard after sign-in, the credit-grant amount, and the checks of
`POST /runs` before anything is written."""

from __future__ import annotations

import pytest

from bayes_app.errors import DomainError
from bayes_app.usecases import accounts, credits, runs


@pytest.mark.parametrize("target", ["/library", "/maps/abc?tab=1", "/chat"])
def test_same_site_paths_are_kept_after_sign_in(target):
    assert accounts.safe_next(target) == target


@pytest.mark.parametrize(
    "target",
    [
        None,
        "",
        "https://evil.example",
        "//evil.example",
        "/\\evil.example",
        "/login",
        "/register?next=/x",
        "library",
        42,
    ],
)
def test_everything_else_goes_to_the_maps(target):
    assert accounts.safe_next(target) == "/maps"


@pytest.mark.parametrize(
    ("given", "micro"),
    [
        ({"credits": 2.5}, 2_500_000),
        ({"credits": "2,5"}, 2_500_000),
        ({"credits": " 3 "}, 3_000_000),
        ({"amount_micro": 7}, 7),
        ({"amount_micro": 7, "credits": 99}, 7),
    ],
)
def test_grant_amounts(given, micro):
    assert credits.grant_amount(**given) == micro


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"credits": "0"},
        {"credits": "-1"},
        {"credits": "two"},
        {"credits": "nan"},
        {"credits": float("inf")},
        {"credits": True},
        {"amount_micro": 0},
        {"amount_micro": 1.5},
        {"credits": ""},
    ],
)
def test_bad_grant_amounts_are_refused_with_one_message(given):
    with pytest.raises(credits.GrantRefused) as err:
        credits.grant_amount(**given)
    assert err.value.code == "bad_amount"
    assert err.value.status == 400
    assert err.value.message == credits.AMOUNT_RULE


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"kind": "ask"}, "missing_fields"),
        ({"prompt": ""}, "missing_fields"),
        ({"prompt": "q", "edit_message_id": "m"}, "bad_request"),
    ],
)
def test_an_ask_request_is_checked_before_anything_is_written(request_, code):
    from bayes_app.usecases.schemas.runs import RunRequest

    with pytest.raises(DomainError) as err:
        runs.start("nobody", RunRequest(**request_))
    assert err.value.code == code
    assert err.value.status == 400
