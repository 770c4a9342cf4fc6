import pytest

from bayes_app.accounts.passwords import (
    InvalidEmailError,
    WeakPasswordError,
    check_password_strength,
    hash_password,
    normalize_email,
    verify_password,
)


def test_hash_and_verify():
    h = hash_password("correct horse battery")
    assert h.startswith("$argon2id$")
    assert verify_password(h, "correct horse battery")
    assert not verify_password(h, "correct horse batterz")
    assert not verify_password("not-a-hash", "x")


@pytest.mark.parametrize("pw", ["short", "aaaaaaaaaaaa", "password123", "1234567890"])
def test_weak_passwords_rejected(pw):
    with pytest.raises(WeakPasswordError):
        check_password_strength(pw)


@pytest.mark.parametrize(
    ("pw", "rule"),
    [
        ("short", "at least 10 characters"),
        ("aaaaaaaaaaaa", "at least 4 different characters"),
        ("password123", "most common passwords"),
    ],
)
def test_the_message_names_the_rule_that_fails(pw, rule):
    with pytest.raises(WeakPasswordError) as err:
        check_password_strength(pw)
    assert rule in str(err.value)


def test_password_containing_email_name_rejected():
    with pytest.raises(WeakPasswordError):
        check_password_strength("alice-rocks-2024", "alice@example.com")
    check_password_strength("tangerine-rocks-2024", "alice@example.com")


def test_email_normalised_and_validated():
    assert normalize_email("  Alice@Example.COM ") == "alice@example.com"
    for bad in ["", "alice", "alice@", "@example.com", "a b@example.com"]:
        with pytest.raises(InvalidEmailError):
            normalize_email(bad)


def test_a_hash_is_verified_with_the_parameters_it_was_made_with():
    """The suite makes its users with Argon2's cheapest parameters (conftest); the shipped ones
    stay the default, and a hash made either way verifies in any process."""
    from argon2 import PasswordHasher

    from bayes_app.accounts import passwords

    cheap = hash_password("correct horse battery")
    assert "$m=8,t=1,p=1$" in cheap  # conftest: profiles.CHEAPEST
    shipped = PasswordHasher().hash("correct horse battery")
    assert "$m=65536,t=3,p=4$" in shipped
    assert verify_password(shipped, "correct horse battery")
    assert PasswordHasher().verify(cheap, "correct horse battery")
    assert passwords.dummy_hash() == passwords.dummy_hash()  # made once, on first need
    assert not verify_password(passwords.dummy_hash(), "")
