"""What every route shares: the strict JSON body reader (`StrictJSONRoute`, the routers'
route class), and the caller as a dependency (`CurrentUser`, `CookieUser`, `AdminUser`)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends
from fastapi.routing import APIRoute
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from bayes_app.api.errors import ApiError
from bayes_app.settings import get_settings
from bayes_app.usecases import accounts
from bayes_app.usecases.schemas.accounts import UserOut

SESSION_COOKIE = "bayes_session"
MAX_JSON_BYTES = 1_000_000  # every request body (FastAPI's max_body_size, build_api) but uploads'
MULTIPART_SLACK = 64 * 1024  # boundaries and part headers around an uploaded file
MAX_JSON_DEPTH = 32
MAX_SAFE_INT = 2**53 - 1  # I-JSON (RFC 7493): integers every client can represent exactly


class _BadValue(ValueError):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadValue("Numbers must be finite (no Infinity, NaN or overflowing exponents).")
    return value


def _no_constants(name: str) -> float:
    raise _BadValue(f"{name} is not allowed; numbers must be finite.")


def _check(value: Any, depth: int = 0) -> None:
    if depth > MAX_JSON_DEPTH:
        raise _BadValue("The JSON is nested too deeply.")
    if isinstance(value, str | int):
        _check_scalar(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check(k, depth + 1)
            _check(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check(v, depth + 1)


def _check_scalar(value: str | int) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _BadValue("Text must be valid Unicode (no unpaired surrogates such as \\ud800).") from None
    elif not isinstance(value, bool) and abs(value) > MAX_SAFE_INT:
        raise _BadValue(f"Whole numbers must lie within ±{MAX_SAFE_INT}.")


def parse_json(body: bytes) -> Any:
    """Strict JSON: finite numbers in the safe range, valid Unicode, bounded nesting; else 400."""
    try:
        data = json.loads(body or b"", parse_float=_finite, parse_constant=_no_constants)
        _check(data)
    except _BadValue as err:
        raise ApiError(400, "bad_json", str(err)) from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ApiError(400, "bad_json", "Request body is not valid JSON.") from None
    return data


def upload_limit() -> int:
    """The body limit of a PDF upload (the API's upload routes and the pages' `/_upload`)."""
    return (get_settings().max_upload_mb << 20) + MULTIPART_SLACK


def _resolve(bearer: str | None, cookie: str | None) -> tuple[UserOut, str | None] | None:
    if bearer:
        return accounts.token_user(bearer)
    user = accounts.session_user(cookie)
    return (user, None) if user else None


_bearer = HTTPBearer(scheme_name="bearer", auto_error=False, description="An API token from POST /auth/token.")
_session = APIKeyCookie(
    name=SESSION_COOKIE,
    scheme_name="session",
    auto_error=False,
    description="The browser session (state-changing requests must come from this origin).",
)
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
Cookie = Annotated[str | None, Depends(_session)]


def _caller(request: Request, bearer: HTTPAuthorizationCredentials | None, cookie: str | None) -> UserOut:
    """The user of the credentials the security schemes read (401 without valid ones)."""
    token = bearer.credentials.strip() if bearer else ""
    if not token and not cookie:
        raise ApiError(
            401,
            "unauthorized",
            "Missing credentials: send 'Authorization: Bearer <token>'.",
            {"WWW-Authenticate": "Bearer"},
        )
    found = _resolve(token or None, None if token else cookie)
    if found is None:
        raise ApiError(
            401,
            "invalid_token",
            "The token is invalid, expired or revoked.",
            {"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    request.state.token_id = found[1]
    return found[0]


def current_user(request: Request, bearer: Bearer, _cookie: Cookie) -> UserOut:
    """The caller, by `Authorization: Bearer` only (401 otherwise)."""
    return _caller(request, bearer, None)


def cookie_user(request: Request, bearer: Bearer, cookie: Cookie) -> UserOut:
    """The caller, by bearer token or the browser session cookie (read-only routes)."""
    return _caller(request, bearer, cookie)


def optional_user(request: Request) -> UserOut | None:
    """The caller by bearer token or session cookie, for the public health route (which declares
    no security scheme); None when neither is valid, or the database is down."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    bearer = token.strip() if scheme.lower() == "bearer" and token.strip() else None
    cookie = None if bearer else request.cookies.get(SESSION_COOKIE)
    if not bearer and not cookie:
        return None
    try:
        found = _resolve(bearer, cookie)
    except Exception:  # noqa: BLE001 - health must still answer
        return None
    return found[0] if found else None


def admin_user(user: Annotated[UserOut, Depends(current_user)]) -> UserOut:
    """The caller, who must be an administrator (403 otherwise)."""
    if not user.is_admin:
        raise ApiError(403, "forbidden", "Administrators only.")
    return user


def token_id(request: Request, _user: Annotated[UserOut, Depends(current_user)]) -> str | None:
    """The id of the API token the caller authenticated with (None for a session)."""
    return getattr(request.state, "token_id", None)


CurrentUser = Annotated[UserOut, Depends(current_user)]
CookieUser = Annotated[UserOut, Depends(cookie_user)]
AdminUser = Annotated[UserOut, Depends(admin_user)]
TokenId = Annotated[str | None, Depends(token_id)]


class StrictJSONRoute(APIRoute):
    """The routers' route class: a JSON request body (within FastAPI's max_body_size: 413) is
    parsed by the strict reader (`parse_json`: 400 bad_json) before FastAPI validates it
    against the handler's body model; FastAPI then reuses the parsed value."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        field = self.body_field
        if field is None or getattr(field.field_info, "media_type", "application/json") != "application/json":
            return handler

        optional = not field.field_info.is_required()

        async def strict(request: Request) -> Response:
            request._body = await request.body()  # within the route's max_body_size (else 413)
            if optional and not request._body.strip():
                return await handler(request)  # no body where the model has a default: the default
            data = parse_json(request._body)
            if not isinstance(data, dict):
                raise ApiError(400, "bad_json", "Request body must be a JSON object.")
            request._json = data  # Starlette's cache: FastAPI's `request.json()` returns it
            return await handler(request)

        return strict


# ---- documenting what FastAPI does not read itself --------------------------------------------
FORM_MEDIA = ("application/json", "application/x-www-form-urlencoded", "multipart/form-data")
MULTIPART = ("multipart/form-data",)
REDIRECT = {
    "description": "Form posts (not JSON) are answered with a redirect to the page to show next",
    "headers": {"Location": {"schema": {"type": "string"}}},
}
_TEXT = ("text/", "application/x-bibtex", "application/x-ndjson")
_HAND_READ: set[type[BaseModel]] = set()


def read_by_hand(model: type[BaseModel], media: tuple[str, ...]) -> dict[str, Any]:
    """`openapi_extra` for a body the handler reads itself (a form or JSON; a bounded
    multipart upload), documented by `model` under each media type."""
    _HAND_READ.add(model)
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {m: {"schema": ref} for m in media}}}


def documented_bodies() -> set[type[BaseModel]]:
    """The models named by `read_by_hand` (build_api adds their schemas to the document)."""
    return set(_HAND_READ)


def media(*types: str, description: str = "Success") -> dict[str, Any]:
    """A `responses` entry for a success answered in non-JSON media types."""
    content = {
        m: {"schema": {"type": "string"} if m.startswith(_TEXT) else {"type": "string", "format": "binary"}}
        for m in types
    }
    return {"content": content, "description": description}
