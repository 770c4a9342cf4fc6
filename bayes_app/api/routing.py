"""Declaring the API's operations: one `Op` per method and path, turned into FastAPI routes
that document themselves in the OpenAPI document.

The handlers stay plain `async def handler(request) -> Response`: they read bodies with the
strict JSON reader (`deps.read_model`) and answer with the response they build, so FastAPI
neither parses nor re-serialises anything. What FastAPI gets from an `Op` is the contract —
the request body model, the response model and status, path parameters, whether it needs
credentials — for `/api/v1/openapi.json` and `/api/v1/docs`.

With `BAYES_API_CHECK_RESPONSES=1` (the test suite sets it) every JSON success response is
validated against its operation's response model, so the document cannot drift from what
the API answers: a mismatch is a 500 and a log line naming the operation.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi.routing import APIRoute
from pydantic import BaseModel, TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.api.responses import ErrorOut
from bayes_app.settings import get_settings

log = logging.getLogger("bayes.api")
Handler = Callable[[Request], Awaitable[Response]]
_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")
SECURITY = [{"bearer": []}, {"session": []}]


@dataclass(frozen=True)
class Op:
    """One operation: `method path` (relative to /api/v1) served by `handler`."""

    method: str
    path: str
    handler: Handler
    summary: str
    response: Any = None  # the JSON body's model (None: no JSON body)
    status: int = 200
    body: type[BaseModel] | None = None  # the JSON request body's model
    public: bool = False  # True: no credentials needed
    media: str | None = None  # the success body's media type when it is not JSON
    form: bool = False  # multipart/form-data upload (`file`)

    @property
    def methods(self) -> set[str]:
        return {self.method}


def op(method: str, path: str, handler: Handler, summary: str, response: Any = None, **kw: Any) -> Op:
    return Op(method, path, handler, summary, response, **kw)


def _checked(o: Op, adapter: TypeAdapter | None) -> Handler:
    """`o.handler`, validating its JSON success bodies with `adapter` when one is given."""
    name = f"{o.method} {o.path}"

    async def handler(request: Request) -> Response:
        response = await o.handler(request)
        if adapter is not None and isinstance(response, JSONResponse) and 200 <= response.status_code < 300:
            try:
                adapter.validate_json(bytes(response.body))
            except ValidationError as err:
                log.error("response of %s does not match its documented model: %s", name, err)
                return JSONResponse({"error": {"code": "internal_error",
                                               "message": f"Undocumented response shape from {name}."}},
                                    status_code=500)
        return response

    handler.__name__ = o.handler.__name__
    handler.__doc__ = o.handler.__doc__
    return handler


def _extra(o: Op) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    params = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
              for n in _PARAM.findall(o.path)]
    if params:
        extra["parameters"] = params
    if o.body is not None:
        extra["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": {"$ref": f"#/components/schemas/{o.body.__name__}"}}}}
    elif o.form:
        extra["requestBody"] = {"required": True, "content": {"multipart/form-data": {"schema": {
            "type": "object", "required": ["file"],
            "properties": {"file": {"type": "string", "format": "binary"}}}}}}
    if not o.public:
        extra["security"] = SECURITY
    return extra


def api_route(o: Op, prefix: str, tag: str) -> APIRoute:
    """The FastAPI route of `o` under `prefix`, documented under `tag`."""
    responses: dict[int | str, dict[str, Any]] = {"4XX": {"model": ErrorOut, "description": "Refused"}}
    if o.media is not None:
        responses[o.status] = {"content": {o.media: {}}, "description": "Success"}
    elif o.response is None:
        responses[o.status] = {"description": "Success (no body)" if o.status == 204 else "Success"}
    # checked only when the setting is on (read once, as the route is built): no cost otherwise
    check = o.response is not None and o.media is None and get_settings().api_check_responses
    adapter = TypeAdapter(o.response) if check else None
    return APIRoute(prefix + o.path, _checked(o, adapter), methods=[o.method],
                    response_model=o.response if o.media is None else None, status_code=o.status,
                    summary=o.summary, description=o.handler.__doc__ or "", tags=[tag],
                    openapi_extra=_extra(o), responses=responses, response_class=JSONResponse,
                    operation_id=o.method.lower() + re.sub(r"[^A-Za-z0-9]+", "_", _PARAM.sub(r"\1", o.path)).rstrip("_"))
