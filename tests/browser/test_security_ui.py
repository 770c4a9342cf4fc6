"""Hostile document text in a real browser: a PDF carrying an iframe/script payload is
uploaded and asked about; the chat and the map show the payload as text (no dialog, no
iframe, no image in the DOM), page script cannot read the session cookie, and a page served
from another port cannot read the API with the user's cookie."""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from playwright.sync_api import expect

from bayes_app.credits import ledger
from bayes_app.db import session_scope
from bayes_app.models import MICRO, User
from tests.support.browser import login
from tests.support.fake_openai import Script
from tests.support.procs import free_port
from tests.support.tiny_pdf import text_pdf

PAYLOAD = (
    'healing <iframe srcdoc="<script>parent.alert(parent.document.cookie)</script>"></iframe> '
    'is fast <img src=x onerror="alert(2)"> and [click](javascript:alert(3))'
)


def _user_with_payload_paper(app_stack, make_user, app_db_url) -> tuple[str, str, dict, str]:
    email, password = make_user()
    with session_scope(app_db_url) as db:
        user = db.query(User).filter(User.email == email).one()
        ledger.grant(db, user, 5 * MICRO, f"grant:{user.id}", "test")
    api = app_stack.url + "/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    pdf = text_pdf("Healing speed", [f"Wounds: {PAYLOAD}.", "Other wounds heal slowly in the cold."])
    doc = httpx.post(
        f"{api}/documents", headers=h, timeout=60, files={"file": ("healing.pdf", pdf, "application/pdf")}
    ).json()
    deadline = time.monotonic() + 120
    while httpx.get(f"{api}/documents/{doc['id']}", headers=h).json()["status"] != "indexed":
        assert time.monotonic() < deadline, "the paper did not finish indexing"
        time.sleep(0.3)
    return email, password, h, doc["id"]


def _no_markup(page) -> None:
    assert page.locator("iframe").count() == 0
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0


def test_payload_shows_as_text_and_the_cookie_stays_hidden(app_stack, page, make_user, app_db_url, fake_llm):
    url = app_stack.url
    email, password, h, doc_id = _user_with_payload_paper(app_stack, make_user, app_db_url)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page, url, email, password)
    assert "bayes_session" not in page.evaluate("document.cookie")

    m = f"X{uuid.uuid4().hex[:8]}"
    fake_llm.script(
        Script.tool_call("search_knowledge_base", {"query": "healing is fast"}, match=m),
        Script(text=f"The paper says: {PAYLOAD} [1].", match=m),
    )
    page.click("#nav-ask")
    page.fill("#chat-input", f"How fast is healing? {m}")
    page.click("#chat-send")
    expect(page.locator(".chat-answer").last).to_contain_text("srcdoc", timeout=60_000)
    expect(page.locator(".chat-answer").last).to_contain_text("<iframe")  # shown, as text
    page.reload()
    expect(page.locator(".chat-answer").last).to_contain_text("<iframe", timeout=30_000)
    _no_markup(page)

    api = url + "/api/v1"
    mp = httpx.post(f"{api}/mindmaps", headers=h, json={"title": f"Healing {m}"}).json()
    httpx.post(
        f"{api}/mindmaps/{mp['id']}/nodes",
        headers=h,
        json={"parent_id": mp["root_id"], "title": PAYLOAD[:200], "body": PAYLOAD},
    ).raise_for_status()
    page.goto(f"{url}/maps/{mp['id']}")
    expect(page.get_by_text("srcdoc").first).to_be_visible(timeout=30_000)
    _no_markup(page)
    page.wait_for_timeout(500)
    assert dialogs == []
    assert "bayes_session" not in page.evaluate("document.cookie")


class _EvilPage(BaseHTTPRequestHandler):
    target = ""

    def do_GET(self):
        body = f"""<!doctype html><title>waiting</title><script>
fetch({self.target!r}, {{credentials: "include"}})
  .then(r => r.text()).then(t => {{ document.title = "read:" + t.slice(0, 40); }})
  .catch(e => {{ document.title = "blocked"; }});
</script>""".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_another_origin_cannot_read_the_api_with_the_users_cookie(app_stack, page, make_user):
    url = app_stack.url
    email, password = make_user()
    api = url + "/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    doc = httpx.post(
        f"{api}/documents",
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
        files={"file": ("secret.pdf", text_pdf("Secret"), "application/pdf")},
    ).json()
    login(page, url, email, password)
    target = f"{api}/documents/{doc['id']}/file"
    assert page.evaluate(f"fetch({target!r}).then(r => r.status)") == 200  # same origin: allowed

    _EvilPage.target = target
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _EvilPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        expect(page).to_have_title("blocked", timeout=15_000)
    finally:
        server.shutdown()


LINK = "[the trial registry, sign in to view](https://evil.example/login)"
IMAGE = "![x](/api/v1/health)"


def _no_link_or_image(page) -> None:
    # the sources' own "Open at page" links carry the quote, URL-encoded, to our viewer: not from it
    assert page.locator("a[href*='evil.example']:not([href^='/documents/'])").count() == 0
    assert page.locator("img[src*='/api/v1/health']").count() == 0
    # no heading made from the text inside answers or run notes (the page's own titles may say "wound")
    assert page.locator(".chat-answer, #run-text").locator("h1, h2, h3, h4, h5, h6").count() == 0


def test_markdown_in_document_text_stays_text_in_chat_and_map(app_stack, page, make_user, app_db_url, fake_llm):
    """Issue 24.7: a quote carrying Markdown link/image syntax renders as those characters."""
    url = app_stack.url
    email, password = make_user()
    with session_scope(app_db_url) as db:
        user = db.query(User).filter(User.email == email).one()
        ledger.grant(db, user, 5 * MICRO, f"grant:{user.id}", "test")
    api = url + "/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    pdf = text_pdf(
        "Wound trials",
        [
            f"The authors found the wound trials listed in {IMAGE} and reviewed each of them carefully.",
            "Wound trials heal slowly in the cold.",
        ],
    )
    doc = httpx.post(
        f"{api}/documents", headers=h, timeout=60, files={"file": ("wounds.pdf", pdf, "application/pdf")}
    ).json()
    deadline = time.monotonic() + 120
    while httpx.get(f"{api}/documents/{doc['id']}", headers=h).json()["status"] != "indexed":
        assert time.monotonic() < deadline, "the paper did not finish indexing"
        time.sleep(0.3)
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "/api/v1/health" in r.url else None)
    login(page, url, email, password)

    # the model echoes a link and cites nothing, so the answer also gets the library's sentence
    # (carrying an image reference) quoted verbatim: both stay text
    m = f"W{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m), Script(text=f"Trials are listed in {LINK} somewhere.", match=m))
    page.click("#nav-ask")
    page.fill("#chat-input", f"Where are the wound trials listed? {m}")
    page.click("#chat-send")
    answer = page.locator(".chat-answer").last
    # the model's link is shown as its words (no link); the quoted source text, every character
    expect(answer).to_contain_text("Trials are listed in the trial registry, sign in to view", timeout=60_000)
    expect(answer).to_contain_text(IMAGE)
    page.reload()
    expect(page.locator(".chat-answer").last).to_contain_text(IMAGE, timeout=30_000)
    _no_link_or_image(page)

    # a model echoing the syntax on its own: no link or image either (the map's run text)
    mp = httpx.post(f"{api}/mindmaps", headers=h, json={"title": f"Wounds {m}"}).json()
    httpx.post(
        f"{api}/mindmaps/{mp['id']}/nodes",
        headers=h,
        json={"parent_id": mp["root_id"], "title": "Wound trials are registered"},
    ).raise_for_status()
    q = f"Where are the wound trials listed {m}"
    fake_llm.script(
        Script.reply(json.dumps({"route": "answer"}), match=f"ROLE: router\nMessage: {q}"),
        Script(text=f"The paper says: {LINK} and {IMAGE} {m}", match=f"\n\n{q}"),
    )
    page.goto(f"{url}/maps/{mp['id']}")
    page.fill("#message-input", q)
    page.click("#btn-send")
    expect(page.locator("#run-text")).to_contain_text("the trial registry, sign in to view", timeout=60_000)
    expect(page.locator("#run-text")).to_contain_text(m)
    _no_link_or_image(page)
    assert fetched == []  # the browser never fetched the image URL with the user's cookie
