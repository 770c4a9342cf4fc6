"""Credits in a real browser: an admin grants credits and sets a model price through the
dashboard; the user sees the balance; one finished run shows as exactly one history row,
its usage step in the admin drill-down, and the reconciliation panel stays OK."""

import re
import uuid

from playwright.sync_api import expect
from sqlmodel import select

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.support.browser import login


def _finished_run(db_url: str, email: str, model: str, title: str) -> str:
    """One SUCCEEDED, settled run made with the domain API (no worker involved)."""
    from bayes_app.db import get_engine, session_scope
    from bayes_app.models import RunStatus, User
    from bayes_app.runs import lifecycle

    with session_scope(db_url) as db:
        user = db.exec(select(User).where(User.email == email)).one()
        op = lifecycle.create_operation(db, user, "ask", title, 1_000_000, model, input={"prompt": title})
        op_id = op.id
    with session_scope(db_url) as db:
        attempt = lifecycle.mark_running(db, op_id)
        lifecycle.record_usage(
            db, op_id, attempt, 1, "phase1_thinking", model, input_tokens=1000, output_tokens=500, estimated=True
        )
        lifecycle.record_usage(
            db, op_id, attempt, 2, "agent", model, input_tokens=2000, cached_tokens=1000, output_tokens=250
        )
        assert lifecycle.mark_stopped(db, op_id, attempt, RunStatus.SUCCEEDED)
    assert lifecycle.finalize(get_engine(db_url), op_id, lease_alive=lambda: False) == "finalized"
    return op_id


def test_grant_price_history_drilldown_reconciliation(app_stack, app_db_url, page, browser, make_user):
    url = app_stack.url
    email, password = make_user()
    model = f"ui-model-{uuid.uuid4().hex[:6]}"

    _admin_grants_and_prices(page, url, email, model)
    title = "Ask: what does the prior say?"
    op_id = _user_sees_the_grant_and_one_run(browser, url, email, password, model, app_db_url, title)
    _admin_drills_down(page, email, title, op_id, model)
    _admin_pages_runs(page, app_db_url, email, model)


def _admin_grants_and_prices(page, url: str, email: str, model: str) -> None:
    """Admin: grant 10 credits through the form, set a price in the editor."""
    login(page, url, ADMIN_EMAIL, ADMIN_PASSWORD)
    page.click("#nav-admin")
    expect(page.locator("#admin-reconciliation")).to_be_visible()
    # a user with no credits yet is listed with a zero balance, and offered by the grant picker
    zero = page.locator("#admin-balances tr", has_text=email)
    expect(zero).to_have_count(1)
    expect(zero).to_contain_text("0")
    expect(page.locator(f"#grant-users option[value='{email}']")).to_have_count(1)
    page.fill("#grant-email", email)
    page.fill("#grant-credits", "10")
    page.fill("#grant-note", "Welcome credits")
    page.click("#grant-submit")
    expect(page.locator("#grant-notice")).to_contain_text(f"Granted 10 credits to {email}")
    expect(page.locator("#admin-balances")).to_contain_text(email)

    page.fill("#price-model", model)
    page.fill("#price-input", "2")
    page.fill("#price-cached", "1")
    page.fill("#price-output", "4")
    page.click("#price-save")
    expect(page.locator("#price-notice")).to_contain_text(model)
    row = page.locator(".price-row", has_text=model)
    expect(row).to_have_count(1)
    expect(row).to_contain_text("2")


def _user_sees_the_grant_and_one_run(
    browser, url: str, email: str, password: str, model: str, db_url: str, title: str
) -> str:
    """The user sees the grant, then one finished run as one history row; returns the run's id."""
    user_ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        user = user_ctx.new_page()
        user.set_default_timeout(20_000)
        login(user, url, email, password)
        user.click("#nav-credits")
        expect(user.locator("#credits-balance")).to_have_text("10")
        expect(user.locator("#credits-available")).to_have_text("10")
        expect(user.locator("#credits-held")).to_have_text("0")
        expect(user.locator("#credits-history")).to_contain_text("Welcome credits")

        # one finished run: 1000 in + 500 out, then 1000 fresh + 1000 cached in + 250 out
        # = (1000*2 + 500*4 + 1000*2 + 1000*1 + 250*4) micro = 0.008 credits
        op_id = _finished_run(db_url, email, model, title)
        user.reload()
        expect(user.locator("#credits-balance")).to_have_text("9.99")  # one formatter: two decimals
        expect(user.locator("#credits-balance")).to_have_attribute("title", "9.992 credits")  # exact
        # what a credit buys, from what questions cost (this one: 1 / 0.008 = 125; the stack is shared)
        expect(user.locator("#credits-buys")).to_contain_text(re.compile(r"One credit buys about [\d,]+ questions"))
        expect(user.locator("#credits-held")).to_have_text("0")
        rows = user.locator("#credits-history .history-row")
        expect(rows).to_have_count(2)  # the grant and the run, never the steps
        run_rows = rows.filter(has_text=title)
        expect(run_rows).to_have_count(1)
        expect(run_rows).to_contain_text("SUCCEEDED")
        expect(run_rows.locator(".history-charged")).to_have_text("< 0.01")  # rounded for reading
        expect(run_rows.locator(".history-charged")).to_have_attribute("title", "0.008")  # exact
        expect(user.locator("#credits-history")).not_to_contain_text("phase1_thinking")
    finally:
        user_ctx.close()
    return op_id


def _admin_drills_down(page, email: str, title: str, op_id: str, model: str) -> None:
    """Admin: the runs table filtered, the run's usage steps, reconciliation OK."""
    page.click("#admin-refresh")
    run_row = page.locator(".recent-run", has_text=title)
    expect(run_row).to_have_count(1)
    # the Runs table filters by user and by status
    page.click("#runs-user")
    page.get_by_role("option", name=email).click()
    runs = page.locator("#admin-runs .recent-run")
    expect(runs).to_have_count(1)
    expect(runs).to_contain_text(title)
    page.click("#runs-status")
    page.get_by_role("option", name="Failed").click()
    expect(page.locator("#admin-runs-empty")).to_be_visible()  # this user has no failed run
    page.click("#runs-status")
    page.get_by_role("option", name="Any status").click()
    page.click("#runs-user")
    page.get_by_role("option", name="All users").click()
    expect(run_row).to_have_count(1)
    run_row.locator(".show-run").click()
    expect(page.locator("#run-id")).to_have_value(op_id)
    usage = page.locator("#run-usage .usage-row")
    expect(usage).to_have_count(2)
    expect(usage.filter(has_text="phase1_thinking")).to_contain_text("estimated")
    expect(usage.filter(has_text="agent")).to_contain_text(model)
    expect(usage.filter(has_text="agent")).not_to_contain_text("estimated")
    page.click("#recon-run")
    expect(page.locator("#recon-status")).to_contain_text("OK")
    expect(page.locator("#admin-reserves-empty")).to_be_visible()
    expect(page.locator("#chart-spend-kind")).to_be_visible()


def _admin_pages_runs(page, db_url: str, email: str, model: str) -> None:
    """A page at a time: 30 rows, then "Show more runs"."""
    from bayes_app.db import session_scope
    from bayes_app.models import User
    from bayes_app.runs import lifecycle

    with session_scope(db_url) as db:
        u = db.exec(select(User).where(User.email == email)).one()
        queued = [
            lifecycle.create_operation(db, u, "ask", f"Queued {i}", 1, model, input={"prompt": "q"}).id
            for i in range(30)
        ]
    page.click("#admin-refresh")
    page.click("#runs-user")
    page.get_by_role("option", name=email).click()
    expect(page.locator("#admin-runs .recent-run")).to_have_count(30)
    page.click("#runs-more")
    expect(page.locator("#admin-runs .recent-run")).to_have_count(31)
    expect(page.locator("#runs-more")).to_have_count(0)
    from bayes_app.db import get_engine

    for op in queued:  # settle them: the app stack is shared with other tests
        with session_scope(db_url) as db:
            lifecycle.request_cancel(db, op, lifecycle.USER_CANCEL)
        assert lifecycle.finalize(get_engine(db_url), op, lease_alive=lambda: False) == "finalized"
