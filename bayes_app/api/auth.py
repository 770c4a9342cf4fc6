"""Token routes: issue, list and revoke API tokens."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from bayes_app.api import schemas
from bayes_app.api.deps import CurrentUser, StrictJSONRoute, TokenId
from bayes_app.api.session import client_address
from bayes_app.usecases import accounts
from bayes_app.usecases import schemas as R
from bayes_app.usecases.schemas.accounts import IssuedToken

router = APIRouter(route_class=StrictJSONRoute)


@router.post(
    "/auth/token",
    status_code=201,
    response_model=R.TokenIssued,
    summary="Issue an API token (email, password, optional name); the token is shown once",
)
def issue_token(request: Request, body: schemas.TokenRequest) -> IssuedToken:
    info = accounts.sign_in(body.email, body.password, client_address(request))
    return accounts.create_token(info.id, body.name or "api")


@router.get("/auth/tokens", response_model=R.TokenList, summary="List the user's API tokens")
def list_tokens(user: CurrentUser, current: TokenId) -> dict[str, Any]:
    rows = accounts.tokens(user.id)
    return {"tokens": [R.TokenRow(**t.model_dump(), current=t.id == current) for t in rows]}


@router.delete(
    "/auth/token",
    status_code=204,
    response_class=Response,
    summary="Revoke an API token (the one used, or the one named by id)",
)
def revoke_current_token(user: CurrentUser, current: TokenId) -> Response:
    """DELETE /auth/token revokes the calling token; /auth/tokens/{id} revokes another one."""
    accounts.revoke_token(user.id, current)
    return Response(status_code=204)


@router.delete(
    "/auth/tokens/{token_id}",
    status_code=204,
    response_class=Response,
    summary="Revoke an API token (the one used, or the one named by id)",
)
def revoke_token(user: CurrentUser, token_id: str) -> Response:
    """DELETE /auth/token revokes the calling token; /auth/tokens/{id} revokes another one."""
    accounts.revoke_token(user.id, token_id)
    return Response(status_code=204)
