"""The Ask chat in a real browser against the scripted model: thinking, then sources, then
the streamed answer; a reload mid-answer continues live; Stop → Cancelled with the charged
credits; the next question carries the conversation; another user cannot open it."""

from __future__ import annotations

import re
import time
import uuid

import httpx
from playwright.sync_api import expect

from bayes_app.credits import ledger
from bayes_app.db import session_scope
from bayes_app.models import MICRO, User
from tests.support import pdfs
from tests.support.browser import login
from tests.support.fake_openai import Script

LONG = " ".join(f"w{i}" for i in range(300))  # ~15 s at 20 tokens/s


def _user_with_paper(app_stack, make_user, app_db_url) -> tuple[str, str]:
    email, password = make_user()
    with session_scope(app_db_url) as db:
        user = db.query(User).filter(User.email == email).one()
        ledger.grant(db, user, 5 * MICRO, f"grant:{user.id}", "test")
    api = app_stack.url + "/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    doc = httpx.post(
        f"{api}/documents",
        headers=h,
        timeout=60,
        files={"file": ("pasa.pdf", pdfs.PASA.read_bytes(), "application/pdf")},
    ).json()
    deadline = time.monotonic() + 240
    while httpx.get(f"{api}/documents/{doc['id']}", headers=h).json()["status"] != "indexed":
        assert time.monotonic() < deadline, "the paper did not finish indexing"
        time.sleep(0.3)
    return email, password


def test_ask_watch_reload_stop_and_follow_up(app_stack, page, make_user, app_db_url, fake_llm, browser):
    url = app_stack.url
    email, password = _user_with_paper(app_stack, make_user, app_db_url)
    login(page, url, email, password)
    page.click("#nav-ask")
    expect(page).to_have_url(re.compile(r"/chat/?$"))
    expect(page.locator("#offline-badge")).to_have_count(0)  # a model is configured here

    m = f"B{uuid.uuid4().hex[:8]}"
    fake_llm.script(
        Script.thinking(m, "I should search the library for PASA first.", tokens_per_s=10),
        Script.tool_call("search_knowledge_base", {"query": "PASA paper search agent"}, match=m),
        Script(text=LONG, tokens_per_s=20, match=m),
    )
    page.fill("#chat-input", f"What is PASA? {m}")
    page.click("#chat-send")

    # thinking first (open while there is no answer yet), then sources, then the answer
    expect(page.locator("#chat-live .chat-thinking-text")).to_contain_text("search the library")
    expect(page.locator("#chat-live-sources .chat-source").first).to_be_visible(timeout=30_000)
    expect(page.locator("#chat-live-answer")).to_contain_text("w3", timeout=30_000)
    href = page.locator("#chat-live-sources .chat-open-source").first.get_attribute("href")
    assert re.match(r"/documents/[0-9a-f]{32}\?page=\d+&quote=", href)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]{32}$"))

    # reload mid-answer: the persisted question and the live rest of the answer
    page.reload()
    expect(page.locator(".chat-question")).to_contain_text(f"What is PASA? {m}")
    expect(page.locator("#chat-live-answer")).to_contain_text("w0 w1 w2")  # rebuilt from the stream
    before = len(page.locator("#chat-live-answer").inner_text().split())
    expect(page.locator("#chat-live-answer")).to_contain_text(f"w{before + 5}", timeout=30_000)

    # Stop mid-answer → Cancelled, the charged credits shown, the partial answer kept
    page.click("#chat-stop")
    status = page.locator(".chat-message-assistant .chat-status").last
    expect(status).to_have_text("Cancelled", timeout=10_000)
    expect(page.locator(".chat-message-assistant .chat-cost").last).to_contain_text(re.compile(r"[0-9.]+ credits"))
    kept = page.locator(".chat-answer").last.inner_text()
    assert kept.startswith("w0 w1")
    assert "w299" not in kept
    expect(page.locator("#chat-stop")).to_have_count(0)

    # a follow-up in the same conversation completes, with its cost; it cites nothing and the
    # library has nothing on it: labelled "No sources cited", and the answer says so
    m2 = f"C{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m2), Script(text="Short follow-up answer.", match=m2))
    page.fill("#chat-input", f"And then? {m2}")
    page.keyboard.press("Enter")
    expect(page.locator(".chat-answer").last).to_contain_text("Short follow-up answer.", timeout=30_000)
    expect(page.locator(".chat-answer").last).to_contain_text("The library doesn't support an answer to this question.")
    expect(page.locator(".chat-message-assistant .chat-grounding")).to_have_count(1)
    expect(page.locator(".chat-message-assistant .chat-grounding").last).to_contain_text(
        "No sources cited: the library doesn't support an answer"
    )
    expect(page.locator(".chat-message-assistant .chat-memory").last).to_contain_text(
        "This answer took the earlier question of the conversation into account."
    )
    expect(page.locator(".chat-question")).to_have_count(2)
    chat_url = page.url

    # another user cannot open it
    other = browser.new_context(viewport={"width": 1280, "height": 860})
    p2 = other.new_page()
    e2, pw2 = make_user()
    login(p2, url, e2, pw2)
    p2.goto(chat_url)
    expect(p2.locator("#chat-title")).to_have_text("New chat")
    expect(p2.locator(".chat-question")).to_have_count(0)
    other.close()


def test_the_page_follows_a_new_answer_on_a_phone(app_stack, make_user, app_db_url, fake_llm, browser):
    """At 390×844 the conversation soon outgrows the screen: a new answer is scrolled into
    view and followed while it streams; its end is on screen when it completes."""
    url = app_stack.url
    email, password = _user_with_paper(app_stack, make_user, app_db_url)
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = ctx.new_page()
        page.set_default_timeout(30_000)
        login(page, url, email, password)
        page.goto(f"{url}/chat")
        for i in range(2):  # two long exchanges first: the third answer starts below the fold
            m = f"S{i}{uuid.uuid4().hex[:8]}"
            fake_llm.script(
                Script.thinking(m),
                Script(text=" ".join(f"a{i}w{k}" for k in range(120)) + " [1].", tokens_per_s=400, match=m),
            )
            page.fill("#chat-input", f"What does the PaSa Crawler do? {m}")
            page.keyboard.press("Enter")
            expect(page.locator(".chat-answer").nth(i)).to_contain_text(f"a{i}w119", timeout=60_000)
        m = f"S2{uuid.uuid4().hex[:8]}"
        fake_llm.script(Script.thinking(m), Script(text=LONG, tokens_per_s=30, match=m))  # ~10 s: still running
        page.fill("#chat-input", f"What does the PaSa Selector do? {m}")
        page.keyboard.press("Enter")
        expect(page.locator("#chat-live-answer")).to_contain_text("w150", timeout=60_000)
        expect(page.locator("#chat-stop")).to_be_in_viewport()  # Stop sits right under the growing answer
        expect(page.locator(".chat-answer").nth(2)).to_contain_text("w299", timeout=60_000)
        page.wait_for_timeout(500)
        expect(page.locator(".chat-message-assistant").last.locator(".chat-cost")).to_be_in_viewport()
        assert page.evaluate("window.scrollY") > 0
    finally:
        ctx.close()


def test_editing_an_earlier_question_warns_and_keeps_the_earlier_version(
    app_stack, page, make_user, app_db_url, fake_llm
):
    url = app_stack.url
    email, password = _user_with_paper(app_stack, make_user, app_db_url)
    login(page, url, email, password)
    page.goto(f"{url}/chat")
    marks = [f"E{i}{uuid.uuid4().hex[:8]}" for i in range(3)]
    for i, m in enumerate(marks):
        fake_llm.script(Script.thinking(m), Script(text=f"Answer {i} [1].", tokens_per_s=200, match=m))
        page.fill("#chat-input", f"Question {i}: what does the PaSa Crawler do? {m}")
        page.keyboard.press("Enter")
        expect(page.locator(".chat-answer")).to_have_count(i + 1, timeout=60_000)
        expect(page.locator(".chat-answer").nth(i)).to_contain_text(f"Answer {i}")

    page.locator(".chat-edit").first.click()
    page.fill("#chat-edit-input", "Question 0, edited: what does the PaSa Selector do?")
    page.click("#chat-edit-save")
    expect(page.locator("#chat-edit-warning-text")).to_contain_text("the 2 later questions and their answers")
    page.click("#chat-edit-keep")  # nothing is lost
    expect(page.locator("#chat-edit-warning-text")).to_have_count(0)
    expect(page.locator(".chat-answer")).to_have_count(3)  # still editing question 0; all kept
    expect(page.locator(".chat-question")).to_have_count(2)

    m = f"E9{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m), Script(text="Edited answer [1].", tokens_per_s=200, match=m))
    page.fill("#chat-edit-input", f"Question 0, edited: what does the PaSa Selector do? {m}")
    page.click("#chat-edit-save")
    page.click("#chat-edit-confirm")
    expect(page.locator(".chat-question")).to_have_count(1, timeout=30_000)
    expect(page.locator(".chat-question")).to_contain_text("Question 0, edited")
    expect(page.locator(".chat-answer").last).to_contain_text("Edited answer", timeout=60_000)

    # the three earlier exchanges were put aside, not lost: one click brings them back …
    expect(page.locator("#chat-other-version")).to_contain_text("3 earlier questions")
    page.click("#chat-switch-version")
    expect(page.locator(".chat-question")).to_have_count(3, timeout=30_000)
    expect(page.locator(".chat-answer")).to_have_count(3)
    for i in range(3):
        expect(page.locator(".chat-answer").nth(i)).to_contain_text(f"Answer {i}")
    expect(page.get_by_text("Question 0, edited")).to_have_count(0)
    # … and a reload shows the same version (it is stored, not a view of this tab)
    page.reload()
    expect(page.locator(".chat-answer")).to_have_count(3, timeout=30_000)
    # switching again returns to the edited version
    expect(page.locator("#chat-other-version")).to_contain_text("1 earlier question")
    page.click("#chat-switch-version")
    expect(page.locator(".chat-question")).to_have_count(1, timeout=30_000)
    expect(page.locator(".chat-question")).to_contain_text("Question 0, edited")
