"""Credit routes: the user's balance and history; admin grants, prices, reconciliation."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from bayes_app.api import schemas
from bayes_app.api.deps import AdminUser, CurrentUser, StrictJSONRoute
from bayes_app.usecases import credits
from bayes_app.usecases import schemas as R

router = APIRouter(route_class=StrictJSONRoute)


@router.get(
    "/credits", response_model=R.MyCredits, summary="The user's balance, held credits and history (micro-credits)"
)
def my_credits(user: CurrentUser) -> Any:
    return credits.my_credits(user.id)


def _grant(admin_email: str, body: schemas.Grant) -> dict[str, Any]:
    amount, g = credits.grant_by_admin(admin_email, **body.given())
    return {
        "user_id": g.user_id,
        "amount_micro": amount,
        "created": g.created,
        "balance": g.balance,
        "available": g.available,
    }


@router.post(
    "/admin/credits/grant",
    status_code=201,
    response_model=R.Granted,
    summary="Grant credits to a user (admin; idempotent per key)",
)
def grant(admin: AdminUser, body: schemas.Grant) -> Any:
    return _grant(admin.email, body)


@router.get(
    "/admin/credits/reconciliation",
    response_model=R.Reconciliation,
    summary="Check that every settled run charged exactly its usage (admin)",
)
def reconciliation(_admin: AdminUser) -> Any:
    return credits.reconciliation()


@router.get("/admin/prices", response_model=R.PriceList, summary="The model price table (admin)")
def list_prices(_admin: AdminUser) -> Any:
    return {"prices": credits.prices()}


@router.get("/admin/prices/{model:path}", response_model=R.PriceOut, summary="One model's prices (admin)")
def get_price(_admin: AdminUser, model: str) -> Any:
    return credits.price(model)


@router.put(
    "/admin/prices/{model:path}", response_model=R.PriceOut, summary="Set a model's prices per million tokens (admin)"
)
def put_price(admin: AdminUser, model: str, body: schemas.PriceBody) -> Any:
    given = body.given()
    return credits.set_price(model, [given.get(f) for f in credits.PRICE_FIELDS], admin.email)
