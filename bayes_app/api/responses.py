"""The HTTP-only response bodies: the error envelope. Every success body is the application
layer's own return type (`bayes_app.usecases.schemas`)."""

from __future__ import annotations

from pydantic import BaseModel

from bayes_app.usecases.schemas.common import ErrorDetail


class ErrorOut(BaseModel):
    """Every refusal: `{"error": {"code", "message"}}` with a 4xx/5xx status."""

    error: ErrorDetail
