"""Credit routes: the user's balance and history; admin grants, prices, reconciliation."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_admin, require_user
from bayes_app.api import responses as R
from bayes_app.api.routing import op
from bayes_app.api.errors import ApiError
from bayes_app.app import credits
from bayes_app.models import MICRO, ModelPrice


async def my_credits(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await run_in_threadpool(credits.my_credits, user.id))


def _grant(body: dict[str, Any], admin_email: str) -> dict[str, Any]:
    amount = body.get("amount_micro")
    if amount is None and isinstance(body.get("credits"), (int, float)) and not isinstance(body.get("credits"), bool):
        amount = round(body["credits"] * MICRO)
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise ApiError(400, "bad_amount", "Give 'credits' (a number > 0) or 'amount_micro' (an integer > 0).")
    key = str(body.get("key") or f"grant:{uuid.uuid4().hex}")
    note = body.get("note") or f"Granted by {admin_email}"
    user_id = body["user_id"] if isinstance(body.get("user_id"), str) else None
    email = body["email"] if user_id is None and isinstance(body.get("email"), str) else None
    g = credits.grant(amount, key, note, user_id=user_id, email=email)
    return {"user_id": g.user_id, "amount_micro": amount, "created": g.created, "balance": g.balance,
            "available": g.available}


async def grant(request: Request) -> Response:
    admin = await require_admin(request)
    body = (await read_model(request, schemas.Grant)).given()
    return JSONResponse(await run_in_threadpool(_grant, body, admin.email), status_code=201)


def _price_json(p: ModelPrice) -> dict[str, Any]:
    return {"model": p.model, **{f: getattr(p, f) for f in credits.PRICE_FIELDS},
            "updated_at": p.updated_at.isoformat() if p.updated_at else None, "updated_by": p.updated_by}


async def list_prices(request: Request) -> Response:
    await require_admin(request)
    return JSONResponse({"prices": [_price_json(p) for p in await run_in_threadpool(credits.prices)]})


async def get_price(request: Request) -> Response:
    await require_admin(request)
    return JSONResponse(_price_json(await run_in_threadpool(credits.price, request.path_params["model"])))


async def put_price(request: Request) -> Response:
    admin = await require_admin(request)
    body = (await read_model(request, schemas.PriceBody)).given()
    p = await run_in_threadpool(credits.set_price, request.path_params["model"],
                                [body.get(f) for f in credits.PRICE_FIELDS], admin.email)
    return JSONResponse(_price_json(p))


async def reconciliation(request: Request) -> Response:
    await require_admin(request)
    return JSONResponse((await run_in_threadpool(credits.reconciliation)).to_json())


routes = [
    op("GET", "/credits", my_credits, "The user's balance, held credits and history (micro-credits)", R.MyCredits),
    op("POST", "/admin/credits/grant", grant, "Grant credits to a user (admin; idempotent per key)", R.Granted, status=201, body=schemas.Grant),
    op("GET", "/admin/credits/reconciliation", reconciliation, "Check that every settled run charged exactly its usage (admin)", R.Reconciliation),
    op("GET", "/admin/prices", list_prices, "The model price table (admin)", R.PriceList),
    op("GET", "/admin/prices/{model:path}", get_price, "One model's prices (admin)", R.PriceOut),
    op("PUT", "/admin/prices/{model:path}", put_price, "Set a model's prices per million tokens (admin)", R.PriceOut, body=schemas.PriceBody),
]
