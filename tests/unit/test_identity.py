"""Lookalike addresses (issue 24.2): one throttle counter for every spelling sign-in accepts,
TR39 skeletons for registration, an ASCII form for admin pages."""

from __future__ import annotations

import pytest

from bayes_app.accounts.identity import ascii_form, login_key, shown_email, skeleton
from bayes_app.accounts.passwords import normalize_email

# spellings sign-in resolves to user@test.example.org: full-width letters, case, IDNA domain
SIGN_IN_SAME = ["user@test.example.org", "user@ｔest.example.org", "USER@TEST.EXAMPLE.ORG", " user@Test.Example.Org "]
SAME = [*SIGN_IN_SAME, "ｕｓｅｒ@ｔｅｓｔ.example.org"]  # a full-width local part is counted with them too


@pytest.mark.parametrize("spelling", SIGN_IN_SAME)
def test_every_spelling_sign_in_accepts_has_the_one_throttle_key(spelling):
    assert normalize_email(spelling) == "user@test.example.org"  # sign-in finds the same account
    assert login_key(spelling) == login_key("user@test.example.org") == "user@test.example.org"


def test_full_width_local_part_shares_the_key_too():
    assert login_key("ｕｓｅｒ@ｔｅｓｔ.example.org") == "user@test.example.org"


def test_throttle_key_of_text_that_is_no_address_is_still_folded():
    assert login_key("ＡＤＭＩＮ") == login_key("admin") == "admin"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("redb-a@example.org", "redb-\u0430@example.org"),  # Cyrillic а
        ("paypal@example.org", "p\u0430yp\u0430l@example.org"),
        ("modern@example.org", "rnodern@example.org"),  # rn looks like m (TR39)
        ("lab@example.org", "1ab@example.org"),  # the digit 1 looks like l
        ("ann@example.org", "ann@ex\u0430mple.org"),  # in the domain too
    ],
)
def test_lookalikes_share_a_tr39_skeleton(a, b):
    assert a != b
    assert skeleton(a) == skeleton(b)


def test_different_addresses_have_different_skeletons():
    assert skeleton("alice@example.org") != skeleton("alicia@example.org")
    assert skeleton("bob@example.org") != skeleton("bob@example.com")


def test_admin_pages_show_non_ascii_addresses_distinguishably():
    assert shown_email("redb-a@example.org") == "redb-a@example.org"
    cyr = shown_email("redb-\u0430@example.org")
    assert "redb-\\u0430@example.org" in cyr
    assert cyr != "redb-a@example.org"
    assert ascii_form("ann@b\u00fccher.example").endswith("@xn--bcher-kva.example")
