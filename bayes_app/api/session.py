"""Browser sessions: sign in, create an account, sign out.

The session cookie is issued and cleared only here, by HTTP responses, so it is HttpOnly
(page script can never read it), SameSite=Lax, and Secure whenever the browser came over
HTTPS. The sign-in and sign-up pages post their forms here natively; a form post gets a
303 redirect (back to the form with an error code, or on to the app), a JSON post gets JSON.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from bayes_app.api import schemas
from bayes_app.api.deps import (
    FORM_MEDIA,
    REDIRECT,
    SESSION_COOKIE,
    Cookie,
    StrictJSONRoute,
    parse_json,
    read_by_hand,
)
from bayes_app.api.errors import ApiError
from bayes_app.api.security import is_https
from bayes_app.errors import DomainError
from bayes_app.settings import get_settings
from bayes_app.usecases import accounts
from bayes_app.usecases import schemas as R

router = APIRouter(route_class=StrictJSONRoute)


def client_address(request: Request) -> str:
    """The caller's address; X-Forwarded-For counts only when a trusted proxy sent it."""
    direct = request.client.host if request.client else "unknown"
    forwarded = request.headers.get("x-forwarded-for", "")
    if forwarded and direct in get_settings().trusted_proxies:
        return forwarded.split(",")[-1].strip() or direct
    return direct


def _new_session(user_id: str) -> str:
    return accounts.new_session(user_id)


def set_session_cookie(response: Response, request: Request, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=get_settings().session_ttl_hours * 3600,
        path="/",
        httponly=True,
        samesite="lax",
        secure=is_https(request.scope, get_settings().trusted_proxies),
    )


def clear_session_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(
        SESSION_COOKIE,
        path="/",
        httponly=True,
        samesite="lax",
        secure=is_https(request.scope, get_settings().trusted_proxies),
    )


async def _form(request: Request) -> tuple[dict[str, str], bool]:
    """The posted fields and whether the caller wants JSON back (else a redirect)."""
    ctype = request.headers.get("content-type", "")
    if ctype.startswith("application/json"):
        data = parse_json(await request.body())  # within the app's max_body_size (413)
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ApiError(400, "bad_request", "Send a JSON object of strings.")
        return data, True
    if ctype.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        try:
            form = await request.form(max_files=0, max_fields=10)
        except Exception:  # noqa: BLE001 - malformed bodies
            raise ApiError(400, "bad_request", "Malformed form body.") from None
        return {k: v for k, v in form.items() if isinstance(v, str)}, False
    raise ApiError(415, "unsupported_media_type", "Post a form or a JSON object.")


# The body is read on the event loop (an async dependency); the routes are plain `def`s, so
# FastAPI runs the password hashing and database work in its threadpool.
Posted = Annotated[tuple[dict[str, str], bool], Depends(_form)]


def _back(page: str, err: DomainError, **extra: str) -> RedirectResponse:
    query = {"error": err.code, **{k: v for k, v in extra.items() if v}}
    headers = getattr(err, "headers", None)
    if headers and "Retry-After" in headers:
        query["retry"] = headers["Retry-After"]
    return RedirectResponse(f"{page}?{urlencode(query)}", status_code=303)


@router.post(
    "/session/login",
    response_model=R.SessionUser,
    openapi_extra=read_by_hand(schemas.LoginForm, FORM_MEDIA),
    responses={303: REDIRECT},
    summary="Sign in (form or JSON: email, password); sets the session cookie",
)
def login(
    request: Request,
    posted: Posted,
    next: Annotated[str | None, Query(description="Form posts: the page to go to after signing in.")] = None,
) -> Response:
    raw, wants_json = posted
    fields = schemas.LoginForm.model_validate(raw)
    email, password = fields.email, fields.password
    target = accounts.safe_next(fields.next or next)
    try:
        info = accounts.sign_in(email, password, client_address(request))
    except DomainError as err:
        if wants_json:
            raise
        return _back("/login", err, email=email[:200], next=target if target != "/maps" else "")
    token = _new_session(info.id)
    body = R.SessionUser(user=info).model_dump()
    response: Response = JSONResponse(body) if wants_json else RedirectResponse(target, status_code=303)
    set_session_cookie(response, request, token)
    return response


@router.post(
    "/session/register",
    status_code=201,
    response_model=R.SessionUser,
    openapi_extra=read_by_hand(schemas.RegisterForm, FORM_MEDIA),
    responses={303: REDIRECT},
    summary="Create an account (form or JSON: email, password); sets the session cookie",
)
def register(request: Request, posted: Posted) -> Response:
    raw, wants_json = posted
    fields = schemas.RegisterForm.model_validate(raw)
    email, password = fields.email, fields.password
    try:
        if fields.confirm is not None and fields.confirm != password:
            raise ApiError(400, "passwords_differ", "The two passwords differ.")
        info = accounts.register(email, password)
    except DomainError as err:
        if wants_json:
            raise
        return _back("/register", err, email=email[:200])
    token = _new_session(info.id)
    response: Response = (
        JSONResponse(R.SessionUser(user=info).model_dump(), status_code=201)
        if wants_json
        else RedirectResponse("/maps", status_code=303)
    )
    set_session_cookie(response, request, token)
    return response


def _end(token: str | None) -> None:
    accounts.end_session(token)


@router.post(
    "/session/logout",
    status_code=204,
    response_class=Response,
    responses={303: REDIRECT},
    summary="Sign out (ends the session; JSON requests get 204, forms a redirect)",
)
def logout(request: Request, session: Cookie) -> Response:
    _end(session)
    wants_json = request.headers.get("content-type", "").startswith("application/json")
    response: Response = Response(status_code=204) if wants_json else RedirectResponse("/login", status_code=303)
    clear_session_cookie(response, request)
    return response


@router.post(
    "/session/password",
    response_model=R.Changed,
    openapi_extra=read_by_hand(schemas.PasswordForm, FORM_MEDIA),
    responses={303: REDIRECT},
    summary="Change the password (form or JSON: old_password, new_password); starts a new session",
)
def change_password(request: Request, session: Cookie, posted: Posted) -> Response:
    raw, wants_json = posted
    fields = schemas.PasswordForm.model_validate(raw)
    old, new = fields.old_password, fields.new_password
    try:
        if fields.confirm is not None and fields.confirm != new:
            raise ApiError(400, "passwords_differ", "The two new passwords differ.")
        token = accounts.change_password_in_session(session, old, new, client_address(request))
    except DomainError as err:
        if wants_json:
            raise
        return _back("/login" if err.status == 401 and err.code == "unauthorized" else "/account", err)
    response: Response = (
        JSONResponse({"changed": True})
        if wants_json
        else RedirectResponse("/account?notice=password_changed", status_code=303)
    )
    set_session_cookie(response, request, token)
    return response
