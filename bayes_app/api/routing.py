"""Declaring the API's operations: one `Op` per method and path, turned into FastAPI routes
that document themselves in the OpenAPI document.

The handlers stay plain `async def handler(request) -> Response`: they read bodies with the
strict JSON reader (`deps.read_model`) and answer with the response they build, so FastAPI
neither parses nor re-serialises anything. What FastAPI gets from an `Op` is the contract —
the request body model and its media types, the query and header parameters (a model whose
fields are the parameters), the response models per status, non-JSON media types, path
parameters and whether it needs credentials — for `/api/v1/openapi.json` and `/api/v1/docs`.

With `BAYES_API_CHECK_RESPONSES=1` (the test suite sets it) every JSON response with a
documented model is validated against the model of its status, so the document cannot drift
from what the API answers: a mismatch is a 500 and a log line naming the operation.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
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
JSON = "application/json"
FORM_MEDIA = ("application/json", "application/x-www-form-urlencoded", "multipart/form-data")
_TEXT = ("text/", "application/x-bibtex", "application/x-ndjson")
REDIRECT = {"description": "Form posts (not JSON) are answered with a redirect to the page to show next",
            "headers": {"Location": {"schema": {"type": "string"}}}}


@dataclass(frozen=True)
class Op:
    """One operation: `method path` (relative to /api/v1) served by `handler`."""

    method: str
    path: str
    handler: Handler
    summary: str
    response: Any = None  # the JSON body's model at `status` (None: no JSON body)
    status: int = 200
    body: type[BaseModel] | None = None  # the request body's model
    body_media: tuple[str, ...] = (JSON,)  # the media types the body may be sent as
    query: type[BaseModel] | None = None  # query (and header) parameters, one field each
    public: bool = False  # True: no credentials needed
    media: tuple[str, ...] = ()  # the success body's media types when not (only) JSON
    also: dict[int, Any] = field(default_factory=dict)  # other answers: status -> model, None or a spec

    @property
    def methods(self) -> set[str]:
        return {self.method}

    def models(self) -> dict[int, Any]:
        """The JSON body model of each documented status that has one."""
        found = {self.status: self.response} | self.also
        return {s: m for s, m in found.items() if m is not None and not isinstance(m, dict)}


def op(method: str, path: str, handler: Handler, summary: str, response: Any = None, **kw: Any) -> Op:
    if isinstance(kw.get("media"), str):
        kw["media"] = (kw["media"],)
    return Op(method, path, handler, summary, response, **kw)


def _checked(o: Op) -> Handler:
    """`o.handler`, validating its JSON bodies against the model of their status (module doc)
    when the setting is on; read once, as the route is built: no cost otherwise."""
    if not get_settings().api_check_responses:
        return o.handler
    name = f"{o.method} {o.path}"
    adapters = {status: TypeAdapter(model) for status, model in o.models().items()}

    async def handler(request: Request) -> Response:
        response = await o.handler(request)
        adapter = adapters.get(response.status_code)
        if isinstance(response, JSONResponse) and adapter is not None:
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


def parameters(o: Op) -> list[dict[str, Any]]:
    """The OpenAPI parameters of `o`: its path parameters, then the fields of its query model
    (a field marked `json_schema_extra={"in": "header"}` is a header, named by its alias)."""
    params = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
              for n in _PARAM.findall(o.path)]
    if o.query is not None:
        props = o.query.model_json_schema(by_alias=True)["properties"]
        for name, info in o.query.model_fields.items():
            where = (info.json_schema_extra or {}).get("in", "query") if isinstance(info.json_schema_extra, dict) else "query"
            key = info.alias or name
            schema = {k: v for k, v in props[key].items() if k not in ("in", "description", "title")}
            present = [s for s in schema.pop("anyOf", []) if s.get("type") != "null"]  # no null in a URL
            if len(present) == 1:
                schema.update(present[0])
            elif present:
                schema["anyOf"] = present
            params.append({"name": key, "in": where, "required": info.is_required(), "schema": schema,
                           "description": info.description or ""})
    return params


def _extra(o: Op) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    params = parameters(o)
    if params:
        extra["parameters"] = params
    if o.body is not None:
        ref = {"$ref": f"#/components/schemas/{o.body.__name__}"}
        extra["requestBody"] = {"required": True, "content": {m: {"schema": ref} for m in o.body_media}}
    if not o.public:
        extra["security"] = SECURITY
    return extra


def _responses(o: Op) -> dict[int | str, dict[str, Any]]:
    responses: dict[int | str, dict[str, Any]] = {
        "4XX": {"model": ErrorOut, "description": "Refused (the error says why)"},
        "5XX": {"model": ErrorOut, "description": "Failed on our side, or a service is unavailable"},
    }
    if o.media:
        content = {m: {"schema": {"type": "string"} if m.startswith(_TEXT) else {"type": "string", "format": "binary"}}
                   for m in o.media if m != JSON}
        responses[o.status] = {"content": content, "description": "Success"}
        if o.response is not None:  # FastAPI adds its JSON schema beside the other media types
            responses[o.status]["model"] = o.response
    elif o.response is None:
        responses[o.status] = {"description": "Success (no body)" if o.status == 204 else "Success"}
    for status, answer in o.also.items():
        if isinstance(answer, dict):
            responses[status] = answer
        elif answer is None:
            responses[status] = {"description": "Success (no body)"}
        else:
            responses[status] = {"model": answer, "description": "Success" if status < 300 else "See the body"}
    return responses


def api_route(o: Op, prefix: str, tag: str) -> APIRoute:
    """The FastAPI route of `o` under `prefix`, documented under `tag`."""
    return APIRoute(prefix + o.path, _checked(o), methods=[o.method],
                    response_model=o.response if not o.media else None, status_code=o.status,
                    summary=o.summary, description=o.handler.__doc__ or "", tags=[tag],
                    openapi_extra=_extra(o), responses=_responses(o),
                    response_class=Response if o.media else JSONResponse,
                    operation_id=o.method.lower() + re.sub(r"[^A-Za-z0-9]+", "_", _PARAM.sub(r"\1", o.path)).rstrip("_"))
