"""The HTTP API of the running app: token auth, error rules, health."""

from datetime import timedelta

import httpx
import pytest
from sqlmodel import select

from bayes_app.db import session_scope
from bayes_app.models import ApiToken, utcnow


@pytest.fixture
def api(app_stack):
    with httpx.Client(base_url=app_stack.url + "/api/v1", timeout=10) as c:
        yield c


def token_for(api, email, password) -> str:
    r = api.post("/auth/token", json={"email": email, "password": password})
    assert r.status_code == 201, r.text
    return r.json()["token"]


def assert_error(r: httpx.Response, status: int, code: str | None = None):
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["message"]
    if code:
        assert body["error"]["code"] == code


def test_health_ok_names_every_component(api, make_user):
    anonymous = api.get("/health")
    assert anonymous.status_code == 200
    assert anonymous.json() == {"status": "ok"}  # issue 24.8
    email, password = make_user()
    user = {"Authorization": f"Bearer {token_for(api, email, password)}"}
    assert api.get("/health", headers=user).json() == {"status": "ok"}
    email, password = make_user(is_admin=True)
    r = api.get("/health", headers={"Authorization": f"Bearer {token_for(api, email, password)}"})
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok"
    assert body["broken"] == []
    comps = body["components"]
    assert comps["database"]["status"] == "ok"
    assert comps["redis"]["status"] == "ok"
    assert comps["workers"]["status"] == "ok"
    assert comps["workers"]["count"] >= 1
    assert comps["processes"]["status"] == "ok"  # `make run`'s supervisor reports


def test_token_and_me(api, make_user):
    email, password = make_user()
    token = token_for(api, email, password)
    r = api.get("/me", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    me = r.json()
    assert me["email"] == email
    assert me["is_admin"] is False
    assert "password_hash" not in me
    assert "password" not in str(me)


def test_auth_errors(api, make_user):
    email, password = make_user()
    assert_error(api.post("/auth/token", json={"email": email, "password": "wrong-one-99"}), 401, "invalid_credentials")
    assert_error(
        api.post("/auth/token", json={"email": "ghost@example.com", "password": "x"}), 401, "invalid_credentials"
    )
    assert_error(api.post("/auth/token", json={"email": email}), 400, "missing_fields")
    assert_error(api.post("/auth/token", content=b"{not json"), 400, "bad_json")
    assert_error(api.post("/auth/token", content=b"[1, 2]"), 400, "bad_json")
    assert_error(api.get("/me"), 401)
    assert_error(api.get("/me", headers={"Authorization": "Bearer bat_nonsense"}), 401, "invalid_token")
    assert_error(api.get("/me", headers={"Authorization": "Basic abc"}), 401)


def test_unknown_route_and_method(api):
    assert_error(api.get("/no/such/route"), 404, "not_found")
    assert_error(api.put("/health"), 405)


def test_revoked_token_is_refused(api, make_user):
    email, password = make_user()
    token = token_for(api, email, password)
    h = {"Authorization": f"Bearer {token}"}
    assert api.get("/me", headers=h).status_code == 200
    assert api.delete("/auth/token", headers=h).status_code == 204
    assert_error(api.get("/me", headers=h), 401, "invalid_token")


def test_expired_token_is_refused(api, make_user, app_db_url):
    email, password = make_user()
    token = token_for(api, email, password)
    with session_scope(app_db_url) as s:
        for row in s.exec(select(ApiToken)):
            row.expires_at = utcnow() - timedelta(seconds=1)
            s.add(row)
    assert_error(api.get("/me", headers={"Authorization": f"Bearer {token}"}), 401, "invalid_token")


def test_token_list_and_revoking_another_users_token_is_not_found(api, make_user):
    a_email, a_pw = make_user()
    b_email, b_pw = make_user()
    a_tok = token_for(api, a_email, a_pw)
    a2_tok = token_for(api, a_email, a_pw)
    b_tok = token_for(api, b_email, b_pw)
    a_list = api.get("/auth/tokens", headers={"Authorization": f"Bearer {a_tok}"}).json()["tokens"]
    assert len(a_list) == 2
    assert sum(t["current"] for t in a_list) == 1
    a_other = next(t["id"] for t in a_list if not t["current"])
    # B tries to revoke A's token: 404, and A's token keeps working.
    assert_error(api.delete(f"/auth/tokens/{a_other}", headers={"Authorization": f"Bearer {b_tok}"}), 404, "not_found")
    assert api.get("/me", headers={"Authorization": f"Bearer {a2_tok}"}).status_code == 200
    # A revokes their other token by id.
    assert api.delete(f"/auth/tokens/{a_other}", headers={"Authorization": f"Bearer {a_tok}"}).status_code == 204
    assert api.get("/me", headers={"Authorization": f"Bearer {a2_tok}"}).status_code == 401


def test_session_cookie_is_not_accepted_by_bearer_routes(api, make_user, app_db_url):
    """Browser session cookies only work on routes that opt in (CSRF safety)."""
    from bayes_app.accounts import service
    from bayes_app.models import User

    email, _ = make_user()
    with session_scope(app_db_url) as s:
        user = s.exec(select(User).where(User.email == email)).one()
        cookie = service.create_session(s, user, timedelta(hours=1))
    assert_error(api.get("/me", cookies={"bayes_session": cookie}), 401)
