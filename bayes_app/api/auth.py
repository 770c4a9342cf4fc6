"""Token routes: issue, list and revoke API tokens."""

from __future__ import annotations


from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.app import accounts
from bayes_app.api import schemas
from bayes_app.api import responses as R
from bayes_app.api.routing import op
from bayes_app.api.deps import read_model, require_user
from bayes_app.api.session import client_address, throttled_authenticate


async def issue_token(request: Request) -> Response:
    body = await read_model(request, schemas.TokenRequest)
    info = await run_in_threadpool(throttled_authenticate, body.email, body.password,
                                   client_address(request))

    def work() -> dict:
        row, token = accounts.create_token(info.id, body.name or "api")
        return {"token": token, "id": row.id, "expires_at": row.expires_at.isoformat()}

    return JSONResponse(await run_in_threadpool(work), status_code=201)


async def list_tokens(request: Request) -> Response:
    user = await require_user(request)

    def work() -> list[dict]:
        return [
            {"id": t.id, "name": t.name, "created_at": t.created_at.isoformat(),
             "expires_at": t.expires_at.isoformat(),
             "revoked": t.revoked_at is not None,
             "current": t.id == request.state.token_id}
            for t in accounts.tokens(user.id)
        ]

    return JSONResponse({"tokens": await run_in_threadpool(work)})


async def revoke_token(request: Request) -> Response:
    """DELETE /auth/token revokes the calling token; /auth/tokens/{id} revokes another one."""
    user = await require_user(request)
    token_id = request.path_params.get("token_id") or request.state.token_id

    await run_in_threadpool(accounts.revoke_token, user.id, token_id)
    return Response(status_code=204)


routes = [
    op("POST", "/auth/token", issue_token, "Issue an API token (email, password, optional name); the token is shown once", R.TokenIssued, public=True, status=201, body=schemas.TokenRequest),
    op("DELETE", "/auth/token", revoke_token, "Revoke an API token (the one used, or the one named by id)", status=204),
    op("GET", "/auth/tokens", list_tokens, "List the user's API tokens", R.TokenList),
    op("DELETE", "/auth/tokens/{token_id}", revoke_token, "Revoke an API token (the one used, or the one named by id)", status=204),
]
