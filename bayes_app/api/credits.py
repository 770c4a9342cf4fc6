"""Credit routes: the user's balance and history; admin grants, prices, reconciliation."""

from __future__ import annotations

import uuid
from typing import Any

from sqlmodel import select
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_admin, require_user
from bayes_app.api.errors import ApiError, not_found
from bayes_app.credits import ledger, pricing
from bayes_app.credits.reconcile import reconcile
from bayes_app.db import session_scope
from bayes_app.models import MICRO, ModelPrice, User

PRICE_FIELDS = ("input_per_million", "cached_per_million", "output_per_million")


def _credits(user_id: str) -> dict[str, Any]:
    with session_scope() as db:
        bal, held = ledger.balance(db, user_id), ledger.held(db, user_id)
        return {"balance": bal, "held": held, "available": bal - held, "unit": "micro-credits",
                "history": [h.to_json() for h in ledger.history(db, user_id)]}


async def my_credits(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await run_in_threadpool(_credits, user.id))


def _grant(body: dict[str, Any], admin_email: str) -> dict[str, Any]:
    amount = body.get("amount_micro")
    if amount is None and isinstance(body.get("credits"), (int, float)) and not isinstance(body.get("credits"), bool):
        amount = round(body["credits"] * MICRO)
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise ApiError(400, "bad_amount", "Give 'credits' (a number > 0) or 'amount_micro' (an integer > 0).")
    key = body.get("key") or f"grant:{uuid.uuid4().hex}"
    with session_scope() as db:
        user = None
        if isinstance(body.get("user_id"), str):
            user = db.get(User, body["user_id"])
        elif isinstance(body.get("email"), str):
            user = db.exec(select(User).where(User.email == body["email"].strip().lower())).first()
        if user is None:
            raise not_found("user")
        created = ledger.grant(db, user, amount, str(key), body.get("note") or f"Granted by {admin_email}")
        db.commit()
        return {"user_id": user.id, "amount_micro": amount, "created": created,
                "balance": ledger.balance(db, user.id), "available": ledger.available(db, user.id)}


async def grant(request: Request) -> Response:
    admin = await require_admin(request)
    body = (await read_model(request, schemas.Grant)).given()
    return JSONResponse(await run_in_threadpool(_grant, body, admin.email), status_code=201)


def _price_json(p: ModelPrice) -> dict[str, Any]:
    return {"model": p.model, **{f: getattr(p, f) for f in PRICE_FIELDS},
            "updated_at": p.updated_at.isoformat() if p.updated_at else None, "updated_by": p.updated_by}


def _prices() -> list[dict[str, Any]]:
    with session_scope() as db:
        return [_price_json(p) for p in pricing.list_prices(db)]


def _price(model: str) -> dict[str, Any]:
    with session_scope() as db:
        try:
            return _price_json(pricing.get_price(db, model))
        except pricing.PriceMissing:
            raise not_found("price") from None


def _set_price(model: str, body: dict[str, Any], admin_email: str) -> dict[str, Any]:
    values = [body.get(f) for f in PRICE_FIELDS]
    with session_scope() as db:
        try:
            p = pricing.set_price(db, model, *values, updated_by=admin_email)  # type: ignore[arg-type]
        except ValueError as err:
            raise ApiError(400, "bad_price", f"{err}; fields: {', '.join(PRICE_FIELDS)}.") from None
        db.add(p)
        db.commit()
        return _price_json(p)


async def list_prices(request: Request) -> Response:
    await require_admin(request)
    return JSONResponse({"prices": await run_in_threadpool(_prices)})


async def get_price(request: Request) -> Response:
    await require_admin(request)
    return JSONResponse(await run_in_threadpool(_price, request.path_params["model"]))


async def put_price(request: Request) -> Response:
    admin = await require_admin(request)
    body = (await read_model(request, schemas.PriceBody)).given()
    return JSONResponse(await run_in_threadpool(_set_price, request.path_params["model"], body, admin.email))


def _reconciliation() -> dict[str, Any]:
    from bayes_app.runs.control import LEASE_MS

    with session_scope() as db:
        return reconcile(db, stale_after_s=5 + LEASE_MS / 1000 + 30).to_json()


async def reconciliation(request: Request) -> Response:
    await require_admin(request)
    return JSONResponse(await run_in_threadpool(_reconciliation))


routes = [
    Route("/credits", my_credits, methods=["GET"]),
    Route("/admin/credits/grant", grant, methods=["POST"]),
    Route("/admin/credits/reconciliation", reconciliation, methods=["GET"]),
    Route("/admin/prices", list_prices, methods=["GET"]),
    Route("/admin/prices/{model:path}", get_price, methods=["GET"]),
    Route("/admin/prices/{model:path}", put_price, methods=["PUT"]),
]
