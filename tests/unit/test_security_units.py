"""Security building blocks tested directly: strict JSON, request schemas, the CSP builder,
HTTPS detection behind proxies, BibTeX and Markdown escaping, bounded password hashing,
the login throttle (real Redis) and the data dir's permissions."""

from __future__ import annotations

import os
import re
import stat
import threading
import time

import bibtexparser
import pytest
from pylatexenc.latex2text import LatexNodes2Text

from bayes_app.accounts import passwords
from bayes_app.api import schemas
from bayes_app.api.deps import parse_json
from bayes_app.api.errors import ApiError
from bayes_app.api.security import is_https, page_policy, same_origin_request
from bayes_app.maps.export import _bib_escape, md_text


@pytest.mark.parametrize(
    "body",
    [
        b'{"x": 1e999}',
        b'{"x": -1e400}',
        b'{"x": NaN}',
        b'{"x": Infinity}',
        b'{"x": 10000000000000000000000000}',
        b'{"t": "x\\ud800y"}',
        b"[" * 100 + b"]" * 100,
        b"{",
        b'{"a": 1} trailing',
    ],
)
def test_strict_json_refuses_what_would_corrupt_or_crash(body):
    with pytest.raises(ApiError) as err:
        parse_json(body)
    assert err.value.status == 400
    assert err.value.code == "bad_json"


def test_strict_json_keeps_ordinary_values():
    assert parse_json(b'{"x": 1.5, "n": -3, "t": "caf\\u00e9 \\ud83d\\ude00", "l": [true, null]}') == {
        "x": 1.5,
        "n": -3,
        "t": "café 😀",
        "l": [True, None],
    }


def test_schemas_refuse_unknown_fields_wrong_types_and_ranges():
    from pydantic import ValidationError

    for bad in (
        {"map_id": "m"},
        {"owner_id": "u"},
        {"title": ["a"]},
        {"index": 10**25},
        {"position": {"x": 1, "y": "2"}},
        {"position": {"x": 1e8, "y": 0}},
        {"collapsed": "yes"},
        {"confidence": 2},
    ):
        with pytest.raises(ValidationError):
            schemas.NodePatch.model_validate(bad)
    assert schemas.NodePatch.model_validate({"position": {"x": 10, "y": -5.5}}).given() == {
        "position": {"x": 10.0, "y": -5.5}
    }
    with pytest.raises(ValidationError):
        schemas.DocumentPatch.model_validate({"title": ["a"]})
    with pytest.raises(ValidationError):
        schemas.Grant.model_validate({"email": "a@b.c", "credits": float("nan")})


def test_page_policy_allows_only_the_pages_own_inline_scripts():
    html = b'<html><script>boot()</script><script src="/a.js"></script><script type="module">go()</script>'
    policy = page_policy(html)
    script_src = next(d for d in policy.split("; ") if d.startswith("script-src"))
    assert "'unsafe-inline'" not in script_src
    assert script_src.count("'sha256-") == 2
    for directive in ("frame-ancestors 'self'", "object-src 'none'", "base-uri 'self'"):
        assert directive in policy


def _scope(headers: dict[str, str], client: str = "10.0.0.5", scheme: str = "http") -> dict:
    return {
        "type": "http",
        "scheme": scheme,
        "client": (client, 1234),
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }


def test_https_is_believed_from_trusted_proxies_only():
    forwarded = {"x-forwarded-proto": "https"}
    assert not is_https(_scope(forwarded), trusted_proxies=[])
    assert not is_https(_scope(forwarded, client="10.0.0.9"), trusted_proxies=["10.0.0.5"])
    assert is_https(_scope(forwarded), trusted_proxies=["10.0.0.5"])
    assert is_https(_scope({}, scheme="https"), trusted_proxies=[])


def test_same_origin_check():
    host = {"host": "lab.example.org:3000"}
    ok = frozenset()
    assert same_origin_request(_scope({**host, "origin": "http://lab.example.org:3000"}), ok, ok)
    assert not same_origin_request(_scope({**host, "origin": "http://lab.example.org:4000"}), ok, ok)
    assert not same_origin_request(_scope({**host, "origin": "null"}), ok, ok)
    assert not same_origin_request(_scope({**host, "sec-fetch-site": "same-site"}), ok, ok)
    assert same_origin_request(_scope(host), ok, ok)  # a non-browser client: no cookie to borrow
    allowed = frozenset({"https://app.example.org"})
    assert same_origin_request(_scope({**host, "origin": "https://app.example.org"}), allowed, ok)


@pytest.mark.parametrize(
    "title",
    [
        'x} , note = "INJECTED"',
        "\\input{/etc/passwd} 50% & $x_1$ #1 ~",
        "unbalanced {{{ braces",
        "Müller's «résumé» of β-cells",
    ],
)
def test_bibtex_fields_round_trip_through_a_parser(title):
    entry = (
        f"@article{{k,\n  title = {{{_bib_escape(title)}}},\n"
        f"  author = {{{_bib_escape('Doe, J. and {Evil} Corp')}}},\n  year = {{2024}}\n}}\n"
    )
    parsed = bibtexparser.loads(entry).entries
    assert len(parsed) == 1
    assert set(parsed[0]) == {"ENTRYTYPE", "ID", "title", "author", "year"}
    assert parsed[0]["year"] == "2024"
    decoded = LatexNodes2Text().latex_to_text(parsed[0]["title"])
    assert re.findall(r"\w+", decoded) == re.findall(r"\w+", title)
    assert "\\input" not in parsed[0]["title"].replace("\\textbackslash", "")


def test_markdown_text_is_inert():
    out = md_text('healing <iframe srcdoc="<script>x</script>"></iframe> [go](javascript:alert(1)) ![i](x) [5]')
    assert "<" not in out.replace("\\<", "")
    assert "[" not in out.replace("\\[", "")
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(out)
    assert "<iframe" not in html
    assert "<a " not in html
    assert "<img" not in html
    assert "[5]" in html


def test_password_hashing_is_bounded(monkeypatch):
    active, peak, lock = 0, 0, threading.Lock()

    class SlowHasher:
        def hash(self, _pw):
            nonlocal active, peak
            with lock:
                active += 1
                peak = max(peak, active)
            time.sleep(0.05)
            with lock:
                active -= 1
            return "h"

    monkeypatch.setattr(passwords, "_hasher", SlowHasher())
    passwords.configure_hashing(2)
    threads = [threading.Thread(target=passwords.hash_password, args=("pw",)) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == 2
    passwords.configure_hashing(1)
    monkeypatch.setattr(passwords, "HASH_WAIT_S", 0.01)
    passwords._slots.acquire()
    try:
        with pytest.raises(passwords.HashingBusy):
            passwords.hash_password("pw")
    finally:
        passwords._slots.release()
        passwords.configure_hashing(2)


def test_data_dir_is_made_private(tmp_path, configure):
    from bayes_app.cli import secure_data_dir
    from bayes_app.settings import get_settings

    data = tmp_path / "data"
    (data / "files" / "ab").mkdir(parents=True)
    (data / "bayes.db").write_bytes(b"x")
    (data / "files" / "ab" / "abcd").write_bytes(b"%PDF")
    for p in (data, data / "files", data / "files" / "ab"):
        p.chmod(0o755)
    for p in (data / "bayes.db", data / "files" / "ab" / "abcd"):
        p.chmod(0o644)
    configure(BAYES_DATA_DIR=str(data))
    old = os.umask(0o022)
    try:
        secure_data_dir(get_settings())
    finally:
        os.umask(old)
    for p in (data, data / "files", data / "files" / "ab"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    for p in (data / "bayes.db", data / "files" / "ab" / "abcd"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
