"""Conversation routes: list, read (with messages), rename / pin, delete.

Questions are asked through `POST /runs` (`conversation_id`, `edit_message_id`)."""

from __future__ import annotations


from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_user
from bayes_app.api import responses as R
from bayes_app.api.routing import op
from bayes_app.api.errors import not_found
from bayes_app.app import conversations as app_conversations


async def list_conversations(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await run_in_threadpool(app_conversations.listing, user.id))


async def get_conversation(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await run_in_threadpool(app_conversations.detail, user.id, request.path_params["conversation_id"]))


async def patch_conversation(request: Request) -> Response:
    user = await require_user(request)
    body = (await read_model(request, schemas.ConversationPatch)).given()
    return JSONResponse(await run_in_threadpool(app_conversations.patch, user.id, request.path_params["conversation_id"], body))


async def switch_version(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await run_in_threadpool(app_conversations.switch_version, user.id,
                                                request.path_params["conversation_id"]))


async def delete_conversation(request: Request) -> Response:
    user = await require_user(request)
    if not await run_in_threadpool(app_conversations.delete_conversation, user.id, request.path_params["conversation_id"]):
        raise not_found("conversation")
    return Response(status_code=204)


routes = [
    op("GET", "/conversations", list_conversations, "List conversations, newest first", R.ConversationList),
    op("GET", "/conversations/{conversation_id}", get_conversation, "A conversation with its messages and active runs", R.ConversationDetail),
    op("PATCH", "/conversations/{conversation_id}", patch_conversation, "Rename a conversation or pin it to documents/collections (scope)", R.ConversationOut, body=schemas.ConversationPatch),
    op("POST", "/conversations/{conversation_id}/switch-version", switch_version, "Show the exchanges the last edit of a question put aside instead of the ones since (again: back)", R.ConversationDetail),
    op("DELETE", "/conversations/{conversation_id}", delete_conversation, "Delete a conversation (its running answers are stopped)", status=204),
]
